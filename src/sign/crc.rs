//! CRC-32 of many short spans of one buffer: a text's shingles.
//!
//! The value is the CRC-32 that zlib and `crc32fast` compute (IEEE polynomial, reflected, init
//! and final xor all ones), so stored signatures keep their meaning. What differs is the cost
//! for the short inputs a shingle is (four words, 16–31 bytes for most English text):
//! `crc32fast` folds with carry-less multiplies only from 128 bytes on and takes shorter inputs
//! a table lookup per byte, 13.8 ns a 4-shingle (12.6 ns a Russian one); here a span is a few
//! 16-byte blocks folded with carry-less multiplies and one reduction, 7.0 ns (7.7 ns) (README,
//! "Shingle CRCs by carry-less multiplication").

/// The CRC-32 of `buf[s..e]` for each `(s, e)` of `spans`, in their order.
///
/// Panics, as slicing would, if a span is not within `buf`.
pub fn for_each_span_crc(
    buf: &[u8],
    spans: impl Iterator<Item = (usize, usize)>,
    mut f: impl FnMut(u32),
) {
    #[cfg(target_arch = "x86_64")]
    if clmul::wide_available() {
        // SAFETY: the CPU has the instructions `clmul::each_wide` is compiled for.
        unsafe { clmul::each_wide(buf, spans, f) };
        return;
    } else if clmul::available() {
        // SAFETY: the CPU has the instructions `clmul::each` is compiled for.
        unsafe { clmul::each(buf, spans, f) };
        return;
    }
    // `crc32fast::hash` asks the CPU's features anew on every call, a fifth of a shingle's
    // cost: a hasher made once and copied for each span asks them once.
    let fresh = crc32fast::Hasher::new();
    for (s, e) in spans {
        let mut h = fresh.clone();
        h.update(&buf[s..e]);
        f(h.finalize());
    }
}

/// `ZERO_RUNS[n]` is the CRC-32 of `n` zero bytes: what the all-ones initial value alone
/// contributes to the CRC of any `n` bytes, since the CRC is linear in the initial value and
/// the data together.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const ZERO_RUNS: [u32; 512] = zero_runs();

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const fn zero_runs() -> [u32; 512] {
    let mut out = [0u32; 512];
    let mut register = !0u32;
    let mut n = 0;
    while n < out.len() {
        out[n] = !register;
        let mut bit = 0;
        while bit < 8 {
            register = if register & 1 != 0 {
                (register >> 1) ^ 0xEDB8_8320
            } else {
                register >> 1
            };
            bit += 1;
        }
        n += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod clmul {
    use super::ZERO_RUNS;
    use std::arch::x86_64::*;

    // x^(128+32) and x^(128-32) mod P (folding by one 16-byte block), x^64 mod P, P itself and
    // Barrett's quotient x^64 / P, all bit-reflected: the constants of Intel's "Fast CRC
    // computation for generic polynomials using PCLMULQDQ" as crc32fast uses them.
    const K3: i64 = 0x1_7519_97d0;
    const K4: i64 = 0x0_ccaa_009e;
    const K5: i64 = 0x1_63cd_6124;
    const P_X: i64 = 0x1_DB71_0641;
    const U_PRIME: i64 = 0x1_F701_1641;

    /// A shuffle by `SHIFT[r..r + 16]` moves a block's first `r` bytes to its end and zeroes the
    /// rest (0x80 selects zero).
    static SHIFT: [u8; 32] = {
        let mut s = [0x80u8; 32];
        let mut i = 16;
        while i < 32 {
            s[i] = (i - 16) as u8;
            i += 1;
        }
        s
    };

    pub fn available() -> bool {
        is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1")
    }

    /// Whether the CPU has the 512-bit registers, their byte shifts and their carry-less
    /// multiplies that [`each_wide`] takes.
    pub fn wide_available() -> bool {
        available()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("vpclmulqdq")
    }

    /// Zero bytes before a message do not change a CRC started from zero, so a span is taken
    /// as whole 16-byte blocks, the first padded in front with zeros; the all-ones start is
    /// added at the end from `ZERO_RUNS`. Loads never leave `buf`.
    ///
    /// # Safety
    /// The CPU must have PCLMULQDQ, SSSE3 and SSE4.1.
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    pub unsafe fn each(
        buf: &[u8],
        spans: impl Iterator<Item = (usize, usize)>,
        f: impl FnMut(u32),
    ) {
        each_with::<false>(buf, spans, f)
    }

    /// [`each`] with the last steps of four spans' CRCs taken in one 512-bit register: the
    /// reduction of 128 bits to 32, five multiplies in a chain, once for four spans. (Profiles
    /// of `collect dedup` of the 80k dev corpus, four each: the CRC's samples 1,907–2,316
    /// with [`each`], 1,501–2,094 with this; the byte shift is AVX512BW's, and without that
    /// feature enabled here it was a call of its own, a tenth of the CRC's samples.)
    ///
    /// # Safety
    /// The CPU must have what [`wide_available`] asks for.
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,vpclmulqdq")]
    pub unsafe fn each_wide(
        buf: &[u8],
        spans: impl Iterator<Item = (usize, usize)>,
        f: impl FnMut(u32),
    ) {
        each_with::<true>(buf, spans, f)
    }

    /// The loop of [`each`] and [`each_wide`], compiled into each with its CPU's features.
    #[inline(always)]
    unsafe fn each_with<const WIDE: bool>(
        buf: &[u8],
        mut spans: impl Iterator<Item = (usize, usize)>,
        mut f: impl FnMut(u32),
    ) {
        let k3k4 = _mm_set_epi64x(K4, K3);
        // Spans go four at a time: each CRC is a chain of dependent multiplies whose latency,
        // not the multiplier's throughput, bounds one span, so four chains side by side keep
        // the multiplier busy. (`collect dedup` of the 80k dev corpus: 2,336 samples of the
        // CRC in a profile one span at a time, 1,940 four at a time; eight at a time, 2,290.)
        loop {
            let Some(first) = spans.next() else { return };
            let mut group = [first; LANES];
            let mut len = 1;
            while len < LANES {
                match spans.next() {
                    Some(span) => group[len] = span,
                    None => break,
                }
                len += 1;
            }
            if len == LANES && group.iter().all(|&(s, e)| folds(buf, s, e)) {
                let mut x = [_mm_setzero_si128(); LANES];
                for k in 0..LANES {
                    x[k] = folded(buf, group[k].0, group[k].1, k3k4);
                }
                let mut r = [0u32; LANES];
                if WIDE {
                    r = reduce_four(x);
                } else {
                    for k in 0..LANES {
                        r[k] = reduce(x[k], k3k4);
                    }
                }
                for k in 0..LANES {
                    r[k] ^= ZERO_RUNS[group[k].1 - group[k].0];
                }
                for c in r {
                    f(c);
                }
            } else {
                for &(s, e) in &group[..len] {
                    f(one(buf, s, e, k3k4));
                }
            }
        }
    }

    /// [`reduce`] of four registers at once, a 128-bit lane each of one 512-bit register.
    #[inline(always)]
    unsafe fn reduce_four(x: [__m128i; LANES]) -> [u32; LANES] {
        let wide = |a: i64, b: i64| _mm512_broadcast_i32x4(_mm_set_epi64x(a, b));
        let mut v = _mm512_castsi128_si512(x[0]);
        v = _mm512_inserti32x4::<1>(v, x[1]);
        v = _mm512_inserti32x4::<2>(v, x[2]);
        v = _mm512_inserti32x4::<3>(v, x[3]);
        let k3k4 = wide(K4, K3);
        let low32 = wide(0, 0xFFFF_FFFF);
        let v = _mm512_xor_si512(
            _mm512_clmulepi64_epi128::<0x10>(v, k3k4),
            _mm512_bsrli_epi128::<8>(v),
        );
        let v = _mm512_xor_si512(
            _mm512_clmulepi64_epi128::<0x00>(_mm512_and_si512(v, low32), wide(0, K5)),
            _mm512_bsrli_epi128::<4>(v),
        );
        let pu = wide(U_PRIME, P_X);
        let t1 = _mm512_clmulepi64_epi128::<0x10>(_mm512_and_si512(v, low32), pu);
        let t2 = _mm512_clmulepi64_epi128::<0x00>(_mm512_and_si512(t1, low32), pu);
        // The second 32 bits of each lane, gathered into the first four.
        let at = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13, 9, 5, 1);
        let r = _mm512_castsi512_si128(_mm512_permutexvar_epi32(at, _mm512_xor_si512(v, t2)));
        let mut out = [0u32; LANES];
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, r);
        out
    }

    /// Spans handed to [`each`]'s multiplies together.
    const LANES: usize = 4;

    /// Whether `buf[s..e]` is folded here: not empty, within the table of zero runs, and
    /// with 16 bytes to load from its start.
    #[inline]
    fn folds(buf: &[u8], s: usize, e: usize) -> bool {
        s < e && e - s < ZERO_RUNS.len() && s + 16 <= buf.len()
    }

    /// The CRC of `buf[s..e]`, any span.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    unsafe fn one(buf: &[u8], s: usize, e: usize, k3k4: __m128i) -> u32 {
        if s == e {
            0
        } else if folds(buf, s, e) {
            reduce(folded(buf, s, e, k3k4), k3k4) ^ ZERO_RUNS[e - s]
        } else {
            crc32fast::hash(&buf[s..e])
        }
    }

    /// `buf[s..e]` (a span that [`folds`]) folded to 16 bytes, padded in front with zeros to
    /// whole blocks.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    unsafe fn folded(buf: &[u8], s: usize, e: usize, k3k4: __m128i) -> __m128i {
        let bytes = &buf[s..e];
        let n = bytes.len();
        let at_s = load(bytes.as_ptr());
        let r = n % 16;
        let (mut x, mut at) = if r == 0 {
            (at_s, 16)
        } else {
            (_mm_shuffle_epi8(at_s, load(SHIFT.as_ptr().add(r))), r)
        };
        while at < n {
            x = fold(x, load(bytes.as_ptr().add(at)), k3k4);
            at += 16;
        }
        x
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn load(p: *const u8) -> __m128i {
        _mm_loadu_si128(p as *const __m128i)
    }

    /// `x` carried over the next 16 bytes and added to them.
    #[inline]
    #[target_feature(enable = "pclmulqdq")]
    unsafe fn fold(x: __m128i, next: __m128i, k3k4: __m128i) -> __m128i {
        let low = _mm_clmulepi64_si128(x, k3k4, 0x00);
        let high = _mm_clmulepi64_si128(x, k3k4, 0x11);
        _mm_xor_si128(_mm_xor_si128(next, low), high)
    }

    /// The CRC register, started from zero, after the 16 bytes `x`: 128 bits to 64 by folding,
    /// then to 32 by Barrett reduction (crc32fast's tail, which follows Linux and Chromium).
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse4.1")]
    unsafe fn reduce(x: __m128i, k3k4: __m128i) -> u32 {
        let low32 = _mm_set_epi32(0, 0, 0, !0);
        let x = _mm_xor_si128(_mm_clmulepi64_si128(x, k3k4, 0x10), _mm_srli_si128(x, 8));
        let x = _mm_xor_si128(
            _mm_clmulepi64_si128(_mm_and_si128(x, low32), _mm_set_epi64x(0, K5), 0x00),
            _mm_srli_si128(x, 4),
        );
        let pu = _mm_set_epi64x(U_PRIME, P_X);
        let t1 = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pu, 0x10);
        let t2 = _mm_clmulepi64_si128(_mm_and_si128(t1, low32), pu, 0x00);
        _mm_extract_epi32(_mm_xor_si128(x, t2), 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRCs of `spans`, by every way this CPU has of computing them, which must agree.
    fn crcs(buf: &[u8], spans: &[(usize, usize)]) -> Vec<u32> {
        let mut out = Vec::new();
        for_each_span_crc(buf, spans.iter().copied(), |c| out.push(c));
        #[cfg(target_arch = "x86_64")]
        for wide in [false, true] {
            let has = if wide {
                clmul::wide_available()
            } else {
                clmul::available()
            };
            if !has {
                continue;
            }
            let mut got = Vec::new();
            let push = |c| got.push(c);
            // SAFETY: the CPU has what the function called is compiled for (just asked).
            unsafe {
                if wide {
                    clmul::each_wide(buf, spans.iter().copied(), push);
                } else {
                    clmul::each(buf, spans.iter().copied(), push);
                }
            }
            assert_eq!(got, out, "wide {wide}: {spans:?}");
        }
        out
    }

    #[test]
    fn zero_runs_are_crcs_of_zero_bytes() {
        for n in [0, 1, 2, 15, 16, 17, 100, 511] {
            assert_eq!(
                ZERO_RUNS[n],
                crc32fast::hash(&vec![0u8; n]),
                "{n} zero bytes"
            );
        }
    }

    #[test]
    fn every_span_of_every_length_anywhere_is_crc32() {
        // Spans that start at the buffer's start, end at its end (where fewer than 16 bytes
        // are left to load, `crc32fast` hashes), cover whole blocks and parts of them, and
        // pass the table of zero runs, with bytes of every value.
        let mut rng = crate::sign::test_support::Lcg(7);
        let buf: Vec<u8> = (0..700).map(|_| rng.below(256) as u8).collect();
        let mut spans = Vec::new();
        for n in 0..=600 {
            for s in [0, 1, 5, 15, 16, 17, 31, 32, 33, 64] {
                spans.push((s, s + n));
            }
            spans.push((buf.len() - n, buf.len()));
        }
        let want: Vec<u32> = spans
            .iter()
            .map(|&(s, e)| crc32fast::hash(&buf[s..e]))
            .collect();
        assert_eq!(crcs(&buf, &spans), want);
    }

    #[test]
    fn spans_of_mixed_kinds_side_by_side_are_each_crc32() {
        // Spans taken four at a time mix lengths of one, two and three blocks, empty spans,
        // spans past the table of zero runs and spans too near the end to load a block: each
        // of a group, and every group with one of these, must give what it gives alone.
        let mut rng = crate::sign::test_support::Lcg(11);
        let buf: Vec<u8> = (0..2000).map(|_| rng.below(256) as u8).collect();
        for round in 0..300 {
            let spans: Vec<(usize, usize)> = (0..rng.below(13))
                .map(|_| {
                    let n = match rng.below(10) {
                        0 => 0,
                        1 => 512 + rng.below(200) as usize,
                        _ => 1 + rng.below(48) as usize,
                    };
                    let s = if rng.below(8) == 0 {
                        buf.len() - n.min(15)
                    } else {
                        rng.below((buf.len() - n) as u64) as usize
                    };
                    (s, (s + n).min(buf.len()))
                })
                .collect();
            let want: Vec<u32> = spans
                .iter()
                .map(|&(s, e)| crc32fast::hash(&buf[s..e]))
                .collect();
            assert_eq!(crcs(&buf, &spans), want, "round {round}: {spans:?}");
        }
    }

    #[test]
    fn a_buffer_shorter_than_a_block() {
        let buf = b"ab cd";
        assert_eq!(
            crcs(buf, &[(0, 5), (3, 5), (0, 0)]),
            vec![
                crc32fast::hash(b"ab cd"),
                crc32fast::hash(b"cd"),
                crc32fast::hash(b"")
            ]
        );
    }

    #[test]
    #[should_panic]
    fn a_span_past_the_buffer_panics_as_slicing_does() {
        crcs(&[0u8; 40], &[(30, 41)]);
    }
}
