//! A4, Long Sent: one key from the two longest sentences of the document.

use super::stats::{sentences, two_sentence_key};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;

/// CRC32 of the two longest sentences (in long words; ties: the earlier), alphabetised.
#[derive(Debug, Clone, Copy, Default)]
pub struct LongSent;

/// Indexes of the `k` longest sentences, longest first, the earlier first among equals.
pub(crate) fn longest(sents: &[Vec<String>], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sents.len()).collect();
    order.sort_by(|&a, &b| sents[b].len().cmp(&sents[a].len()).then(a.cmp(&b)));
    order.truncate(k);
    order
}

impl Detector for LongSent {
    fn name(&self) -> &'static str {
        "longsent"
    }

    fn key(&self) -> String {
        "longsent:k=2".into()
    }

    fn shingle(&self) -> usize {
        4
    }

    /// Without the raw text the canonical words are one sentence.
    fn sign(&self, text: &CanonText) -> Vec<u64> {
        self.sign_doc(&text.buf, text)
    }

    fn sign_doc(&self, raw: &str, _canon: &CanonText) -> Vec<u64> {
        let sents = sentences(raw);
        let top = longest(&sents, 2);
        match top.as_slice() {
            [] => Vec::new(),
            [a] => vec![two_sentence_key(&sents[*a], None)],
            [a, b, ..] => vec![two_sentence_key(&sents[*a], Some(&sents[*b]))],
        }
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn key_of_two_longest_sentences() {
        let raw = "Short one here. The longest sentence contains seven long words indeed. \
                   Second longest sentence has five words. Tiny.";
        let sig = LongSent.sign_doc(raw, &canon(raw));
        // Stop words ("the", "has", "one", "here") and words of ≤ 3 letters are dropped first.
        let hand = crc32fast::hash(
            b"longest sentence contains seven long words indeed\nsecond longest sentence five words",
        ) as u64;
        assert_eq!(sig, vec![hand]);
        // Sentence order does not matter.
        let swapped = "Second longest sentence has five words. Tiny. \
                       The longest sentence contains seven long words indeed.";
        assert_eq!(LongSent.sign_doc(swapped, &canon(swapped)), vec![hand]);
    }
}
