//! InfoStream (the news-stream paper): the 12 heaviest stemmed mid-frequency terms; two documents
//! are duplicates when at least `agree` (default 6) of them coincide.

use super::stats::{long_words, term_counts, term_hash, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::{stem, CanonText};
use std::sync::Arc;

/// Terms per signature.
pub const TERMS: usize = 12;

/// Snowball-stemmed terms weighted tf·log(N/df), restricted to mid frequencies (Zipf):
/// 2 ≤ df ≤ N/2 once the collection has at least 4 documents.
pub struct InfoStream {
    agree: usize,
    stats: Arc<CorpusStats>,
}

impl InfoStream {
    /// Duplicates share at least `agree` of the 12 terms.
    pub fn new(agree: usize) -> Self {
        InfoStream {
            agree,
            stats: Arc::default(),
        }
    }

    fn stems(&self, canon: &CanonText) -> Vec<String> {
        long_words(canon)
            .iter()
            .map(|w| stem(w).into_owned())
            .collect()
    }

    fn mid_frequency(&self, h: u64) -> bool {
        let s = &self.stats;
        if s.n_docs < 4 {
            return true;
        }
        let df = s.df.get(&h).copied().unwrap_or(0) as f64;
        df >= 2.0 && df <= s.n() / 2.0
    }
}

impl Detector for InfoStream {
    fn name(&self) -> &'static str {
        "infostream"
    }

    fn key(&self) -> String {
        format!("infostream:terms={TERMS}:agree={}", self.agree)
    }

    fn shingle(&self) -> usize {
        4
    }

    fn needs_stats(&self) -> bool {
        true
    }

    fn terms(&self, _raw: &str, canon: &CanonText) -> Vec<u64> {
        self.stems(canon).iter().map(|w| term_hash(w)).collect()
    }

    fn prepare(&mut self, stats: Arc<CorpusStats>) {
        self.stats = stats;
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let stems = self.stems(text);
        let refs: Vec<&str> = stems.iter().map(String::as_str).collect();
        let s = &self.stats;
        let mut weighted: Vec<(f64, &str, u64)> = term_counts(&refs)
            .into_iter()
            .filter(|&(h, _, _)| self.mid_frequency(h))
            .map(|(h, w, tf)| (tf as f64 * (s.n() / s.df(h)).ln().max(1e-9), w, h))
            .collect();
        weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        super::into_set(weighted.into_iter().take(TERMS).map(|x| x.2).collect())
    }

    key_detector_common!(|d: &Self| d.agree);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;
    use crate::sign::{intersection_size, Scores, Thresholds, Verdict};

    #[test]
    fn stems_russian_and_english() {
        let d = InfoStream::new(6);
        let s = d.stems(&canon("running собаками собаки"));
        assert_eq!(s[0], "run");
        assert_eq!(s[1], s[2]);
    }

    #[test]
    fn six_of_twelve_agree() {
        let d0 = InfoStream::new(6);
        // Stats from fewer than 4 documents: no frequency band, weight by tf alone.
        let a: Vec<String> = (0..12).map(|i| format!("term{i:02}")).collect();
        let mut b = a.clone();
        for w in b.iter_mut().skip(6) {
            *w = format!("{w}x");
        }
        let mut d = d0;
        let mut st = CorpusStats::default();
        for t in [a.join(" "), b.join(" ")] {
            st.add(&d.terms(&t, &canon(&t)));
        }
        d.prepare(Arc::new(st));
        let (sa, sb) = (d.sign(&canon(&a.join(" "))), d.sign(&canon(&b.join(" "))));
        assert_eq!((sa.len(), sb.len()), (12, 12));
        let inter = intersection_size(&sa, &sb);
        assert_eq!(inter, 6);
        let t = Thresholds {
            resemblance: 0.5,
            containment: 0.5,
            min_shared_shingles: 0.0,
        };
        assert_eq!(d.judge(&d.scores(&sa, &sb, inter), &t), Verdict::Duplicate);
        let five = Scores::from_counts(5, 12, 12);
        assert_eq!(d.judge(&five, &t), Verdict::Different);
    }
}
