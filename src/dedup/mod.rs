//! The dedup engine: which pairs of documents are duplicates or contained, and which copy stays.
//!
//! One sequence serves every caller (`build`, `update`, `collect dedup`, `collect eval`):
//! candidate pairs from the signatures ([`Detector::candidate_pairs`]), scores and a verdict
//! per pair, then the pairs a small signature leaves `unsure` re-scored on full shingle
//! indexes ([`find_pairs`]). Callers differ only in where the texts for those full indexes
//! come from (memory, the store, a second pass over the input), so that is a callback. Which
//! copy of a duplicate group stays is [`choose_kept`], for build and update alike.

mod keep;
pub mod standalone;

pub use keep::{choose_kept, Candidate, Standing};

use crate::sign::{intersection_size, Detector, Full, Scores, Thresholds, Verdict};
use anyhow::Result;
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

/// Full shingle indexes (sorted, repeat-free fingerprints of every shingle) by document index.
pub type FullIndexes = FxHashMap<u32, Vec<u64>>;

/// All judged pairs among `sigs` that involve one of the first `queries` documents.
///
/// `full_indexes` is asked once, with the sorted indexes of the documents whose pairs are
/// `unsure`, for their full shingle indexes (signed by [`Full`] with the detector's shingle);
/// a document it leaves out keeps its pairs `unsure`. Pairs come sorted by `(a, b)`.
pub fn find_pairs(
    sigs: &[Vec<u64>],
    queries: usize,
    detector: &dyn Detector,
    thresholds: &Thresholds,
    full_indexes: &mut dyn FnMut(&[u32]) -> Result<FullIndexes>,
) -> Result<Vec<Pair>> {
    let shared = detector.candidate_pairs(sigs, queries);
    let mut pairs = judge_pairs(sigs, &shared, detector, thresholds);
    drop(shared);
    let need = unsure_docs(&pairs);
    if !need.is_empty() {
        let index = full_indexes(&need)?;
        verify_unsure(&mut pairs, &index, &full_detector(detector), thresholds);
    }
    Ok(pairs)
}

/// The detector that signs and judges full shingle indexes for `detector`'s unsure pairs.
pub fn full_detector(detector: &dyn Detector) -> Full {
    Full::new(detector.shingle())
}

/// Scores and verdicts for all pairs sharing an element.
fn judge_pairs(
    sigs: &[Vec<u64>],
    shared: &[(u32, u32, u32)],
    detector: &dyn Detector,
    thresholds: &Thresholds,
) -> Vec<Pair> {
    shared
        .par_iter()
        .map(|&(a, b, inter)| {
            let (sa, sb) = (&sigs[a as usize], &sigs[b as usize]);
            let (scores, verdict) = detector.judge_pair(sa, sb, inter as usize, thresholds);
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

/// Re-judges the `unsure` pairs on the full shingle indexes of both documents, where given.
fn verify_unsure(pairs: &mut [Pair], index: &FullIndexes, full: &Full, thresholds: &Thresholds) {
    pairs.par_iter_mut().for_each(|p| {
        if p.verdict != Verdict::Unsure {
            return;
        }
        if let (Some(fa), Some(fb)) = (index.get(&p.a), index.get(&p.b)) {
            let inter = intersection_size(fa, fb);
            p.scores = full.scores(fa, fb, inter);
            p.verdict = full.judge(&p.scores, thresholds);
            p.verified = true;
        }
    });
}

/// Documents the unsure pairs involve: those whose full index verification needs.
fn unsure_docs(pairs: &[Pair]) -> Vec<u32> {
    let mut docs: Vec<u32> = pairs
        .iter()
        .filter(|p| p.verdict == Verdict::Unsure)
        .flat_map(|p| [p.a, p.b])
        .collect();
    docs.sort_unstable();
    docs.dedup();
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::ModM;

    fn thresholds() -> Thresholds {
        Thresholds {
            resemblance: 0.6,
            containment: 0.6,
        }
    }

    fn no_full_indexes(_: &[u32]) -> Result<FullIndexes> {
        Ok(FullIndexes::default())
    }

    #[test]
    fn judges_duplicate_and_contained() {
        let sigs = vec![
            (0..10).collect::<Vec<u64>>(),
            (0..9).collect(),
            (100..104).collect(),
            (100..120).collect(),
        ];
        let pairs = find_pairs(
            &sigs,
            sigs.len(),
            &Full::new(4),
            &thresholds(),
            &mut no_full_indexes,
        )
        .unwrap();
        let verdicts: Vec<(u32, u32, Verdict)> =
            pairs.iter().map(|p| (p.a, p.b, p.verdict)).collect();
        assert_eq!(
            verdicts,
            vec![(0, 1, Verdict::Duplicate), (2, 3, Verdict::Contained)]
        );
    }

    #[test]
    fn small_sampled_signatures_are_unsure_until_verified() {
        let det = ModM::new(4, 25, 3);
        // Doc 0 is a full index (one sampled element), doc 1 a sample of three.
        let sigs = vec![vec![7u64, 25], vec![25u64, 50, 75]];
        let unverified = find_pairs(&sigs, 2, &det, &thresholds(), &mut no_full_indexes).unwrap();
        assert_eq!(unverified[0].verdict, Verdict::Unsure);
        let mut asked = Vec::new();
        let pairs = find_pairs(&sigs, 2, &det, &thresholds(), &mut |need: &[u32]| {
            asked = need.to_vec();
            let mut full = FullIndexes::default();
            full.insert(0, (0..50).collect::<Vec<u64>>());
            full.insert(1, (40..100).collect::<Vec<u64>>());
            Ok(full)
        })
        .unwrap();
        assert_eq!(asked, vec![0, 1]);
        assert!(pairs[0].verified);
        assert_eq!(pairs[0].scores.inter, 10);
        assert_eq!(pairs[0].verdict, Verdict::Different);
    }

    #[test]
    fn queries_leave_pairs_of_later_documents_out() {
        let sigs = vec![
            (0..10).collect::<Vec<u64>>(),
            (0..10).collect(),
            (0..10).collect(),
        ];
        let pairs =
            find_pairs(&sigs, 1, &Full::new(4), &thresholds(), &mut no_full_indexes).unwrap();
        let ab: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(ab, vec![(0, 1), (0, 2)]);
    }
}
