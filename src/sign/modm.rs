//! mod-m: keep the fingerprints divisible by m (the paper's working method, m = 25).
//!
//! A short text keeps only a handful of fingerprints (m = 25: a 100-word text keeps ~4), too few
//! to estimate anything: most mod-25 pairs with resemblance ≥ 0.5 on real corpora involve such
//! signatures and are false. So a text whose sample has fewer than `min_elements` fingerprints
//! keeps its *full* index instead. Two such texts are compared exactly; a small text against a
//! large one shares only sampled fingerprints (the large one holds nothing else), which finds the
//! pair but cannot judge it: the verdict is `Unsure`, and the engine verifies it on full indexes.

use super::{for_each_shingle_crc, into_set, Detector, Scores, SigSize, Thresholds, Verdict};
use crate::canon::CanonText;

/// Signature of the shingle fingerprints ≡ 0 (mod m); grows with the text, supports containment.
#[derive(Debug, Clone)]
pub struct ModM {
    shingle: usize,
    modulus: u32,
    min_elements: usize,
}

impl ModM {
    /// mod-m over `shingle`-word shingles; texts with fewer than `min_elements` sampled
    /// fingerprints keep their full index (0 turns that off).
    pub fn new(shingle: usize, modulus: u64, min_elements: usize) -> Self {
        ModM {
            shingle,
            modulus: modulus.clamp(1, u32::MAX as u64) as u32,
            min_elements,
        }
    }

    /// Number of sampled fingerprints in a signature.
    fn sampled(&self, sig: &[u64]) -> usize {
        let m = self.modulus as u64;
        sig.iter().filter(|&&x| x % m == 0).count()
    }

    /// Whether a signature is a full index (its text was too short for a usable sample).
    pub fn is_full_index(&self, sig: &[u64]) -> bool {
        self.full_index_of(self.sampled(sig))
    }

    /// Whether a signature with `sampled` sampled fingerprints is a full index.
    fn full_index_of(&self, sampled: usize) -> bool {
        self.modulus > 1 && sampled < self.min_elements
    }
}

impl Detector for ModM {
    fn name(&self) -> &'static str {
        "modm"
    }

    fn shingle(&self) -> usize {
        self.shingle
    }

    fn is_exact(&self, sig: &[u64]) -> bool {
        self.modulus == 1 || self.is_full_index(sig)
    }

    fn shingles_per_element(&self) -> f64 {
        self.modulus.max(1) as f64
    }

    fn key(&self) -> String {
        format!(
            "modm:w={}:m={}:min={}",
            self.shingle, self.modulus, self.min_elements
        )
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let m = self.modulus;
        let mut sample = Vec::with_capacity(text.len() / m as usize + 1);
        for_each_shingle_crc(text, self.shingle, |c| {
            if c % m == 0 {
                sample.push(c as u64)
            }
        });
        let sample = into_set(sample);
        if m > 1 && sample.len() < self.min_elements {
            let mut all = Vec::with_capacity(text.len());
            for_each_shingle_crc(text, self.shingle, |c| all.push(c as u64));
            return into_set(all);
        }
        sample
    }

    fn size_of(&self, sig: &[u64]) -> Option<SigSize> {
        let sampled = self.sampled(sig);
        Some(SigSize {
            len: sig.len(),
            sampled,
            exact: self.modulus == 1 || self.full_index_of(sampled),
        })
    }

    fn judge_sizes(
        &self,
        a: SigSize,
        b: SigSize,
        inter: usize,
        t: &Thresholds,
    ) -> (Scores, Verdict) {
        match (self.full_index_of(a.sampled), self.full_index_of(b.sampled)) {
            (false, false) | (true, true) => {
                let s = Scores::from_counts(inter, a.len, b.len);
                (s, self.judge(&s, t))
            }
            // Only sampled fingerprints can be shared: score on the small text's sample.
            (true, false) => (
                Scores::from_counts(inter, a.sampled, b.len),
                Verdict::Unsure,
            ),
            (false, true) => (
                Scores::from_counts(inter, a.len, b.sampled),
                Verdict::Unsure,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;
    use crate::sign::{intersection_size, Full};

    fn words(range: std::ops::Range<usize>) -> String {
        range.map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn keeps_only_multiples_of_m() {
        let text = canon(&words(0..2000));
        let sig = ModM::new(4, 25, 8).sign(&text);
        assert!(sig.len() >= 8);
        assert!(sig.iter().all(|&x| x % 25 == 0));
        let full = Full::new(4).sign(&text);
        assert_eq!(full.len(), 1997);
        let expected: Vec<u64> = full.iter().copied().filter(|x| x % 25 == 0).collect();
        assert_eq!(sig, expected);
    }

    #[test]
    fn short_text_keeps_its_full_index() {
        let text = canon(&words(0..40));
        let d = ModM::new(4, 25, 8);
        let sig = d.sign(&text);
        assert_eq!(sig, Full::new(4).sign(&text));
        assert!(d.is_full_index(&sig));
        assert!(!ModM::new(4, 25, 0).is_full_index(&ModM::new(4, 25, 0).sign(&text)));
    }

    #[test]
    fn small_texts_are_compared_exactly() {
        let d = ModM::new(4, 25, 8);
        let t = Thresholds {
            resemblance: 0.5,
            containment: 0.5,
            min_shared_shingles: 0.0,
        };
        // 37 and 37 shingles, 27 shared: exact resemblance 27/47.
        let a = d.sign(&canon(&words(0..40)));
        let b = d.sign(&canon(&words(10..50)));
        let (s, v) = d.judge_pair(&a, &b, intersection_size(&a, &b), &t);
        assert_eq!(s.inter, 27);
        assert!((s.resemblance - 27.0 / 47.0).abs() < 1e-12);
        assert_eq!(v, Verdict::Duplicate);
    }

    #[test]
    fn small_against_large_is_unsure() {
        let d = ModM::new(4, 25, 8);
        let t = Thresholds {
            resemblance: 0.5,
            containment: 0.5,
            min_shared_shingles: 0.0,
        };
        let small = d.sign(&canon(&words(0..60)));
        let large = d.sign(&canon(&words(0..3000)));
        assert!(d.is_full_index(&small) && !d.is_full_index(&large));
        let inter = intersection_size(&small, &large);
        let (s, v) = d.judge_pair(&small, &large, inter, &t);
        assert_eq!(v, Verdict::Unsure);
        // Every sampled fingerprint of the small text is in the large one.
        if inter > 0 {
            assert_eq!(s.cont_a_in_b, 1.0);
        }
    }
}
