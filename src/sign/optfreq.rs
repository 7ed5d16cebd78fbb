//! A10, Opt Freq: CRC32 of the 6 words of highest TF·IDF_opt, alphabetised.
//!
//! IDF = −log(df/N); IDF_opt = sqrt(IDF/11.5) below 11.5, 11.5/IDF above: the weight peaks for
//! words of document frequency ≈ 10 per million (e^−11.5) and falls for rarer ones (typos).

use super::stats::{long_words, term_counts, term_hash, top_words_key, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use std::sync::Arc;

/// One key from the `k` words of highest BM25 TF times IDF_opt.
#[derive(Debug, Clone)]
pub struct OptFreq {
    k: usize,
    stats: Arc<CorpusStats>,
}

impl Default for OptFreq {
    fn default() -> Self {
        OptFreq {
            k: 6,
            stats: Arc::default(),
        }
    }
}

/// IDF_opt of a word with document frequency `df` among `n` documents.
pub fn idf_opt(df: f64, n: f64) -> f64 {
    let idf = -(df / n).ln();
    if idf < 11.5 {
        (idf / 11.5).max(0.0).sqrt()
    } else {
        11.5 / idf
    }
}

impl Detector for OptFreq {
    fn name(&self) -> &'static str {
        "optfreq"
    }

    fn key(&self) -> String {
        format!("optfreq:k={}", self.k)
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
        let dl = words.len() as f64;
        let s = &self.stats;
        let weighted = term_counts(&words)
            .into_iter()
            .map(|(h, w, tf)| (s.bm25_tf(tf as f64, dl) * idf_opt(s.df(h), s.n()), w))
            .collect();
        top_words_key(weighted, self.k).into_iter().collect()
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idf_opt_peaks_at_11_5() {
        let n = 1e9;
        let at = |idf: f64| idf_opt(n * (-idf).exp(), n);
        assert!((at(11.5) - 1.0).abs() < 1e-9);
        // IDF 2.875 = 11.5/4: sqrt(1/4) = 0.5; IDF 23: 11.5/23 = 0.5.
        assert!((at(2.875) - 0.5).abs() < 1e-9);
        assert!((at(23.0) - 0.5).abs() < 1e-9);
        assert_eq!(idf_opt(10.0, 10.0), 0.0);
    }
}
