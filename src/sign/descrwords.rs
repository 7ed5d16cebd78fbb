//! A9, Descr Words: the binary vector of a document over a dictionary of "descriptive" words.
//!
//! The dictionary is taken from the collection: up to 2000 words of middle document frequency
//! (2 ≤ df ≤ max(2, N/10)), most frequent first. The key is the hash of the vector, i.e. of the
//! set of dictionary words the document holds; documents with fewer than 3 such words get none.

use super::stats::{long_words, term_hash, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use rustc_hash::FxHashSet;
use std::sync::Arc;

/// Dictionary size.
pub const DICTIONARY: usize = 2000;
/// Fewest dictionary words a document must hold to get a key (a near-empty vector says nothing).
pub const MIN_PRESENT: usize = 3;

/// One key: the binary vector over the dictionary.
#[derive(Debug, Clone, Default)]
pub struct DescrWords {
    dictionary: FxHashSet<u64>,
}

impl Detector for DescrWords {
    fn name(&self) -> &'static str {
        "descrwords"
    }

    fn key(&self) -> String {
        format!("descrwords:dict={DICTIONARY}")
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
        let top = (stats.n_docs / 10).max(2) as u32;
        let mut mid: Vec<(u32, u64)> = stats
            .df
            .iter()
            .filter(|(_, &df)| (2..=top).contains(&df))
            .map(|(&h, &df)| (df, h))
            .collect();
        mid.sort_unstable_by(|a, b| b.cmp(a));
        self.dictionary = mid.into_iter().take(DICTIONARY).map(|(_, h)| h).collect();
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let mut present: Vec<u64> = long_words(text)
            .iter()
            .map(|w| term_hash(w))
            .filter(|h| self.dictionary.contains(h))
            .collect();
        present.sort_unstable();
        present.dedup();
        if present.len() < MIN_PRESENT {
            return Vec::new();
        }
        let bytes: Vec<u8> = present.iter().flat_map(|h| h.to_le_bytes()).collect();
        vec![crc32fast::hash(&bytes) as u64]
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn same_dictionary_words_same_key() {
        let docs = [
            "alpha beta gamma once",
            "gamma beta alpha alpha twice",
            "alpha beta gamma delta",
            "other",
            "thing",
        ];
        let mut d = DescrWords::default();
        let mut st = CorpusStats::default();
        for t in docs {
            st.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(st));
        // N = 5: the band is 2..=max(2, 0) = 2..=2; alpha, beta, gamma have df 3, the rest df 1,
        // so the dictionary is empty and nothing is signed.
        assert!(d.sign(&canon(docs[0])).is_empty());
        let mut st = CorpusStats::default();
        for t in docs.iter().chain(std::iter::repeat_n(&"filler", 25)) {
            st.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(st));
        // N = 30, band 2..=3: alpha, beta, gamma are in; once/twice/delta (df 1) are not.
        let (a, b, c) = (
            d.sign(&canon(docs[0])),
            d.sign(&canon(docs[1])),
            d.sign(&canon(docs[2])),
        );
        let mut hand: Vec<u64> = ["alpha", "beta", "gamma"]
            .iter()
            .map(|w| term_hash(w))
            .collect();
        hand.sort_unstable();
        let bytes: Vec<u8> = hand.iter().flat_map(|h| h.to_le_bytes()).collect();
        assert_eq!(a, vec![crc32fast::hash(&bytes) as u64]);
        assert_eq!(a, b);
        assert_eq!(a, c);
    }
}
