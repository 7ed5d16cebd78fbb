//! The inverted index over signatures, and the pair counting it makes cheap.
//!
//! Exact on the signatures: for every pair with at least one shared element it computes
//! |A∩B| by counting hits in the index, never by enumerating all N² pairs. It lives beside the
//! detectors because their default candidate search is this count; the dedup engine asks the
//! detector for candidates and never builds an index itself.

use super::PartCuts;
use rayon::prelude::*;

/// Parts the index is built in, each sorted on its own: the (element, document) list is held
/// a part at a time (two while one is numbered and the next gathered), not whole.
const BUILD_PARTS: usize = 16;

/// Query documents whose pairs are counted and handed on together: small enough that a
/// block's pairs are a few megabytes, large enough to keep both cores busy.
const QUERY_BLOCK: usize = 2048;

/// Inverted index in compressed rows: for each distinct element (a *key*, numbered in
/// increasing element order) the documents holding it, and for each document its keys.
///
/// Documents hold key numbers rather than elements, so counting pairs never looks an element
/// up: at millions of elements a hash map from element to row costs more, in memory and in
/// time, than the rows themselves.
pub struct Postings {
    /// Row of key `k`: `docs[offsets[k]..offsets[k + 1]]`, in increasing order.
    offsets: Vec<u32>,
    docs: Vec<u32>,
    /// Keys of document `d`: `doc_keys[doc_offsets[d]..doc_offsets[d + 1]]`.
    doc_offsets: Vec<u32>,
    doc_keys: Vec<u32>,
}

impl Postings {
    /// Builds the index of `sigs` (document i holds the elements of `sigs[i]`: sorted, without
    /// repeats, as signatures are).
    pub fn build(sigs: &[Vec<u64>]) -> Postings {
        // The parts are cut by searching each signature: an unsorted one would lose elements.
        debug_assert!(sigs.iter().all(|s| s.windows(2).all(|w| w[0] < w[1])));
        let mut doc_offsets = Vec::with_capacity(sigs.len() + 1);
        let mut total = 0u32;
        doc_offsets.push(0);
        for sig in sigs {
            total += sig.len() as u32;
            doc_offsets.push(total);
        }
        let mut docs = vec![0u32; total as usize];
        let mut doc_keys = vec![0u32; total as usize];
        let mut offsets = Vec::new();
        let starts = part_starts(sigs);
        let cuts = PartCuts::new(sigs, &starts);
        // (element, document, position in the document's signature) of part `p`, sorted, and
        // how many distinct elements it holds.
        let gather = |p: usize| -> GatheredPart {
            let mut entries = Vec::new();
            for (doc, sig) in sigs.iter().enumerate() {
                let part = cuts.range(doc, p);
                entries.extend(part.map(|i| (sig[i], doc as u32, i as u32)));
            }
            // By element alone: gathered in document order, and a radix sort is stable, so
            // an element's documents stay in increasing order, as sorting whole entries would
            // leave them (80k dev corpus, the index's build 272–292 → 227–275 ms, where the
            // sort was a parallel comparison sort between numbering and gathering).
            radsort::sort_by_key(&mut entries, |e| e.0);
            let distinct = entries.chunk_by(|a, b| a.0 == b.0).count() as u32;
            (entries, distinct)
        };
        // A document's keys are written by every part, each into the places of its own
        // elements: no place twice.
        let keys_of_docs = shared_slots(&mut doc_keys);
        // Parts are gathered, sorted and numbered a wave at a time, a part per thread, so only
        // a wave's entries are held. A part's keys and places follow from the sizes of the
        // parts before it: its distinct elements and its entries.
        let (mut key_base, mut place_base) = (0u32, 0usize);
        let wave = rayon::current_num_threads().max(1);
        for first in (0..starts.len()).step_by(wave) {
            let parts: Vec<GatheredPart> = (first..(first + wave).min(starts.len()))
                .into_par_iter()
                .with_max_len(1)
                .map(gather)
                .collect();
            let mut jobs = Vec::with_capacity(parts.len());
            let mut rest = &mut docs[place_base..];
            for (entries, distinct) in &parts {
                let (slots, after) = std::mem::take(&mut rest).split_at_mut(entries.len());
                rest = after;
                jobs.push((entries, slots, key_base, place_base));
                key_base += distinct;
                place_base += entries.len();
            }
            let numbered: Vec<Vec<u32>> = jobs
                .into_par_iter()
                .with_max_len(1)
                .map(|(entries, slots, key_base, place_base)| {
                    let mut starts_of_keys = Vec::new();
                    let mut last = None;
                    for (at, (&(e, doc, i), slot)) in entries.iter().zip(slots).enumerate() {
                        if last != Some(e) {
                            starts_of_keys.push((place_base + at) as u32);
                            last = Some(e);
                        }
                        let key = key_base + starts_of_keys.len() as u32 - 1;
                        let place = (doc_offsets[doc as usize] + i) as usize;
                        keys_of_docs[place].store(key, std::sync::atomic::Ordering::Relaxed);
                        *slot = doc;
                    }
                    starts_of_keys
                })
                .collect();
            for part in numbered {
                offsets.extend(part);
            }
        }
        offsets.push(total);
        offsets.shrink_to_fit();
        Postings {
            offsets,
            docs,
            doc_offsets,
            doc_keys,
        }
    }

    /// Documents holding key `key`, in increasing order.
    pub fn row(&self, key: u32) -> &[u32] {
        &self.docs[self.offsets[key as usize] as usize..self.offsets[key as usize + 1] as usize]
    }

    /// Keys of document `doc`'s elements.
    pub fn keys_of(&self, doc: usize) -> &[u32] {
        &self.doc_keys[self.doc_offsets[doc] as usize..self.doc_offsets[doc + 1] as usize]
    }
}

/// A part of [`Postings::build`]: its (element, document, position) entries sorted by
/// element, and how many distinct elements they hold.
type GatheredPart = (Vec<(u64, u32, u32)>, u32);

/// `slots` as places that threads may each write: every place is written by one of them only
/// (the index's parts own disjoint places), and reading waits for them all.
fn shared_slots(slots: &mut [u32]) -> &[std::sync::atomic::AtomicU32] {
    // SAFETY: `AtomicU32` has the size and alignment of `u32`, and the exclusive borrow of
    // `slots` is held for as long as the atomic view lives, so nothing else reads or writes
    // them meanwhile.
    unsafe { &*(slots as *mut [u32] as *const [std::sync::atomic::AtomicU32]) }
}

/// First elements of the build's parts, in increasing order, from a sample of the elements:
/// parts of about equal size whatever the elements' distribution (CRC32 values, tagged
/// hashes).
fn part_starts(sigs: &[Vec<u64>]) -> Vec<u64> {
    let mut sample: Vec<u64> = sigs
        .iter()
        .flat_map(|s| s.iter().step_by(64))
        .copied()
        .collect();
    sample.sort_unstable();
    let mut starts = vec![0];
    for p in 1..BUILD_PARTS {
        if let Some(&b) = sample.get(p * sample.len() / BUILD_PARTS) {
            if b > *starts.last().unwrap_or(&0) {
                starts.push(b);
            }
        }
    }
    starts
}

/// Every pair of documents sharing at least one element, with intersection counts, among the
/// pairs that involve one of the first `queries` documents, handed to `sink` in blocks.
///
/// Hands on `(a, b, |A∩B|)` with `a < b`, in increasing order across blocks, so the caller
/// keeps what it wants of each block and the whole list never sits in memory. Work is
/// proportional to the sum over elements of the squared posting length, and is split over the
/// rayon pool by document. All-vs-all passes `queries = sigs.len()`; an update puts its
/// newcomers first and their stored partners after them, so pairs of two stored texts,
/// settled long ago, are never counted again.
pub fn shared_pairs(
    sigs: &[Vec<u64>],
    postings: &Postings,
    queries: usize,
    sink: &mut dyn FnMut(Vec<(u32, u32, u32)>),
) {
    let n = sigs.len();
    let queries = queries.min(n);
    for block in (0..queries).step_by(QUERY_BLOCK) {
        let per_doc: Vec<Vec<(u32, u32, u32)>> = (block..(block + QUERY_BLOCK).min(queries))
            .into_par_iter()
            .with_min_len(64)
            .map_init(
                || (vec![0u32; n], Vec::<u32>::new()),
                |(counts, touched), a| {
                    for &key in postings.keys_of(a) {
                        // Rows are sorted: only partners with a larger index, so each pair
                        // once. They are the row's tail, read from its end, so no search
                        // finds where it starts (without a binary search per key, 80k
                        // `collect dedup` 3.21 → 3.12 s); the sort below undoes the order
                        // they are counted in.
                        let row = postings.row(key);
                        for &b in row.iter().rev().take_while(|&&d| d as usize > a) {
                            let c = &mut counts[b as usize];
                            if *c == 0 {
                                touched.push(b);
                            }
                            *c += 1;
                        }
                    }
                    touched.sort_unstable();
                    let found: Vec<(u32, u32, u32)> = touched
                        .iter()
                        .map(|&b| (a as u32, b, counts[b as usize]))
                        .collect();
                    for &b in touched.iter() {
                        counts[b as usize] = 0;
                    }
                    touched.clear();
                    found
                },
            )
            .collect();
        sink(per_doc.concat());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::intersection_size;

    /// [`shared_pairs`] gathered into one list.
    fn all_shared_pairs(sigs: &[Vec<u64>], queries: usize) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        shared_pairs(sigs, &Postings::build(sigs), queries, &mut |block| {
            out.extend(block)
        });
        out
    }

    #[test]
    fn postings_pairs_equal_naive_pairs() {
        // Pseudo-random sets with overlap, and an element in a third of them.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % 3000
        };
        // More documents than a block of queries, so pairs cross blocks.
        let sigs: Vec<Vec<u64>> = (0..QUERY_BLOCK + 300)
            .map(|d| {
                let mut sig: Vec<u64> = (0..12).map(|_| next()).collect();
                if d % 3 == 0 {
                    sig.push(5000);
                }
                crate::sign::into_set(sig)
            })
            .collect();
        let fast = all_shared_pairs(&sigs, sigs.len());
        let mut naive = Vec::new();
        for a in 0..sigs.len() {
            for b in a + 1..sigs.len() {
                let i = intersection_size(&sigs[a], &sigs[b]);
                if i > 0 {
                    naive.push((a as u32, b as u32, i as u32));
                }
            }
        }
        assert_eq!(fast, naive);
    }

    #[test]
    fn queries_limit_pairs_to_the_first_documents() {
        let sigs = vec![vec![1u64, 2], vec![2, 3], vec![1, 3]];
        // Only pairs involving document 0: (0,1) and (0,2), never (1,2).
        assert_eq!(all_shared_pairs(&sigs, 1), vec![(0, 1, 1), (0, 2, 1)]);
        assert_eq!(all_shared_pairs(&sigs, 3).len(), 3);
    }

    #[test]
    fn rows_hold_their_documents_across_the_whole_element_range() {
        // Elements with high bits set (tagged), small ones and u64::MAX itself, in more
        // documents than a sample of every 64th element has parts for.
        let mut sigs: Vec<Vec<u64>> = vec![
            vec![0, 3u64, 1 << 40, u64::MAX],
            vec![3, (1 << 40) + 1],
            vec![1 << 40, u64::MAX],
        ];
        sigs.extend((0..3000u64).map(|d| vec![d * 7 % 1000, 1 << (20 + d % 40), u64::MAX - d]));
        let sigs: Vec<Vec<u64>> = sigs.into_iter().map(crate::sign::into_set).collect();
        let postings = Postings::build(&sigs);
        let mut seen_keys = std::collections::BTreeMap::new();
        for (d, sig) in sigs.iter().enumerate() {
            let keys = postings.keys_of(d);
            assert_eq!(keys.len(), sig.len());
            for (&e, &k) in sig.iter().zip(keys) {
                let holders: Vec<u32> = (0..sigs.len() as u32)
                    .filter(|&o| sigs[o as usize].contains(&e))
                    .collect();
                assert_eq!(postings.row(k), holders, "element {e}");
                // One key per element, numbered in element order.
                assert_eq!(*seen_keys.entry(e).or_insert(k), k);
            }
        }
        let keys: Vec<u32> = seen_keys.values().copied().collect();
        assert_eq!(keys, (0..keys.len() as u32).collect::<Vec<_>>());
        let empty = Postings::build(&[]);
        assert!(empty.docs.is_empty() && empty.offsets == [0]);
    }

    #[test]
    fn the_index_is_the_same_whatever_the_threads_numbering_its_parts() {
        let mut rng = crate::sign::test_support::Lcg(3);
        let sigs: Vec<Vec<u64>> = (0..700)
            .map(|_| {
                let n = rng.below(40);
                crate::sign::into_set((0..n).map(|_| rng.below(5000) << 40).collect())
            })
            .collect();
        let built = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let p = pool.install(|| Postings::build(&sigs));
            (p.offsets, p.docs, p.doc_offsets, p.doc_keys)
        };
        let one = built(1);
        // Waves of one part and of several, and a last wave shorter than the others.
        for threads in [2, 3, 5, 16] {
            assert_eq!(built(threads), one, "{threads} threads");
        }
        assert_eq!(one.0.len() - 1, {
            let mut all: Vec<u64> = sigs.iter().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            all.len()
        });
    }
}
