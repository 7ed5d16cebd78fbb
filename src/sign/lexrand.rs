//! A7, Lex Rand: I-Match over a collection lexicon plus 10 random sub-lexicons.
//!
//! I-Match hashes the set of a document's distinct words that are in a lexicon of mid-IDF words;
//! one changed word changes the key, so 10 more keys are taken over sub-lexicons that each drop
//! about 30 % of the lexicon at random. Duplicates share any of the 11 keys.

use super::stats::{long_words, term_hash, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use std::sync::Arc;

/// Number of random sub-lexicons.
pub const SUB_LEXICONS: u64 = 10;

/// Lexicon: words with 2 ≤ df ≤ N/2 (hapaxes are typos or names that no copy needs to share,
/// words in most documents say nothing about this one).
#[derive(Debug, Clone, Default)]
pub struct LexRand {
    stats: Arc<CorpusStats>,
}

impl LexRand {
    fn in_lexicon(&self, h: u64) -> bool {
        let df = self.stats.df.get(&h).copied().unwrap_or(0) as f64;
        df >= 2.0 && df <= (self.stats.n() / 2.0).max(2.0)
    }
}

/// Whether sub-lexicon `j` (1-based) keeps word `h`: a fixed pseudo-random 70 % of the words.
pub fn sub_keeps(j: u64, h: u64) -> bool {
    let mut z = h ^ j.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z ^= z >> 33;
    z % 10 >= 3
}

/// The I-Match key of a sorted set of word hashes in lexicon `j` (0: the whole lexicon).
fn imatch(j: u64, words: &[u64]) -> u64 {
    let mut bytes = Vec::with_capacity(words.len() * 8);
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    (j << 32) | crc32fast::hash(&bytes) as u64
}

impl Detector for LexRand {
    fn name(&self) -> &'static str {
        "lexrand"
    }

    fn key(&self) -> String {
        format!("lexrand:sub={SUB_LEXICONS}:drop=0.3")
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
        let mut words: Vec<u64> = long_words(text)
            .iter()
            .map(|w| term_hash(w))
            .filter(|&h| self.in_lexicon(h))
            .collect();
        words.sort_unstable();
        words.dedup();
        if words.is_empty() {
            return Vec::new();
        }
        let mut keys = vec![imatch(0, &words)];
        for j in 1..=SUB_LEXICONS {
            let sub: Vec<u64> = words.iter().copied().filter(|&h| sub_keeps(j, h)).collect();
            if !sub.is_empty() {
                keys.push(imatch(j, &sub));
            }
        }
        super::into_set(keys)
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    fn prepared(docs: &[&str]) -> LexRand {
        let mut d = LexRand::default();
        let mut st = CorpusStats::default();
        for t in docs {
            st.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(st));
        d
    }

    #[test]
    fn base_key_is_imatch_of_lexicon_words() {
        let docs = [
            "alpha beta gamma hapax",
            "alpha beta gamma",
            "delta",
            "omega",
        ];
        let d = prepared(&docs);
        let sig = d.sign(&canon(docs[0]));
        // hapax has df 1: out of the lexicon, so both documents hash the same three words.
        let mut words: Vec<u64> = ["alpha", "beta", "gamma"]
            .iter()
            .map(|w| term_hash(w))
            .collect();
        words.sort_unstable();
        assert!(sig.contains(&imatch(0, &words)));
        assert_eq!(sig, d.sign(&canon(docs[1])));
    }

    #[test]
    fn one_changed_word_keeps_some_sub_lexicon_key() {
        let base: Vec<String> = (0..40).map(|i| format!("word{i:02}")).collect();
        let a = base.join(" ");
        let mut changed = base.clone();
        changed[0] = "word99".into();
        let b = changed.join(" ");
        let rest = base[1..].join(" ");
        let docs = [
            &a,
            &b,
            &rest,
            "word99 other",
            "word00 thing",
            "x1x1 y1y1",
            "z1z1",
        ];
        let d = prepared(&docs);
        let (sa, sb) = (d.sign(&canon(&a)), d.sign(&canon(&b)));
        // The I-Match keys differ, but every sub-lexicon that drops word00 and word99 agrees.
        assert_ne!(sa[0], sb[0]);
        let expected = (1..=SUB_LEXICONS)
            .filter(|&j| !sub_keeps(j, term_hash("word00")) && !sub_keeps(j, term_hash("word99")))
            .count();
        assert_eq!(crate::sign::intersection_size(&sa, &sb), expected);
    }

    #[test]
    fn sub_lexicons_drop_about_thirty_percent() {
        let kept = (0..10_000u64)
            .filter(|&h| sub_keeps(3, term_hash(&h.to_string())))
            .count();
        assert!((6_700..7_300).contains(&kept), "{kept}");
    }
}
