//! Megashingles (Fetterly et al.): min-wise maps → supershingles → pairs of supershingles.

use super::{Detector, Scores, Thresholds, Verdict};
use crate::canon::CanonText;
use std::hash::Hasher;

/// 64-bit shingle fingerprints, `maps` min-wise maps split into `supershingles` groups, and one
/// megashingle per pair of supershingles: one shared megashingle means two supershingles agree.
#[derive(Debug, Clone)]
pub struct Megashingles {
    shingle: usize,
    maps: Vec<(u64, u64)>,
    supershingles: usize,
}

/// Fixed seed: the maps must be the same in every run, or stored signatures stop matching.
const MAP_SEED: u64 = 0x6d65_6761_7368_696e;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn mix(values: &[u64]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for v in values {
        h.write_u64(*v);
    }
    let mut s = h.finish();
    splitmix64(&mut s)
}

/// A 64-bit shingle fingerprint: CRC32 in the high half, an independent hash in the low half.
fn fingerprint64(bytes: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    ((crc32fast::hash(bytes) as u64) << 32) ^ (h.finish() & 0xFFFF_FFFF)
}

impl Megashingles {
    /// `maps` min-wise maps in `supershingles` equal groups over `shingle`-word shingles.
    pub fn new(shingle: usize, maps: usize, supershingles: usize) -> Result<Self, String> {
        if supershingles < 2 || maps == 0 || !maps.is_multiple_of(supershingles) {
            return Err(format!(
                "megashingles need at least 2 supershingles and a number of maps divisible by them \
                 (got {maps} maps, {supershingles} supershingles)"
            ));
        }
        let mut state = MAP_SEED;
        // a·x + b with odd a is a bijection of u64, hence an injective map as the method asks.
        let maps = (0..maps)
            .map(|_| (splitmix64(&mut state) | 1, splitmix64(&mut state)))
            .collect();
        Ok(Megashingles {
            shingle,
            maps,
            supershingles,
        })
    }

    /// Probability that texts of resemblance `p` share at least 2 of the supershingles.
    pub fn match_probability(&self, p: f64) -> f64 {
        let k = (self.maps.len() / self.supershingles) as i32;
        let s = self.supershingles as i32;
        let q = p.powi(k);
        1.0 - (1.0 - q).powi(s) - s as f64 * q * (1.0 - q).powi(s - 1)
    }
}

impl Detector for Megashingles {
    fn name(&self) -> &'static str {
        "megashingles"
    }

    fn shingle(&self) -> usize {
        self.shingle
    }

    fn key(&self) -> String {
        format!(
            "megashingles:w={}:maps={}:super={}",
            self.shingle,
            self.maps.len(),
            self.supershingles
        )
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let n = text.len();
        if n == 0 {
            return Vec::new();
        }
        let mut minima = vec![u64::MAX; self.maps.len()];
        let mut visit = |fp: u64| {
            for (m, &(a, b)) in minima.iter_mut().zip(&self.maps) {
                let v = a.wrapping_mul(fp).wrapping_add(b);
                if v < *m {
                    *m = v;
                }
            }
        };
        if n < self.shingle {
            visit(fingerprint64(text.buf.as_bytes()));
        } else {
            for i in 0..=n - self.shingle {
                visit(fingerprint64(text.span(i, self.shingle)));
            }
        }
        let group = self.maps.len() / self.supershingles;
        let supers: Vec<u64> = minima.chunks(group).map(mix).collect();
        let mut out = Vec::with_capacity(supers.len() * (supers.len() - 1) / 2);
        for i in 0..supers.len() {
            for j in i + 1..supers.len() {
                out.push(mix(&[i as u64, j as u64, supers[i], supers[j]]));
            }
        }
        super::into_set(out)
    }

    fn supports_containment(&self) -> bool {
        false
    }

    fn scores(&self, a: &[u64], b: &[u64], inter: usize) -> Scores {
        let mut s = Scores::from_counts(inter, a.len(), b.len());
        s.cont_a_in_b = f64::NAN;
        s.cont_b_in_a = f64::NAN;
        s
    }

    /// One shared megashingle is the method's whole test; the thresholds do not apply.
    fn judge(&self, s: &Scores, _t: &Thresholds) -> Verdict {
        if s.inter >= 1 {
            Verdict::Duplicate
        } else {
            Verdict::Different
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::intersection_size;
    use crate::sign::test_support::canon;

    fn words(range: std::ops::Range<usize>) -> String {
        range.map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn fifteen_megashingles_for_six_supershingles() {
        let d = Megashingles::new(5, 84, 6).unwrap();
        assert_eq!(d.sign(&canon(&words(0..300))).len(), 15);
    }

    #[test]
    fn identical_texts_match_and_unrelated_do_not() {
        let d = Megashingles::new(5, 84, 6).unwrap();
        let a = d.sign(&canon(&words(0..300)));
        let b = d.sign(&canon(&words(0..300)));
        let c = d.sign(&canon(&words(1000..1300)));
        assert_eq!(intersection_size(&a, &b), 15);
        assert_eq!(intersection_size(&a, &c), 0);
    }

    #[test]
    fn match_probability_matches_method_md() {
        let d = Megashingles::new(5, 84, 6).unwrap();
        // The papers round this to ≈ 0.90 (docs/method.md §3.4); the formula gives 0.8786.
        let p = d.match_probability(0.95);
        assert!((p - 0.8786).abs() < 1e-3, "{p}");
    }

    #[test]
    fn rejects_uneven_groups() {
        assert!(Megashingles::new(5, 84, 5).is_err());
    }
}
