//! Duplicate clusters as formal concept analysis defines them (docs/method.md §10.5): the
//! frequent closed sets of documents in the context "signature element × document".
//!
//! A set of documents D is *closed* when no other document holds every signature element the
//! documents of D all share, and *k-frequent* when they share at least `k` elements. Each
//! closed set is a cluster of documents held together by a common part of their signatures,
//! whatever their pairwise scores say. The sets are mined directly, not assembled from pairs:
//! LCM's prefix-preserving closure extension (Uno et al., FIMI'04), where the transactions are
//! the signature elements (each the list of documents holding it) and the items are the
//! documents. Every closed set is reached exactly once, so the cost follows the number of
//! closed sets, not the number of subsets; FPmax*, which the method's paper used, lists the
//! maximal ones among them (kept here as [`Mined::maximal`]).
//!
//! The review queue (`collect review --clusters closed`) groups a pair by the closed set its two
//! texts generate ([`Context::pair_closure`]): the smallest closed set holding both, which is
//! the one the search lists for them, found without listing the others.

use rustc_hash::FxHashMap;

/// Elements held by more documents than this are left out of the context: boilerplate shared
/// by a crowd is not what makes documents copies of each other, and its posting list would make
/// every step of the search pay for the crowd.
pub const MAX_HOLDERS: usize = 200;

/// Closed sets visited before the search stops (a low `k` on a large corpus can have many).
pub const MAX_SETS: usize = 1_000_000;

/// What the search found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mined {
    /// Closed sets of at least two documents sharing at least `k` elements, each sorted; the
    /// larger sets first.
    pub closed: Vec<Vec<u32>>,
    /// Indexes (into `closed`) of the maximal ones: contained in no other k-frequent closed set.
    pub maximal: Vec<usize>,
    /// Whether the search stopped at [`MAX_SETS`].
    pub truncated: bool,
}

/// The context "signature element × document": each element held by two to [`MAX_HOLDERS`]
/// documents, as the list of its holders (a transaction).
pub struct Context {
    /// The holders of each kept element, sorted; the elements in a fixed order.
    transactions: Vec<Vec<u32>>,
    /// The transactions (by index) each document is in, ascending.
    of_doc: Vec<Vec<u32>>,
}

impl Context {
    /// The context of `sigs` (one sorted signature per document).
    pub fn new(sigs: &[Vec<u64>]) -> Context {
        let transactions = transactions(sigs);
        let mut of_doc: Vec<Vec<u32>> = vec![Vec::new(); sigs.len()];
        for (t, docs) in transactions.iter().enumerate() {
            for &d in docs {
                of_doc[d as usize].push(t as u32);
            }
        }
        Context {
            transactions,
            of_doc,
        }
    }

    /// The closed set documents `a` and `b` generate — every document holding each element
    /// the two share — when they share at least `k` elements of the context; None below `k`.
    pub fn pair_closure(&self, a: u32, b: u32, k: usize) -> Option<Vec<u32>> {
        let (ta, tb) = (&self.of_doc[a as usize], &self.of_doc[b as usize]);
        let mut shared = Vec::with_capacity(ta.len().min(tb.len()));
        let (mut i, mut j) = (0, 0);
        while i < ta.len() && j < tb.len() {
            match ta[i].cmp(&tb[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared.push(ta[i]);
                    i += 1;
                    j += 1;
                }
            }
        }
        (shared.len() >= k.max(1)).then(|| holding_all(&self.transactions, &shared))
    }
}

/// The transactions of the context of `sigs`: the holders of each element that two to
/// [`MAX_HOLDERS`] documents hold, sorted, in a fixed order.
fn transactions(sigs: &[Vec<u64>]) -> Vec<Vec<u32>> {
    let mut holders: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for (d, sig) in sigs.iter().enumerate() {
        for &e in sig {
            holders.entry(e).or_default().push(d as u32);
        }
    }
    let mut transactions: Vec<Vec<u32>> = holders
        .into_values()
        .filter(|docs| docs.len() >= 2 && docs.len() <= MAX_HOLDERS)
        .collect();
    // A fixed order makes the search, and a truncated result, the same on every run.
    transactions.sort_unstable();
    transactions
}

/// Mines the k-frequent closed document sets of `sigs` (one sorted signature per document).
pub fn closed_sets(sigs: &[Vec<u64>], k: usize) -> Mined {
    let k = k.max(1);
    let transactions = transactions(sigs);
    let mut search = Search {
        transactions: &transactions,
        k,
        out: Vec::new(),
        visited: 0,
        truncated: false,
    };
    let all: Vec<u32> = (0..transactions.len() as u32).collect();
    search.extend(&[], None, &all);
    let mut closed = search.out;
    closed.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    let maximal = maximal_sets(&closed);
    Mined {
        closed,
        maximal,
        truncated: search.truncated,
    }
}

struct Search<'a> {
    transactions: &'a [Vec<u32>],
    k: usize,
    out: Vec<Vec<u32>>,
    visited: usize,
    truncated: bool,
}

impl Search<'_> {
    /// Extends the closed set `set` (whose last added document is `tail`, held by the
    /// transactions `occ`) by each larger document, as LCM does.
    fn extend(&mut self, set: &[u32], tail: Option<u32>, occ: &[u32]) {
        // Occurrence deliver: the transactions of every candidate in one pass over `occ`.
        let mut buckets: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &t in occ {
            for &d in &self.transactions[t as usize] {
                if tail.is_none_or(|tl| d > tl) && set.binary_search(&d).is_err() {
                    buckets.entry(d).or_default().push(t);
                }
            }
        }
        let mut candidates: Vec<(u32, Vec<u32>)> = buckets
            .into_iter()
            .filter(|(_, o)| o.len() >= self.k)
            .collect();
        candidates.sort_unstable_by_key(|(d, _)| *d);
        for (d, occ_d) in candidates {
            if self.truncated {
                return;
            }
            let closure = holding_all(self.transactions, &occ_d);
            // Prefix-preserving: the closure adds no document below `d` that `set` lacks, or
            // the same closed set is reached from that smaller document instead.
            if closure
                .iter()
                .take_while(|&&x| x < d)
                .any(|x| set.binary_search(x).is_err())
            {
                continue;
            }
            self.visited += 1;
            if self.visited > MAX_SETS {
                self.truncated = true;
                return;
            }
            if closure.len() >= 2 {
                self.out.push(closure.clone());
            }
            self.extend(&closure, Some(d), &occ_d);
        }
    }
}

/// The documents every transaction of `occ` (indexes into `transactions`) holds.
fn holding_all(transactions: &[Vec<u32>], occ: &[u32]) -> Vec<u32> {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for &t in occ {
        for &d in &transactions[t as usize] {
            *counts.entry(d).or_default() += 1;
        }
    }
    let mut docs: Vec<u32> = counts
        .into_iter()
        .filter(|&(_, n)| n == occ.len())
        .map(|(d, _)| d)
        .collect();
    docs.sort_unstable();
    docs
}

/// The closed sets (largest first) that no larger one contains.
fn maximal_sets(closed: &[Vec<u32>]) -> Vec<usize> {
    let mut by_doc: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut maximal = Vec::new();
    for (i, set) in closed.iter().enumerate() {
        // Only sets listed earlier (as large or larger) can contain this one; a containing
        // set holds its first document.
        let contained = by_doc.get(&set[0]).is_some_and(|earlier| {
            earlier.iter().any(|&j| {
                closed[j].len() > set.len()
                    && set.iter().all(|d| closed[j].binary_search(d).is_ok())
            })
        });
        if !contained {
            maximal.push(i);
        }
        for &d in set {
            by_doc.entry(d).or_default().push(i);
        }
    }
    maximal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every closed set by brute force: for each subset of documents, the elements they share,
    /// and the subset is closed when no other document holds all of those.
    fn brute_force(sigs: &[Vec<u64>], k: usize) -> Vec<Vec<u32>> {
        let n = sigs.len();
        let mut out = Vec::new();
        for mask in 1u32..(1 << n) {
            let docs: Vec<u32> = (0..n as u32).filter(|d| mask & (1 << d) != 0).collect();
            if docs.len() < 2 {
                continue;
            }
            let shared: Vec<u64> = sigs[docs[0] as usize]
                .iter()
                .copied()
                .filter(|e| docs.iter().all(|&d| sigs[d as usize].contains(e)))
                .filter(|e| sigs.iter().filter(|s| s.contains(e)).count() <= MAX_HOLDERS)
                .collect();
            if shared.len() < k {
                continue;
            }
            let closed = (0..n as u32)
                .filter(|d| !docs.contains(d))
                .all(|d| !shared.iter().all(|e| sigs[d as usize].contains(e)));
            if closed {
                out.push(docs);
            }
        }
        out.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        out
    }

    #[test]
    fn the_search_finds_exactly_the_closed_sets() {
        // Three copies of one text (0, 1, 2), 3 quoting part of it, 4 sharing two elements
        // with 3 only, 5 unrelated.
        let sigs: Vec<Vec<u64>> = vec![
            vec![1, 2, 3, 4, 5, 6],
            vec![1, 2, 3, 4, 5, 6],
            vec![1, 2, 3, 4, 5, 7],
            vec![1, 2, 3, 8, 9],
            vec![8, 9, 10],
            vec![11, 12],
        ];
        for k in 1..=6 {
            assert_eq!(
                closed_sets(&sigs, k).closed,
                brute_force(&sigs, k),
                "k = {k}"
            );
        }
        let m = closed_sets(&sigs, 2);
        assert_eq!(
            m.closed,
            vec![vec![0, 1, 2, 3], vec![0, 1, 2], vec![0, 1], vec![3, 4]]
        );
        // {0,1,2} and {0,1} lie inside {0,1,2,3}: two maximal sets.
        assert_eq!(m.maximal, vec![0, 3]);
        assert!(!m.truncated);
    }

    /// 200 small random contexts (signatures of 2 to 8 documents over 12 elements) with a `k`
    /// each, the same on every run.
    fn random_contexts(mut state: u64) -> Vec<(Vec<Vec<u64>>, usize)> {
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..200)
            .map(|_| {
                let n = 2 + (next() % 7) as usize;
                let sigs: Vec<Vec<u64>> = (0..n)
                    .map(|_| {
                        let mut s: Vec<u64> = (0..12).filter(|_| next() % 3 == 0).collect();
                        s.sort_unstable();
                        s
                    })
                    .collect();
                (sigs, 1 + (next() % 4) as usize)
            })
            .collect()
    }

    #[test]
    fn random_contexts_agree_with_brute_force() {
        for (sigs, k) in random_contexts(0x2545_f491_4f6c_dd1d) {
            assert_eq!(
                closed_sets(&sigs, k).closed,
                brute_force(&sigs, k),
                "{sigs:?} k={k}"
            );
        }
    }

    #[test]
    fn a_pairs_closure_is_the_smallest_mined_set_holding_both() {
        let mut found = 0;
        for (sigs, k) in random_contexts(0x9e37_79b9_7f4a_7c15) {
            let n = sigs.len();
            let mined = closed_sets(&sigs, k);
            let context = Context::new(&sigs);
            for a in 0..n as u32 {
                for b in a + 1..n as u32 {
                    let smallest = mined
                        .closed
                        .iter()
                        .filter(|s| s.contains(&a) && s.contains(&b))
                        .min_by_key(|s| s.len())
                        .cloned();
                    found += usize::from(smallest.is_some());
                    assert_eq!(context.pair_closure(a, b, k), smallest, "{sigs:?} k={k}");
                }
            }
        }
        assert!(
            found > 100,
            "the contexts hold too few closed pairs: {found}"
        );
    }
}
