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
        let mut postings = Postings {
            offsets: Vec::new(),
            docs: Vec::with_capacity(total as usize),
            doc_offsets,
            doc_keys: vec![0; total as usize],
        };
        let mut last = None;
        let starts = part_starts(sigs);
        let cuts = PartCuts::new(sigs, &starts);
        // (element, document, position in the document's signature) of part `p`, sorted.
        let gather = |p: usize| -> Vec<(u64, u32, u32)> {
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
            entries
        };
        // Numbering a part's keys is one pass in order, so the next part is gathered and
        // sorted on the other core meanwhile (both steps were serial, the index's build half
        // idle).
        let mut next = gather(0);
        for p in 0..starts.len() {
            let entries = std::mem::take(&mut next);
            let postings = &mut postings;
            let last = &mut last;
            let number = move || {
                for (e, doc, i) in entries {
                    if *last != Some(e) {
                        postings.offsets.push(postings.docs.len() as u32);
                        *last = Some(e);
                    }
                    let key = postings.offsets.len() as u32 - 1;
                    postings.doc_keys[(postings.doc_offsets[doc as usize] + i) as usize] = key;
                    postings.docs.push(doc);
                }
            };
            let following = p + 1 < starts.len();
            next = rayon::join(
                number,
                || if following { gather(p + 1) } else { Vec::new() },
            )
            .1;
        }
        postings.offsets.push(postings.docs.len() as u32);
        postings.offsets.shrink_to_fit();
        postings
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
}
