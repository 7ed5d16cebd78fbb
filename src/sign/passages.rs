//! Copied passages (docs/method.md §6.1): runs of consecutive words of one text whose every
//! shingle is also in the other text. A pasted passage survives as one long run; a rewording
//! breaks runs every few words, and two texts on one topic share runs of a few words only.

use super::for_each_shingle_crc;
use crate::canon::CanonText;

/// A text's shingle fingerprints in text order (for runs) and as a sorted set (for lookups and
/// the exact set scores).
#[derive(Debug, Clone, Default)]
pub struct ShingleSeq {
    order: Vec<u32>,
    set: Vec<u32>,
    words: usize,
    /// By position in `order`, a bit each: whether the shingle is boilerplate
    /// ([`ShingleSeq::mark_common`]). Bits, not bools: a verification holds millions of
    /// shingles.
    common: Vec<u64>,
}

impl ShingleSeq {
    /// The `w`-word shingles of `text` (one shingle, the whole text, when it is shorter).
    pub fn new(text: &CanonText, w: usize) -> Self {
        let mut order = Vec::with_capacity(text.len());
        for_each_shingle_crc(text, w, |c| order.push(c));
        order.shrink_to_fit();
        let mut set = order.clone();
        set.sort_unstable();
        set.dedup();
        set.shrink_to_fit();
        ShingleSeq {
            common: vec![0; order.len().div_ceil(64)],
            order,
            set,
            words: text.len(),
        }
    }

    /// Marks the shingles `is_common` names as boilerplate: they never join a copied passage.
    pub fn mark_common(&mut self, is_common: impl Fn(u32) -> bool) {
        self.common.fill(0);
        for (i, &c) in self.order.iter().enumerate() {
            if is_common(c) {
                self.common[i / 64] |= 1 << (i % 64);
            }
        }
    }

    fn is_common(&self, i: usize) -> bool {
        self.common[i / 64] >> (i % 64) & 1 == 1
    }

    /// The full shingle index: sorted, without repeats (what [`super::Full`] signs, its CRC32s
    /// kept as u32: a verified text holds it beside its sequence, at half the memory).
    pub fn set(&self) -> &[u32] {
        &self.set
    }

    /// Canonical words of the text.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Share of this text's words that lie in copied passages of at least `min_words` words:
    /// maximal runs of consecutive shingles that are all in `other` and not boilerplate.
    pub fn copied_share(&self, other: &ShingleSeq, min_words: usize) -> f64 {
        if self.words == 0 || min_words == 0 {
            return 0.0;
        }
        // A run of shingles `start..end` spans words `start..end + w - 1`; `w - 1` is what the
        // word count exceeds the shingle count by.
        let tail = self.words - self.order.len();
        let (mut covered, mut covered_until) = (0usize, 0usize);
        let mut run_start = 0;
        let mut close = |first: usize, end: usize, covered_until: &mut usize| {
            let last = end + tail;
            if last - first >= min_words {
                // Runs split by one missing shingle overlap by `w - 2` words: count them once.
                covered += last - first.max(*covered_until);
                *covered_until = last;
            }
        };
        for (i, c) in self.order.iter().enumerate() {
            if self.is_common(i) || other.set.binary_search(c).is_err() {
                if i > run_start {
                    close(run_start, i, &mut covered_until);
                }
                run_start = i + 1;
            }
        }
        if self.order.len() > run_start {
            close(run_start, self.order.len(), &mut covered_until);
        }
        covered as f64 / self.words as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::{between, canon, reworded, words};
    use crate::sign::{Detector, Full};

    fn seq(text: &str) -> ShingleSeq {
        ShingleSeq::new(&canon(text), 4)
    }

    #[test]
    fn a_pasted_passage_counts_its_words() {
        // 20 words of the source pasted between 30 words of its own.
        let source = words(0..100, "s");
        let answer = between("x", 15, &words(40..60, "s"), 15);
        let s = seq(&answer).copied_share(&seq(&source), 12);
        assert!((s - 20.0 / 50.0).abs() < 1e-12, "{s}");
        // The same passage made of boilerplate shingles is no copy.
        let mut boilerplate = seq(&answer);
        boilerplate.mark_common(|_| true);
        assert_eq!(boilerplate.copied_share(&seq(&source), 12), 0.0);
        // Too short a passage for the minimum counts for nothing.
        assert_eq!(seq(&answer).copied_share(&seq(&source), 21), 0.0);
    }

    #[test]
    fn reworded_every_few_words_breaks_the_runs() {
        let source = words(0..100, "s");
        // Every sixth word replaced: runs of five words, each under the minimum.
        let answer = seq(&reworded(0..60, 6));
        assert_eq!(answer.copied_share(&seq(&source), 12), 0.0);
        assert!(answer.copied_share(&seq(&source), 4) > 0.5);
    }

    #[test]
    fn a_whole_copy_is_covered_once() {
        let text = words(0..50, "s");
        assert_eq!(seq(&text).copied_share(&seq(&text), 12), 1.0);
        let set: Vec<u32> = Full::new(4)
            .sign(&canon(&text))
            .into_iter()
            .map(|c| u32::try_from(c).unwrap())
            .collect();
        assert_eq!(seq(&text).set(), set.as_slice());
    }
}
