//! The dedup engine: all pairs that share a signature element, found through postings.
//!
//! Exact on the signatures: for every pair with at least one shared element it computes
//! |A∩B| by counting hits in the inverted index, never by enumerating all N² pairs.

use crate::sign::{Detector, Scores, Thresholds, Verdict};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// A judged pair of documents, by their index in the input slice (`a < b`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Index of the first document.
    pub a: u32,
    /// Index of the second document.
    pub b: u32,
    /// Scores on the signatures, or on the full shingle index when `verified`.
    pub scores: Scores,
    /// The verdict on those scores.
    pub verdict: Verdict,
    /// Whether the scores were recomputed on the full shingle index (small signatures).
    pub verified: bool,
}

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

/// How the engine judges pairs.
#[derive(Debug, Clone, Copy)]
pub struct EngineConfig {
    /// Duplicate and containment thresholds.
    pub thresholds: Thresholds,
}

/// Every pair of documents sharing at least one element, with intersection counts.
///
/// Returns `(a, b, |A∩B|)` with `a < b`, sorted. Work is proportional to the sum over elements
/// of the squared posting length, and is split over the rayon pool by document.
pub fn shared_pairs(sigs: &[Vec<u64>], postings: &Postings) -> Vec<(u32, u32, u32)> {
    let n = sigs.len();
    let mut out: Vec<(u32, u32, u32)> = (0..n)
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

/// Scores and verdicts for all pairs sharing an element.
pub fn judge_pairs(
    sigs: &[Vec<u64>],
    shared: &[(u32, u32, u32)],
    detector: &dyn Detector,
    cfg: &EngineConfig,
) -> Vec<Pair> {
    shared
        .par_iter()
        .map(|&(a, b, inter)| {
            let (sa, sb) = (&sigs[a as usize], &sigs[b as usize]);
            let (scores, verdict) = detector.judge_pair(sa, sb, inter as usize, &cfg.thresholds);
            Pair {
                a,
                b,
                scores,
                verdict,
                verified: false,
            }
        })
        .collect()
}

/// Re-judges the `unsure` pairs on full shingle indexes, which `full_index` supplies for the
/// documents involved (sorted, repeat-free fingerprints of all shingles).
pub fn verify_unsure(
    pairs: &mut [Pair],
    full_index: &FxHashMap<u32, Vec<u64>>,
    detector_for_full: &dyn Detector,
    cfg: &EngineConfig,
) {
    pairs.par_iter_mut().for_each(|p| {
        if p.verdict != Verdict::Unsure {
            return;
        }
        if let (Some(fa), Some(fb)) = (full_index.get(&p.a), full_index.get(&p.b)) {
            let inter = crate::sign::intersection_size(fa, fb);
            p.scores = detector_for_full.scores(fa, fb, inter);
            p.verdict = detector_for_full.judge(&p.scores, &cfg.thresholds);
            p.verified = true;
        }
    });
}

/// Documents the unsure pairs involve: those whose full index verification needs.
pub fn unsure_docs(pairs: &[Pair]) -> Vec<u32> {
    let mut docs: Vec<u32> = pairs
        .iter()
        .filter(|p| p.verdict == Verdict::Unsure)
        .flat_map(|p| [p.a, p.b])
        .collect();
    docs.sort_unstable();
    docs.dedup();
    docs
}

/// Chooses which copy of each duplicate group stays.
///
/// `order` lists document indexes from most to least worth keeping. Walking it, a document is
/// dropped when a duplicate partner was already kept, and records the best-ranked such partner;
/// a document whose partners were all dropped stays, so chains of near-copies (A≈B≈C, A≉C) never
/// remove a text that no kept text resembles. Returns `duplicate_of` per document.
pub fn choose_kept(n: usize, order: &[u32], duplicates: &[(u32, u32)]) -> Vec<Option<u32>> {
    let mut rank = vec![0u32; n];
    for (r, &d) in order.iter().enumerate() {
        rank[d as usize] = r as u32;
    }
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in duplicates {
        partners[a as usize].push(b);
        partners[b as usize].push(a);
    }
    let mut duplicate_of: Vec<Option<u32>> = vec![None; n];
    let mut kept = vec![false; n];
    for &d in order {
        let best_kept = partners[d as usize]
            .iter()
            .copied()
            .filter(|&p| kept[p as usize])
            .min_by_key(|&p| rank[p as usize]);
        match best_kept {
            Some(p) => duplicate_of[d as usize] = Some(p),
            None => kept[d as usize] = true,
        }
    }
    duplicate_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{intersection_size, Full};

    fn cfg() -> EngineConfig {
        EngineConfig {
            thresholds: Thresholds {
                resemblance: 0.6,
                containment: 0.6,
            },
        }
    }

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
        let fast = shared_pairs(&sigs, &postings);
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
    fn judges_duplicate_and_contained() {
        let sigs = vec![
            (0..10).collect::<Vec<u64>>(),
            (0..9).collect(),
            (100..104).collect(),
            (100..120).collect(),
        ];
        let p = Postings::build(&sigs);
        let pairs = judge_pairs(&sigs, &shared_pairs(&sigs, &p), &Full::new(4), &cfg());
        let verdicts: Vec<(u32, u32, Verdict)> =
            pairs.iter().map(|p| (p.a, p.b, p.verdict)).collect();
        assert_eq!(
            verdicts,
            vec![(0, 1, Verdict::Duplicate), (2, 3, Verdict::Contained)]
        );
    }

    #[test]
    fn small_sampled_signatures_are_unsure_until_verified() {
        let det = crate::sign::ModM::new(4, 25, 3);
        let c = cfg();
        // Doc 0 is a full index (one sampled element), doc 1 a sample of three.
        let sigs = vec![vec![7u64, 25], vec![25u64, 50, 75]];
        let p = Postings::build(&sigs);
        let mut pairs = judge_pairs(&sigs, &shared_pairs(&sigs, &p), &det, &c);
        assert_eq!(pairs[0].verdict, Verdict::Unsure);
        assert_eq!(unsure_docs(&pairs), vec![0, 1]);
        let mut full = FxHashMap::default();
        full.insert(0, (0..50).collect::<Vec<u64>>());
        full.insert(1, (40..100).collect::<Vec<u64>>());
        verify_unsure(&mut pairs, &full, &Full::new(4), &c);
        assert!(pairs[0].verified);
        assert_eq!(pairs[0].scores.inter, 10);
        assert_eq!(pairs[0].verdict, Verdict::Different);
    }

    #[test]
    fn keeps_best_ranked_and_breaks_chains() {
        // 0≈1, 1≈2, but 0≉2: order 0,1,2 keeps 0, drops 1 (dup of 0), keeps 2.
        let dup_of = choose_kept(3, &[0, 1, 2], &[(0, 1), (1, 2)]);
        assert_eq!(dup_of, vec![None, Some(0), None]);
        // Order 1,0,2: keeps 1, drops both others as its duplicates.
        let dup_of = choose_kept(3, &[1, 0, 2], &[(0, 1), (1, 2)]);
        assert_eq!(dup_of, vec![Some(1), None, Some(1)]);
    }
}
