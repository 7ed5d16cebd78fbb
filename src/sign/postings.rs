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

/// Inverted index in compressed rows: for each element held by more than one document, its
/// *row*, the documents holding it; for each document, where the rows of its elements are.
///
/// Documents hold places of rows rather than elements, so counting pairs never looks an
/// element up: at millions of elements a hash map from element to row costs more, in memory
/// and in time, than the rows themselves. An element no other document holds (most of them: a
/// text's own wording) has no row, and its document knows that without reading anything.
/// Reading every element's offset and then its row cost two reads of memory that no cache
/// held, and that was most of the time spent counting the 80k dev corpus's pairs.
pub struct Postings {
    /// The rows one after another, each its length and then its documents in increasing
    /// order.
    rows: Vec<u32>,
    /// Of document `d`, `row_places[doc_offsets[d]..doc_offsets[d + 1]]`: for each of its
    /// elements, in element order, the place in `rows` of the element's row, or [`ALONE`].
    doc_offsets: Vec<u32>,
    row_places: Vec<u32>,
}

/// The row place of an element that only one document holds.
const ALONE: u32 = u32::MAX;

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
        let mut row_places = vec![0u32; total as usize];
        let mut rows = Vec::new();
        let starts = part_starts(sigs);
        let cuts = PartCuts::new(sigs, &starts);
        // (element, document, position in the document's signature) of part `p`, sorted, and
        // the room its rows take.
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
            let room = entries
                .chunk_by(|a, b| a.0 == b.0)
                .filter(|same| same.len() > 1)
                .map(|same| 1 + same.len())
                .sum();
            (entries, room)
        };
        // A document's row places are written by every part, each into the places of its own
        // elements: no place twice.
        let places_of_docs = shared_slots(&mut row_places);
        // Parts are gathered, sorted and laid out a wave at a time, a part per thread, so only
        // a wave's entries are held. A part's rows go after the rows of the parts before it.
        let mut rows_base = 0usize;
        let wave = rayon::current_num_threads().max(1);
        for first in (0..starts.len()).step_by(wave) {
            let parts: Vec<GatheredPart> = (first..(first + wave).min(starts.len()))
                .into_par_iter()
                .with_max_len(1)
                .map(gather)
                .collect();
            let room: usize = parts.iter().map(|(_, room)| room).sum();
            rows.resize(rows_base + room, 0);
            let mut jobs = Vec::with_capacity(parts.len());
            let mut rest = &mut rows[rows_base..];
            for (entries, room) in &parts {
                let (slots, after) = std::mem::take(&mut rest).split_at_mut(*room);
                rest = after;
                jobs.push((entries, slots, rows_base));
                rows_base += room;
            }
            jobs.into_par_iter()
                .with_max_len(1)
                .for_each(|(entries, slots, base)| {
                    let place_of =
                        |&(_, doc, i): &(u64, u32, u32)| (doc_offsets[doc as usize] + i) as usize;
                    let mut at = 0;
                    let relaxed = std::sync::atomic::Ordering::Relaxed;
                    for same in entries.chunk_by(|a, b| a.0 == b.0) {
                        if let [alone] = same {
                            places_of_docs[place_of(alone)].store(ALONE, relaxed);
                            continue;
                        }
                        slots[at] = same.len() as u32;
                        for (slot, entry) in slots[at + 1..].iter_mut().zip(same) {
                            *slot = entry.1;
                            places_of_docs[place_of(entry)].store((base + at) as u32, relaxed);
                        }
                        at += 1 + same.len();
                    }
                });
        }
        rows.shrink_to_fit();
        Postings {
            rows,
            doc_offsets,
            row_places,
        }
    }

    /// The rows of document `doc`'s elements that other documents hold too, in element
    /// order: each the documents holding its element, in increasing order.
    pub fn rows_of(&self, doc: usize) -> impl Iterator<Item = &[u32]> + '_ {
        self.row_places[self.doc_offsets[doc] as usize..self.doc_offsets[doc + 1] as usize]
            .iter()
            .filter(|&&place| place != ALONE)
            .map(|&place| {
                let start = place as usize + 1;
                &self.rows[start..start + self.rows[place as usize] as usize]
            })
    }
}

/// A part of [`Postings::build`]: its (element, document, position) entries sorted by
/// element, and the room its rows take in [`Postings::rows`].
type GatheredPart = (Vec<(u64, u32, u32)>, usize);

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
                    for row in postings.rows_of(a) {
                        // Rows are sorted: only partners with a larger index, so each pair
                        // once. They are the row's tail, read from its end, so no search
                        // finds where it starts (without a binary search per row, 80k
                        // `collect dedup` 3.21 → 3.12 s); the sort below undoes the order
                        // they are counted in.
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
        let holders = |e: u64| -> Vec<u32> {
            (0..sigs.len() as u32)
                .filter(|&o| sigs[o as usize].contains(&e))
                .collect()
        };
        let mut alone = 0;
        for (d, sig) in sigs.iter().enumerate() {
            let expected: Vec<Vec<u32>> = sig
                .iter()
                .map(|&e| holders(e))
                .filter(|held| held.len() > 1)
                .collect();
            alone += sig.len() - expected.len();
            let rows: Vec<Vec<u32>> = postings.rows_of(d).map(<[u32]>::to_vec).collect();
            assert_eq!(rows, expected, "document {d}");
        }
        // Held once: `u64::MAX - d` for d from 1 on, and `(1 << 40) + 1`.
        assert_eq!(alone, 3000);
        // One row per element held more than once, each its length and its documents.
        let mut shared: Vec<u64> = sigs.iter().flatten().copied().collect();
        shared.sort_unstable();
        let held_twice = shared.chunk_by(|a, b| a == b).filter(|s| s.len() > 1);
        let room: usize = held_twice.map(|s| 1 + s.len()).sum();
        assert_eq!(postings.rows.len(), room);
        let empty = Postings::build(&[]);
        assert!(empty.rows.is_empty() && empty.row_places.is_empty());
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
            (p.rows, p.doc_offsets, p.row_places)
        };
        let one = built(1);
        // Waves of one part and of several, and a last wave shorter than the others.
        for threads in [2, 3, 5, 16] {
            assert_eq!(built(threads), one, "{threads} threads");
        }
        let mut rows: Vec<u32> = one.2.iter().copied().filter(|&p| p != ALONE).collect();
        rows.sort_unstable();
        rows.dedup();
        assert_eq!(rows.len(), {
            let mut all: Vec<u64> = sigs.iter().flatten().copied().collect();
            all.sort_unstable();
            let held_twice = all.chunk_by(|a, b| a == b).filter(|s| s.len() > 1);
            held_twice.count()
        });
    }
}
