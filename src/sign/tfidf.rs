//! A2, TF·IDF: CRC32 of the 6 words of highest Okapi BM25 weight (k = 2, b = 0.75), alphabetised.

use super::stats::{bm25_weights, long_words, top_words_key, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use std::sync::Arc;

/// One key from the `k` words of highest BM25 weight over the collection's statistics.
#[derive(Debug, Clone)]
pub struct TfIdf {
    k: usize,
    stats: Arc<CorpusStats>,
}

impl Default for TfIdf {
    fn default() -> Self {
        TfIdf {
            k: 6,
            stats: Arc::default(),
        }
    }
}

impl Detector for TfIdf {
    fn name(&self) -> &'static str {
        "tfidf"
    }

    fn key(&self) -> String {
        format!("tfidf:k={}", self.k)
    }

    fn shingle(&self) -> usize {
        4
    }

    fn needs_stats(&self) -> bool {
        true
    }

    fn terms(&self, _raw: &str, canon: &CanonText) -> Vec<u64> {
        long_words(canon)
            .iter()
            .map(|w| super::stats::term_hash(w))
            .collect()
    }

    fn prepare(&mut self, stats: Arc<CorpusStats>) {
        self.stats = stats;
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let words = long_words(text);
        top_words_key(bm25_weights(&self.stats, &words), self.k)
            .into_iter()
            .collect()
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn rare_words_win_over_frequent_common_ones() {
        let docs = [
            "common common common common rare1 rare2 rare3 rare4 rare5 rare6 rare7",
            "common word1 word2",
            "common word3 word4",
            "common word5 word6",
            "other word7 word8",
        ];
        let mut stats = CorpusStats::default();
        let mut d = TfIdf::default();
        for t in docs {
            stats.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(stats));
        // N = 5: df(common) = 4 gives ln(1.5/4.5) < 0; every rareN has df 1, ln(4.5/1.5) > 0
        // and the same tf, so the tie among seven is broken alphabetically: rare1..rare6.
        let sig = d.sign(&canon(docs[0]));
        let hand = crc32fast::hash(b"rare1 rare2 rare3 rare4 rare5 rare6") as u64;
        assert_eq!(sig, vec![hand]);
    }
}
