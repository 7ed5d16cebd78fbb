//! The stream paper's candidate pre-filter: the 2 heaviest (BM25) words, alphabetised, as a key.

use super::stats::{bm25_weights, long_words, term_hash, top_words_key, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use std::sync::Arc;

/// One key from the two words of highest BM25 weight: a cheap, recall-oriented candidate filter.
#[derive(Debug, Clone, Default)]
pub struct Prefilter2 {
    stats: Arc<CorpusStats>,
}

impl Detector for Prefilter2 {
    fn name(&self) -> &'static str {
        "prefilter2"
    }

    fn key(&self) -> String {
        "prefilter2:k=2".into()
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
        top_words_key(bm25_weights(&self.stats, &words), 2)
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
    fn key_is_two_heaviest_words() {
        let docs = [
            "shared shared alpha alpha alpha beta beta gamma",
            "shared other",
            "shared thing",
        ];
        let mut d = Prefilter2::default();
        let mut stats = CorpusStats::default();
        for t in docs {
            stats.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(stats));
        // df 1 for alpha, beta, gamma; alpha (tf 3) and beta (tf 2) outweigh gamma (tf 1),
        // and "shared" (df 3 of N 3) has a negative IDF.
        assert_eq!(
            d.sign(&canon(docs[0])),
            vec![crc32fast::hash(b"alpha beta") as u64]
        );
    }
}
