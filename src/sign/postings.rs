//! The inverted index over signatures, and the pair counting it makes cheap.
//!
//! Exact on the signatures: for every pair with at least one shared element it computes
//! |A∩B| by counting hits in the index, never by enumerating all N² pairs. It lives beside the
//! detectors because their default candidate search is this count; the dedup engine asks the
//! detector for candidates and never builds an index itself.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Inverted index: element → documents holding it, in compressed rows.
pub struct Postings {
    keys: FxHashMap<u64, u32>,
    offsets: Vec<u32>,
    docs: Vec<u32>,
}

impl Postings {
    /// Builds the index of `sigs` (document i holds the elements of `sigs[i]`).
    pub fn build(sigs: &[Vec<u64>]) -> Postings {
        let mut entries: Vec<(u64, u32)> = Vec::with_capacity(sigs.iter().map(Vec::len).sum());
        for (doc, sig) in sigs.iter().enumerate() {
            entries.extend(sig.iter().map(|&e| (e, doc as u32)));
        }
        entries.par_sort_unstable();
        let mut keys = FxHashMap::default();
        let mut offsets = Vec::new();
        let mut docs = Vec::with_capacity(entries.len());
        let mut last = None;
        for (e, d) in entries {
            if last != Some(e) {
                keys.insert(e, offsets.len() as u32);
                offsets.push(docs.len() as u32);
                last = Some(e);
            }
            docs.push(d);
        }
        offsets.push(docs.len() as u32);
        Postings {
            keys,
            offsets,
            docs,
        }
    }

    /// Documents holding `elem`, in increasing order.
    pub fn get(&self, elem: u64) -> &[u32] {
        match self.keys.get(&elem) {
            Some(&k) => {
                &self.docs[self.offsets[k as usize] as usize..self.offsets[k as usize + 1] as usize]
            }
            None => &[],
        }
    }
}

/// Every pair of documents sharing at least one element, with intersection counts, among the
/// pairs that involve one of the first `queries` documents.
///
/// Returns `(a, b, |A∩B|)` with `a < b`, sorted. Work is proportional to the sum over elements
/// of the squared posting length, and is split over the rayon pool by document. All-vs-all
/// passes `queries = sigs.len()`; an update puts its newcomers first and their stored partners
/// after them, so pairs of two stored texts, settled long ago, are never counted again.
pub fn shared_pairs(
    sigs: &[Vec<u64>],
    postings: &Postings,
    queries: usize,
) -> Vec<(u32, u32, u32)> {
    let n = sigs.len();
    let mut out: Vec<(u32, u32, u32)> = (0..queries.min(n))
        .into_par_iter()
        .with_min_len(64)
        .map_init(
            || (vec![0u32; n], Vec::<u32>::new()),
            |(counts, touched), a| {
                for &e in &sigs[a] {
                    let list = postings.get(e);
                    // Lists are sorted: only partners with a larger index, so each pair once.
                    let start = list.partition_point(|&d| d as usize <= a);
                    for &b in &list[start..] {
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
        .flatten_iter()
        .collect();
    out.par_sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::intersection_size;

    #[test]
    fn postings_pairs_equal_naive_pairs() {
        // Pseudo-random sets with heavy overlap, including a very common element.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % 60
        };
        let sigs: Vec<Vec<u64>> = (0..80)
            .map(|_| crate::sign::into_set((0..12).map(|_| next()).collect()))
            .collect();
        let postings = Postings::build(&sigs);
        let fast = shared_pairs(&sigs, &postings, sigs.len());
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
        let postings = Postings::build(&sigs);
        // Only pairs involving document 0: (0,1) and (0,2), never (1,2).
        assert_eq!(
            shared_pairs(&sigs, &postings, 1),
            vec![(0, 1, 1), (0, 2, 1)]
        );
        assert_eq!(shared_pairs(&sigs, &postings, 3).len(), 3);
    }
}
