//! SHA-256 of many messages on the CPU's SHA instructions, two messages at a time.
//!
//! One message's rounds form a single chain: each `sha256rnds2` waits for the one before, so
//! hashing one message at a time (ring) leaves the SHA unit idle much of each round. Two
//! messages hashed side by side, their rounds interleaved, fill those waits. `tape-sha256`
//! interleaves four only where the four have the same number of blocks, which texts of varied
//! lengths seldom do, and hashes the rest one at a time; here each of the two streams takes the
//! next message as soon as its own ends, so both stay busy whatever the lengths. On the dev
//! corpus's texts, in halves of a stored batch (`examples/hash_batches.rs`): ring one at a time
//! 1.74 GB/s, `tape-sha256` 1.60 GB/s, these two streams 2.85 GB/s.

use tape_sha256::Message;

/// Bytes of a SHA-256 block.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const BLOCK: usize = 64;

/// The SHA-256 of each message, in their order, or None where the CPU lacks the SHA
/// instructions (or is not x86-64).
pub fn hash_messages(messages: &[Message<'_>]) -> Option<Vec<[u8; 32]>> {
    #[cfg(target_arch = "x86_64")]
    if shani::available() {
        let mut out = vec![[0u8; 32]; messages.len()];
        // SAFETY: the CPU has the instructions `shani::hash_all` is compiled for.
        unsafe { shani::hash_all(messages, &mut out) };
        return Some(out);
    }
    let _ = messages;
    None
}

/// Where a stream is in its message: the next block to hash, of how many.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Cursor<'a> {
    pieces: [&'a [u8]; 3],
    /// Bytes of the message.
    len: usize,
    /// Blocks of the padded message.
    blocks: usize,
    next: usize,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl<'a> Cursor<'a> {
    fn of(m: &Message<'a>) -> Self {
        let len = m.prefix.len() + m.body.len() + m.tail.len();
        Cursor {
            pieces: [m.prefix, m.body, m.tail],
            len,
            // The message, the 0x80 byte and the 8-byte length, rounded up to blocks.
            blocks: (len + 9).div_ceil(BLOCK),
            next: 0,
        }
    }

    fn done(&self) -> bool {
        self.next == self.blocks
    }

    /// The next block: in place where it lies inside one piece, else assembled in `staging`
    /// (a block across pieces, and the last one or two, which hold the padding).
    fn block<'s>(&mut self, staging: &'s mut [u8; BLOCK]) -> &'s [u8; BLOCK]
    where
        'a: 's,
    {
        let from = self.next * BLOCK;
        self.next += 1;
        let mut start = 0;
        for piece in self.pieces {
            if from >= start && from + BLOCK <= start + piece.len() {
                let at = from - start;
                if let Some(block) = piece.get(at..at + BLOCK).and_then(|b| b.try_into().ok()) {
                    return block;
                }
            }
            start += piece.len();
        }
        self.assemble(from, staging);
        staging
    }

    /// The padded message's bytes `from..from + BLOCK` into `out`.
    fn assemble(&self, from: usize, out: &mut [u8; BLOCK]) {
        out.fill(0);
        let mut start = 0;
        for piece in self.pieces {
            let (lo, hi) = (from.max(start), (from + BLOCK).min(start + piece.len()));
            if lo < hi {
                out[lo - from..hi - from].copy_from_slice(&piece[lo - start..hi - start]);
            }
            start += piece.len();
        }
        if (from..from + BLOCK).contains(&self.len) {
            out[self.len - from] = 0x80;
        }
        if self.next == self.blocks {
            out[BLOCK - 8..].copy_from_slice(&((self.len as u64) * 8).to_be_bytes());
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod shani {
    use super::{Cursor, Message, BLOCK};
    use std::arch::x86_64::*;

    /// Messages hashed side by side: four, which need more vector registers than there are,
    /// went slower than two (the dev corpus's texts: 2.74–2.80 GB/s against 2.85–2.88).
    const STREAMS: usize = 2;

    pub fn available() -> bool {
        is_x86_feature_detected!("sha")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1")
    }

    const H0: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];

    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    /// Byte order of a big-endian word within each 4 bytes.
    const BSWAP: [u8; 16] = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

    /// The eight state words as the instructions hold them: A, B, E, F and C, D, G, H.
    #[derive(Clone, Copy)]
    struct State {
        abef: __m128i,
        cdgh: __m128i,
    }

    impl State {
        #[inline(always)]
        unsafe fn initial() -> Self {
            let abcd = _mm_loadu_si128(H0.as_ptr() as *const __m128i);
            let efgh = _mm_loadu_si128(H0.as_ptr().add(4) as *const __m128i);
            let badc = _mm_shuffle_epi32(abcd, 0xB1);
            let hgfe = _mm_shuffle_epi32(efgh, 0x1B);
            State {
                abef: _mm_alignr_epi8(badc, hgfe, 8),
                cdgh: _mm_blend_epi16(hgfe, badc, 0xF0),
            }
        }

        #[inline(always)]
        unsafe fn digest(self) -> [u8; 32] {
            let feba = _mm_shuffle_epi32(self.abef, 0x1B);
            let dchg = _mm_shuffle_epi32(self.cdgh, 0xB1);
            let abcd = _mm_blend_epi16(feba, dchg, 0xF0);
            let efgh = _mm_alignr_epi8(dchg, feba, 8);
            let swap = _mm_loadu_si128(BSWAP.as_ptr() as *const __m128i);
            let mut out = [0u8; 32];
            _mm_storeu_si128(
                out.as_mut_ptr() as *mut __m128i,
                _mm_shuffle_epi8(abcd, swap),
            );
            _mm_storeu_si128(
                out.as_mut_ptr().add(16) as *mut __m128i,
                _mm_shuffle_epi8(efgh, swap),
            );
            out
        }
    }

    /// A block's sixteen words, four to a vector, in the words' order.
    #[inline(always)]
    unsafe fn words(block: &[u8; BLOCK]) -> [__m128i; 4] {
        let swap = _mm_loadu_si128(BSWAP.as_ptr() as *const __m128i);
        let load = |k: usize| {
            _mm_shuffle_epi8(
                _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i),
                swap,
            )
        };
        [load(0), load(1), load(2), load(3)]
    }

    /// Rounds `4 * g` to `4 * g + 3` of one stream, and the schedule's words as far as they
    /// are needed: `w[g % 4]` holds words `4g..4g + 4` when the group starts.
    #[inline(always)]
    unsafe fn rounds(s: &mut State, w: &mut [__m128i; 4], g: usize) {
        let k = _mm_loadu_si128(K.as_ptr().add(4 * g) as *const __m128i);
        let wk = _mm_add_epi32(w[g % 4], k);
        s.cdgh = _mm_sha256rnds2_epu32(s.cdgh, s.abef, wk);
        // The schedule's words 4(g + 1)..: msg1 gave them W[t-16] + σ0(W[t-15]) two groups
        // ago; here W[t-7] is added and msg2 adds σ1(W[t-2]).
        if (3..=14).contains(&g) {
            let back7 = _mm_alignr_epi8(w[g % 4], w[(g + 3) % 4], 4);
            let next = (g + 1) % 4;
            w[next] = _mm_sha256msg2_epu32(_mm_add_epi32(w[next], back7), w[g % 4]);
        }
        s.abef = _mm_sha256rnds2_epu32(s.abef, s.cdgh, _mm_shuffle_epi32(wk, 0x0E));
        if (1..=12).contains(&g) {
            let later = (g + 3) % 4;
            w[later] = _mm_sha256msg1_epu32(w[later], w[g % 4]);
        }
    }

    /// One block into each of `N` states, their rounds interleaved.
    #[inline(always)]
    unsafe fn compress<const N: usize>(s: &mut [State; N], w: &mut [[__m128i; 4]; N]) {
        let before = *s;
        // Literal group numbers: a loop over them kept the range tests as branches.
        macro_rules! groups {
            ($($g:literal)*) => { $( for (s, w) in s.iter_mut().zip(w.iter_mut()) { rounds(s, w, $g); } )* };
        }
        groups!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        for (s, b) in s.iter_mut().zip(before) {
            s.abef = _mm_add_epi32(s.abef, b.abef);
            s.cdgh = _mm_add_epi32(s.cdgh, b.cdgh);
        }
    }

    /// A stream: the message it hashes (its number and cursor) and its state.
    struct Stream<'a> {
        message: usize,
        cursor: Cursor<'a>,
        state: State,
    }

    /// Hashes `messages` into `out`, [`STREAMS`] at a time: a stream whose message ends takes
    /// the next; once none is left, the last message finishes alone. Longest first, so that
    /// what is left alone at the end is short.
    ///
    /// # Safety
    ///
    /// The CPU must have the instructions [`available`] asks for. Every load reads within a
    /// 64-byte block [`Cursor::block`] gave.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub unsafe fn hash_all(messages: &[Message<'_>], out: &mut [[u8; 32]]) {
        let mut order: Vec<usize> = (0..messages.len()).collect();
        order.sort_unstable_by_key(|&i| {
            let m = &messages[i];
            std::cmp::Reverse(m.prefix.len() + m.body.len() + m.tail.len())
        });
        let mut queue = order.into_iter();
        let mut take = || {
            queue.next().map(|i| Stream {
                message: i,
                cursor: Cursor::of(&messages[i]),
                state: State::initial(),
            })
        };
        let mut streams: [Option<Stream>; STREAMS] = std::array::from_fn(|_| take());
        let mut staging = [[0u8; BLOCK]; STREAMS];
        loop {
            if streams.iter().all(Option::is_some) {
                let mut s = [State::initial(); STREAMS];
                let mut w = [[_mm_setzero_si128(); 4]; STREAMS];
                for (((stream, s), w), staging) in streams
                    .iter_mut()
                    .flatten()
                    .zip(&mut s)
                    .zip(&mut w)
                    .zip(&mut staging)
                {
                    *s = stream.state;
                    *w = words(stream.cursor.block(staging));
                }
                compress(&mut s, &mut w);
                for (stream, s) in streams.iter_mut().flatten().zip(s) {
                    stream.state = s;
                }
            } else {
                // The queue is empty: what is left finishes alone.
                let Some(stream) = streams.iter_mut().flatten().next() else {
                    break;
                };
                let mut w = [words(stream.cursor.block(&mut staging[0]))];
                let mut s = [stream.state];
                compress(&mut s, &mut w);
                stream.state = s[0];
            }
            for stream in &mut streams {
                if stream.as_ref().is_some_and(|s| s.cursor.done()) {
                    if let Some(s) = stream.take() {
                        out[s.message] = s.state.digest();
                    }
                    *stream = take();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::Lcg;

    fn ring(m: &Message<'_>) -> [u8; 32] {
        let mut h = ring::digest::Context::new(&ring::digest::SHA256);
        for piece in [m.prefix, m.body, m.tail] {
            h.update(piece);
        }
        h.finish().as_ref().try_into().unwrap()
    }

    #[test]
    fn every_length_and_split_gives_ring_s_digest() {
        let Some(_) = hash_messages(&[]) else {
            // Nothing to compare on a CPU without the instructions: the callers hash with
            // ring there.
            return;
        };
        let mut rng = Lcg(11);
        let bytes: Vec<u8> = (0..600).map(|_| rng.below(256) as u8).collect();
        // Every length across the padding's edges (55, 56, 63, 64, 119, 120 …), whole and
        // split into three pieces at random places; many at once, so the streams take new
        // messages while the other is half way.
        let mut messages = Vec::new();
        for len in 0..300 {
            let body = &bytes[..len];
            messages.push(Message::new(body));
            let a = rng.below(len as u64 + 1) as usize;
            let b = a + rng.below((len - a) as u64 + 1) as usize;
            messages.push(Message::pair(&body[..a], &body[a..b], &body[b..]));
        }
        for n in [0, 1, 2, 3, messages.len()] {
            let got = hash_messages(&messages[..n]).unwrap();
            for (m, digest) in messages[..n].iter().zip(&got) {
                assert_eq!(
                    *digest,
                    ring(m),
                    "{} bytes",
                    m.prefix.len() + m.body.len() + m.tail.len()
                );
            }
        }
        // The empty message's digest, as published.
        assert_eq!(
            hex::encode(hash_messages(&[Message::new(b"")]).unwrap()[0]),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
