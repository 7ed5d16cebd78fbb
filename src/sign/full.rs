//! full: the whole shingle index (exact, the most work).

use super::{for_each_shingle_crc, into_set, Detector, SigSize};
use crate::canon::CanonText;

/// Signature of every shingle fingerprint.
#[derive(Debug, Clone)]
pub struct Full {
    shingle: usize,
}

impl Full {
    /// The full index over `shingle`-word shingles.
    pub fn new(shingle: usize) -> Self {
        Full { shingle }
    }
}

impl Detector for Full {
    fn name(&self) -> &'static str {
        "full"
    }

    fn shingle(&self) -> usize {
        self.shingle
    }

    fn is_exact(&self, _sig: &[u64]) -> bool {
        true
    }

    fn size_of(&self, sig: &[u64]) -> Option<SigSize> {
        Some(SigSize {
            len: sig.len(),
            sampled: sig.len(),
            exact: true,
        })
    }

    fn key(&self) -> String {
        format!("full:w={}", self.shingle)
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let mut out = Vec::with_capacity(text.len());
        for_each_shingle_crc(text, self.shingle, |c| out.push(c as u64));
        into_set(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;
    use crate::sign::{intersection_size, Scores};

    #[test]
    fn exact_resemblance_and_containment() {
        // A = 5 shingles, B = A's text + 5 new words = 10 shingles, all of A's inside.
        let a = canon("a b c d e f g h");
        let b = canon("a b c d e f g h i j k l m");
        let d = Full::new(4);
        let (sa, sb) = (d.sign(&a), d.sign(&b));
        assert_eq!((sa.len(), sb.len()), (5, 10));
        let s: Scores = d.scores(&sa, &sb, intersection_size(&sa, &sb));
        assert_eq!(s.cont_a_in_b, 1.0);
        assert_eq!(s.cont_b_in_a, 0.5);
        assert_eq!(s.resemblance, 0.5);
    }
}
