//! The postings engine against naive pairwise computation on real texts (examples/texts).

use collect::canon::{Canonicalizer, StopWords};
use collect::sign::{intersection_size, Detector, Full, MinN, ModM};

use crate::common::example_files;

fn texts() -> Vec<String> {
    example_files(&["txt"])
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect()
}

#[test]
fn postings_counts_equal_naive_intersections() {
    let texts = texts();
    let mut canon = Canonicalizer::new(StopWords::default_shared());
    let detectors: Vec<Box<dyn Detector>> = vec![
        Box::new(ModM::new(4, 25, 8)),
        Box::new(ModM::new(4, 25, 0)),
        Box::new(Full::new(4)),
        Box::new(MinN::new(4, 160)),
    ];
    for det in detectors {
        let sigs: Vec<Vec<u64>> = texts
            .iter()
            .map(|t| det.sign(&canon.canonicalize(t)))
            .collect();
        let mut fast = Vec::new();
        det.candidate_pairs(&sigs, sigs.len(), &mut |block| fast.extend(block));
        let mut naive = Vec::new();
        for a in 0..sigs.len() {
            for b in a + 1..sigs.len() {
                let i = intersection_size(&sigs[a], &sigs[b]);
                if i > 0 {
                    naive.push((a as u32, b as u32, i as u32));
                }
            }
        }
        assert!(
            !naive.is_empty(),
            "{}: the PEP revisions share shingles",
            det.key()
        );
        assert_eq!(fast, naive, "{}", det.key());
    }
}
