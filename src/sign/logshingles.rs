//! A8, Log Shingles: 5-word shingles whose CRC32 is divisible by a power of two.
//!
//! The power grows with the document: a text of n shingles keeps those divisible by 2^T with
//! T = max(0, ⌊log2 n⌋ − 3), i.e. 8–16 shingles whatever its length. Two texts are compared at
//! the coarser of their two levels, where both samples are drawn by the same rule.

use super::{for_each_shingle_crc, Detector, Scores};
use crate::canon::CanonText;

/// Power-of-two sampled shingles, compared by resemblance at a common level.
#[derive(Debug, Clone, Copy)]
pub struct LogShingles {
    shingle: usize,
}

impl LogShingles {
    /// Sampled `shingle`-word shingles.
    pub fn new(shingle: usize) -> Self {
        LogShingles { shingle }
    }
}

/// Trailing zero bits of a 32-bit fingerprint (32 for zero).
fn level(fp: u64) -> u32 {
    (fp as u32).trailing_zeros()
}

/// The level a signature was sampled at: the lowest level among its elements.
fn sig_level(sig: &[u64]) -> u32 {
    sig.iter().map(|&f| level(f)).min().unwrap_or(0)
}

/// The sampling level for a text of `n` shingles.
pub fn level_for(n: usize) -> u32 {
    (usize::BITS - 1 - n.max(1).leading_zeros()).saturating_sub(3)
}

impl Detector for LogShingles {
    fn name(&self) -> &'static str {
        "logshingles"
    }

    fn key(&self) -> String {
        format!("logshingles:w={}:keep=8-16", self.shingle)
    }

    fn shingle(&self) -> usize {
        self.shingle
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let mut all = Vec::new();
        for_each_shingle_crc(text, self.shingle, |c| all.push(c as u64));
        let all = super::into_set(all);
        let t = level_for(all.len());
        all.into_iter().filter(|&f| level(f) >= t).collect()
    }

    fn scores(&self, a: &[u64], b: &[u64], _inter: usize) -> Scores {
        let t = sig_level(a).max(sig_level(b));
        let a: Vec<u64> = a.iter().copied().filter(|&f| level(f) >= t).collect();
        let b: Vec<u64> = b.iter().copied().filter(|&f| level(f) >= t).collect();
        let inter = super::intersection_size(&a, &b);
        Scores::from_counts(inter, a.len(), b.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn levels_by_hand() {
        assert_eq!(level_for(1), 0);
        assert_eq!(level_for(15), 0);
        assert_eq!(level_for(16), 1);
        assert_eq!(level_for(1000), 6); // ⌊log2 1000⌋ = 9
        assert_eq!(level(0b1000), 3);
    }

    #[test]
    fn keeps_only_divisible_fingerprints_and_compares_at_common_level() {
        let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let long = canon(&words.join(" "));
        let d = LogShingles::new(5);
        let sig = d.sign(&long);
        // 396 shingles: T = ⌊log2 396⌋ − 3 = 5, every kept CRC32 divisible by 32.
        assert!(!sig.is_empty());
        assert!(sig.iter().all(|&f| f % 32 == 0));
        // The first half of the text is sampled at level 4; compared at level 5 it is contained.
        let half = d.sign(&canon(&words[..200].join(" ")));
        let s = d.scores(&half, &sig, 0);
        assert_eq!(s.cont_a_in_b, 1.0);
    }
}
