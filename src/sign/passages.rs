//! Copied passages (docs/method.md §6.1): runs of consecutive words of one text whose every
//! shingle is also in the other text. A pasted passage survives as one long run; a rewording
//! breaks runs every few words, and two texts on one topic share runs of a few words only.

use super::{far_apart, for_each_shingle_crc, search_each};
use crate::canon::CanonText;

/// A text's shingle fingerprints as a sorted set (for the exact set scores), and the text's
/// order of them as positions in that set (for runs): a pair's shared shingles are found by one
/// merge of the two sets, and each position of a run is then a bit to read, not a search.
#[derive(Debug, Clone, Default)]
pub struct ShingleSeq {
    /// Each shingle of the text in order, as its position in `set`.
    order: Vec<u32>,
    set: Vec<u32>,
    words: usize,
    /// By position in `set`, a bit each: whether the shingle is boilerplate
    /// ([`ShingleSeq::mark_common`]). Bits, not bools: a verification holds millions of
    /// shingles.
    common: Vec<u64>,
}

/// One bit per element of a slice, set where the element is in another sorted slice (or is
/// boilerplate).
type Bits = Vec<u64>;

fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

/// Of the sorted `set`, which elements the sorted `other` holds, as bits by position in `set`.
fn members(set: &[u32], other: &[u32]) -> Bits {
    let mut bits = vec![0u64; set.len().div_ceil(64)];
    let mut mark = |i: usize| bits[i / 64] |= 1 << (i % 64);
    if far_apart(other, set) {
        search_each(other, set, |_, i| mark(i));
    } else if far_apart(set, other) {
        search_each(set, other, |i, _| mark(i));
    } else {
        let (i, j) = merge_blocks(set, other, &mut bits);
        merge_members(set, other, i, j, &mut bits);
    }
    bits
}

/// [`merge_blocks`] eight elements of each side at a time where the CPU has AVX2, else four.
#[cfg(target_arch = "x86_64")]
fn merge_blocks(set: &[u32], other: &[u32], bits: &mut [u64]) -> (usize, usize) {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        unsafe { merge_blocks8(set, other, bits) }
    } else {
        merge_blocks4(set, other, bits)
    }
}

/// [`merge_blocks4`] with blocks of eight: each side's next block waits on one comparison of
/// their last elements, the chain that bounds the merge, so a step twice as long halves the
/// waits. (`collect dedup` of the 80k dev corpus, temporary timers, 6 runs alternated:
/// verifying its 566,443 pairs 0.44–0.59 s, median 0.57 s, with blocks of four; 0.41–0.52 s,
/// median 0.47 s, with blocks of eight; an earlier try, in alternated runs on another day,
/// found 0.71 s either way.)
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn merge_blocks8(set: &[u32], other: &[u32], bits: &mut [u64]) -> (usize, usize) {
    use std::arch::x86_64::*;
    merge_by_blocks::<8>(set, other, bits, |x, y| {
        // SAFETY: both loads read the eight u32 of their slices; unaligned loads take any
        // address.
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(x.as_ptr() as *const __m256i),
                _mm256_loadu_si256(y.as_ptr() as *const __m256i),
            )
        };
        // Every element of `b` is put beside every element of `a`: its four turns within
        // each half, then the same with the halves swapped.
        let eq = _mm256_or_si256(
            equal_in_turns(a, b),
            equal_in_turns(a, _mm256_permute2x128_si256::<0x01>(b, b)),
        );
        _mm256_movemask_ps(_mm256_castsi256_ps(eq)) as u32 as u64
    })
}

/// The loop of [`merge_blocks4`] and [`merge_blocks8`], with blocks of `W` elements: `found`
/// gives the bits of the elements of a block of `set` that the block of `other` holds, and
/// the side whose block ends lower moves on. Returns where it stopped (fewer than `W` left on
/// a side). Inlined into each caller, so that `found` is compiled with its CPU's features.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn merge_by_blocks<const W: usize>(
    set: &[u32],
    other: &[u32],
    bits: &mut [u64],
    found: impl Fn(&[u32], &[u32]) -> u64,
) -> (usize, usize) {
    let (mut i, mut j) = (0, 0);
    while i + W <= set.len() && j + W <= other.len() {
        // `i` is a multiple of `W` (a power of two up to 64), so the block's bits lie in one
        // word.
        bits[i / 64] |= found(&set[i..i + W], &other[j..j + W]) << (i % 64);
        let (last_a, last_b) = (set[i + W - 1], other[j + W - 1]);
        i += W * usize::from(last_a <= last_b);
        j += W * usize::from(last_b <= last_a);
    }
    (i, j)
}

/// Where an element of `a` equals one of `b` in its own 128-bit half, four at a time: `b`'s
/// half turned by 0 to 3 places.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn equal_in_turns(
    a: std::arch::x86_64::__m256i,
    b: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    _mm256_or_si256(
        _mm256_or_si256(
            _mm256_cmpeq_epi32(a, b),
            _mm256_cmpeq_epi32(a, _mm256_shuffle_epi32::<0b00_11_10_01>(b)),
        ),
        _mm256_or_si256(
            _mm256_cmpeq_epi32(a, _mm256_shuffle_epi32::<0b01_00_11_10>(b)),
            _mm256_cmpeq_epi32(a, _mm256_shuffle_epi32::<0b10_01_00_11>(b)),
        ),
    )
}

/// The part of [`members`]' merge done four elements of each side at a time: a block of `set`
/// is compared with every element of the block of `other` it overlaps (that block turned
/// three times: four comparisons in all), and the side whose block ends lower moves on. The
/// element-wise merge waits for each element's load and comparison before it knows which side
/// moves; this waits once per four. Returns where it stopped (fewer than four left on a side).
#[cfg(target_arch = "x86_64")]
fn merge_blocks4(set: &[u32], other: &[u32], bits: &mut [u64]) -> (usize, usize) {
    use std::arch::x86_64::*;
    merge_by_blocks::<4>(set, other, bits, |x, y| {
        // SAFETY: SSE2 is part of every x86_64 CPU, and both loads read the four u32 of their
        // slices; unaligned loads take any address.
        unsafe {
            let a = _mm_loadu_si128(x.as_ptr() as *const __m128i);
            let b = _mm_loadu_si128(y.as_ptr() as *const __m128i);
            let eq = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi32(a, b),
                    _mm_cmpeq_epi32(a, _mm_shuffle_epi32::<0b00_11_10_01>(b)),
                ),
                _mm_or_si128(
                    _mm_cmpeq_epi32(a, _mm_shuffle_epi32::<0b01_00_11_10>(b)),
                    _mm_cmpeq_epi32(a, _mm_shuffle_epi32::<0b10_01_00_11>(b)),
                ),
            );
            _mm_movemask_ps(_mm_castsi128_ps(eq)) as u64
        }
    })
}

/// Elsewhere the merge goes an element at a time from the start.
#[cfg(not(target_arch = "x86_64"))]
fn merge_blocks(_: &[u32], _: &[u32], _: &mut [u64]) -> (usize, usize) {
    (0, 0)
}

/// [`members`]' merge from `set[i]` and `other[j]` on, an element at a time: without branches
/// on the comparison (which side moves is unpredictable), the bits of a block of 64 gathered in
/// a register.
fn merge_members(set: &[u32], other: &[u32], mut i: usize, mut j: usize, bits: &mut [u64]) {
    let (mut block, mut gathered) = (i / 64, 0u64);
    while i < set.len() && j < other.len() {
        let (x, y) = (set[i], other[j]);
        gathered |= u64::from(x == y) << (i % 64);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
        if i / 64 != block {
            bits[block] |= gathered;
            (block, gathered) = (i / 64, 0);
        }
    }
    if let Some(last) = bits.get_mut(block) {
        *last |= gathered;
    }
}

/// Shingles from which a text's are sorted by radix: below, the comparison sort was faster
/// (on the 10k dev corpus, 2,540 texts of 64–255 shingles: 2.3 ms against 2.7 ms; 2,129 texts
/// of 1,024 and more: 53 ms against 31 ms).
const RADIX_FROM: usize = 256;

impl ShingleSeq {
    /// The `w`-word shingles of `text` (one shingle, the whole text, when it is shorter).
    pub fn new(text: &CanonText, w: usize) -> Self {
        // Each shingle with its place in the text, sorted: the set in order, and each place's
        // position in it, in one pass.
        let mut placed: Vec<u64> = Vec::with_capacity(text.len());
        for_each_shingle_crc(text, w, |c| {
            placed.push(u64::from(c) << 32 | placed.len() as u64)
        });
        // By fingerprint; a tie keeps its places in increasing order either way (a radix sort
        // is stable), so both give the same sequence.
        if placed.len() >= RADIX_FROM {
            radsort::sort_by_key(&mut placed, |p| (p >> 32) as u32);
        } else {
            placed.sort_unstable();
        }
        let mut order = vec![0u32; placed.len()];
        let mut set: Vec<u32> = Vec::with_capacity(placed.len());
        for p in placed {
            let c = (p >> 32) as u32;
            if set.last() != Some(&c) {
                set.push(c);
            }
            order[p as u32 as usize] = (set.len() - 1) as u32;
        }
        set.shrink_to_fit();
        ShingleSeq {
            common: vec![0; set.len().div_ceil(64)],
            order,
            set,
            words: text.len(),
        }
    }

    /// Marks the shingles `common` holds as boilerplate: they never join a copied passage.
    pub fn mark_common(&mut self, common: &Common) {
        let mut bits = vec![0u64; self.set.len().div_ceil(64)];
        for (i, &x) in self.set.iter().enumerate() {
            if common.holds(x) {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        self.common = bits;
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

    /// Which shingles of this text `other` has too, and how many: one pass over both sets,
    /// which a pair's exact scores and its copied passages share.
    pub fn shared_with(&self, other: &ShingleSeq) -> Shared {
        let bits = members(&self.set, &other.set);
        let count = bits.iter().map(|b| b.count_ones() as usize).sum();
        Shared { bits, count }
    }

    /// Share of this text's words that lie in copied passages of at least `min_words` words:
    /// maximal runs of consecutive shingles that are all in `other` and not boilerplate.
    pub fn copied_share(&self, other: &ShingleSeq, min_words: usize) -> f64 {
        self.copied_share_of(&self.shared_with(other), min_words)
    }

    /// [`ShingleSeq::copied_share`] with the shingles shared with the other text known
    /// ([`ShingleSeq::shared_with`]).
    pub fn copied_share_of(&self, shared: &Shared, min_words: usize) -> f64 {
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
        // A bit per shingle of the set that may join a run, so that each place of the text
        // reads one bit, not two. (Profiles of `collect dedup` of the 80k dev corpus: this
        // function's samples 660–731 reading two, 448–489 reading one.)
        let joins: Bits = shared
            .bits
            .iter()
            .zip(&self.common)
            .map(|(shared, common)| shared & !common)
            .collect();
        for (i, &at) in self.order.iter().enumerate() {
            if !bit(&joins, at as usize) {
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

/// Boilerplate shingles, as a sorted list and a bit per value of a shingle's top
/// [`FILTER_BITS`] bits that one of them has: nearly every shingle of a text is not
/// boilerplate, and one bit tells it so, where a search in the list read several of its
/// elements far apart.
pub struct Common {
    list: Vec<u32>,
    filter: Vec<u64>,
}

/// Top bits of a shingle that [`Common`]'s filter has a bit for: 2^20 bits, 128 KiB.
const FILTER_BITS: u32 = 20;

impl Common {
    /// The boilerplate shingles `list` holds (sorted).
    pub fn new(list: Vec<u32>) -> Self {
        let mut filter = vec![0u64; (1 << FILTER_BITS) / 64];
        for &x in &list {
            let top = (x >> (32 - FILTER_BITS)) as usize;
            filter[top / 64] |= 1 << (top % 64);
        }
        Common { list, filter }
    }

    /// Whether `x` is one of them.
    pub fn holds(&self, x: u32) -> bool {
        bit(&self.filter, (x >> (32 - FILTER_BITS)) as usize) && self.list.binary_search(&x).is_ok()
    }
}

/// The shingles of one text another text has too ([`ShingleSeq::shared_with`]).
pub struct Shared {
    /// A bit per element of the text's set.
    bits: Bits,
    /// How many.
    pub count: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::{between, canon, reworded, words, Lcg};
    use crate::sign::{Detector, Full};

    fn seq(text: &str) -> ShingleSeq {
        ShingleSeq::new(&canon(text), 4)
    }

    #[test]
    fn members_agree_with_a_search_at_every_size() {
        let mut rng = Lcg(7);
        for round in 0..2000 {
            // Dense values make shared elements common; sizes cross the 64-bit words of the
            // bits and the 16-fold switch to searching, on either side.
            let range = 1 + rng.below(400);
            let (na, nb) = (rng.below(150), rng.below(150));
            let mut sorted = |n: u64| -> Vec<u32> {
                rng.sorted_set(n, range)
                    .into_iter()
                    .map(|x| x as u32)
                    .collect()
            };
            let (a, b) = (sorted(na), sorted(nb));
            // The merge of blocks of four, which a CPU without AVX2 takes, is checked
            // wherever the tests run.
            #[cfg(target_arch = "x86_64")]
            let by_fours = {
                let mut bits = vec![0u64; a.len().div_ceil(64)];
                let (i, j) = merge_blocks4(&a, &b, &mut bits);
                merge_members(&a, &b, i, j, &mut bits);
                bits
            };
            #[cfg(not(target_arch = "x86_64"))]
            let by_fours = members(&a, &b);
            for bits in [members(&a, &b), by_fours] {
                for (k, x) in a.iter().enumerate() {
                    assert_eq!(
                        bit(&bits, k),
                        b.binary_search(x).is_ok(),
                        "round {round}: {a:?} {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn common_holds_exactly_what_its_list_holds() {
        let mut rng = Lcg(5);
        for round in 0..200 {
            // Values spread over all 32 bits, and values packed under a few top bits, where
            // the filter's bits are shared by listed and unlisted values alike.
            let spread = round % 2 == 0;
            let value = |rng: &mut Lcg| -> u32 {
                if spread {
                    (rng.below(1 << 16) << 16 | rng.below(1 << 16)) as u32
                } else {
                    (rng.below(4) << 28 | rng.below(64)) as u32
                }
            };
            let mut list: Vec<u32> = (0..rng.below(300)).map(|_| value(&mut rng)).collect();
            list.sort_unstable();
            list.dedup();
            let common = Common::new(list.clone());
            for &x in &list {
                assert!(common.holds(x), "round {round}: {x}");
            }
            for _ in 0..500 {
                let x = value(&mut rng);
                assert_eq!(
                    common.holds(x),
                    list.binary_search(&x).is_ok(),
                    "round {round}: {x}"
                );
            }
        }
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
        let every = Common::new(boilerplate.set().to_vec());
        boilerplate.mark_common(&every);
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
