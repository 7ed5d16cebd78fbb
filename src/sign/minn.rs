//! min-n: keep the n smallest fingerprints (fixed size; resemblance only).

use super::{for_each_shingle_crc, into_set, Detector, Scores};
use crate::canon::CanonText;

/// Bottom-n sketch of the shingle fingerprints.
#[derive(Debug, Clone)]
pub struct MinN {
    shingle: usize,
    n: usize,
}

impl MinN {
    /// min-n over `shingle`-word shingles.
    pub fn new(shingle: usize, n: usize) -> Self {
        MinN { shingle, n }
    }
}

impl Detector for MinN {
    fn name(&self) -> &'static str {
        "minn"
    }

    fn shingle(&self) -> usize {
        self.shingle
    }

    fn key(&self) -> String {
        format!("minn:w={}:n={}", self.shingle, self.n)
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let mut all = Vec::with_capacity(text.len());
        for_each_shingle_crc(text, self.shingle, |c| all.push(c as u64));
        let mut set = into_set(all);
        set.truncate(self.n);
        set
    }

    /// A bottom-n sketch says nothing about how much of A lies in B: both sketches are the same
    /// size whatever the texts' lengths.
    fn supports_containment(&self) -> bool {
        false
    }

    /// Broder's estimator: among the n smallest elements of S(A) ∪ S(B), the share present in
    /// both. Unlike |S(A)∩S(B)| / |S(A)∪S(B)| on the sketches it is unbiased, and exact when
    /// both texts have fewer than n shingles.
    fn scores(&self, a: &[u64], b: &[u64], inter: usize) -> Scores {
        let (mut i, mut j, mut taken, mut both) = (0, 0, 0, 0);
        while taken < self.n && (i < a.len() || j < b.len()) {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => i += 1,
                (Some(_), None) => i += 1,
                _ => j += 1,
            }
            taken += 1;
        }
        Scores {
            inter: inter as u32,
            resemblance: if taken == 0 {
                0.0
            } else {
                both as f64 / taken as f64
            },
            cont_a_in_b: f64::NAN,
            cont_b_in_a: f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn keeps_the_n_smallest() {
        let text = canon(
            &(0..100)
                .map(|i| format!("w{i}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let sig = MinN::new(4, 10).sign(&text);
        assert_eq!(sig.len(), 10);
        let all = MinN::new(4, 1000).sign(&text);
        assert_eq!(sig, all[..10].to_vec());
    }

    #[test]
    fn broder_estimator_on_hand_made_sets() {
        let d = MinN::new(4, 4);
        // Union's 4 smallest: 1,2,3,4; present in both: 1 and 3 → 0.5.
        let s = d.scores(&[1, 3, 4, 9], &[1, 2, 3, 9], 3);
        assert_eq!(s.resemblance, 0.5);
        assert!(s.cont_a_in_b.is_nan());
    }
}
