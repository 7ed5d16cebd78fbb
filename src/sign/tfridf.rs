//! A3, TF·RIDF: CRC32 of the 6 words of highest tf·(residual IDF), alphabetised.
//!
//! TF = 0.5 + 0.5·tf/tf_max; RIDF = −log(df/N) + log(1 − exp(−cf/N)) (docs/method.md §3.5): how much
//! more concentrated a word is than a Poisson model of its collection frequency predicts.

use super::stats::{long_words, term_counts, term_hash, top_words_key, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use std::sync::Arc;

/// One key from the `k` words of highest TF·RIDF.
#[derive(Debug, Clone)]
pub struct TfRidf {
    k: usize,
    stats: Arc<CorpusStats>,
}

impl Default for TfRidf {
    fn default() -> Self {
        TfRidf {
            k: 6,
            stats: Arc::default(),
        }
    }
}

/// Residual IDF of a term with document frequency `df` and collection frequency `cf` among `n`.
pub fn ridf(df: f64, cf: f64, n: f64) -> f64 {
    -(df / n).ln() + (1.0 - (-cf / n).exp()).ln()
}

impl Detector for TfRidf {
    fn name(&self) -> &'static str {
        "tfridf"
    }

    fn key(&self) -> String {
        format!("tfridf:k={}", self.k)
    }

    fn shingle(&self) -> usize {
        4
    }

    fn needs_stats(&self) -> bool {
        true
    }

    fn terms(&self, _raw: &str, canon: &CanonText) -> Vec<u64> {
        long_words(canon).iter().map(|w| term_hash(w)).collect()
    }

    fn prepare(&mut self, stats: Arc<CorpusStats>) {
        self.stats = stats;
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let words = long_words(text);
        let counts = term_counts(&words);
        let tf_max = counts.iter().map(|c| c.2).max().unwrap_or(1) as f64;
        let s = &self.stats;
        let weighted = counts
            .into_iter()
            .map(|(h, w, tf)| {
                let weight = (0.5 + 0.5 * tf as f64 / tf_max) * ridf(s.df(h), s.cf(h), s.n());
                (weight, w)
            })
            .collect();
        top_words_key(weighted, self.k).into_iter().collect()
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ridf_by_hand() {
        // df 1, cf 4, N 10: −ln 0.1 + ln(1 − e^−0.4) = 2.302585 − 1.109633 = 1.192952.
        assert!((ridf(1.0, 4.0, 10.0) - 1.192952).abs() < 1e-5);
        // A word spread evenly (df = cf) has a lower residual IDF than a bursty one.
        assert!(ridf(4.0, 4.0, 10.0) < ridf(1.0, 4.0, 10.0));
    }

    #[test]
    fn bursty_words_are_chosen() {
        use crate::sign::test_support::canon;
        let docs = [
            "burst burst burst burst even1 even2 aaaa bbbb cccc dddd eeee",
            "even1 even2 aaaa bbbb cccc dddd eeee",
            "even1 even2 ffff",
        ];
        let mut d = TfRidf::default();
        let mut st = CorpusStats::default();
        for t in docs {
            st.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(st));
        let sig = d.sign(&canon(docs[0]));
        // burst: df 1, cf 4 → highest; aaaa..eeee: df 2, cf 2; even1/2: df 3, cf 3 (lowest).
        let hand = crc32fast::hash(b"aaaa bbbb burst cccc dddd eeee") as u64;
        assert_eq!(sig, vec![hand]);
    }
}
