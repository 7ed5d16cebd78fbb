//! The dedup engine: which pairs of documents are duplicates or contained, and which copy stays.
//!
//! One sequence serves every caller (`build`, `update`, `collect dedup`, `collect eval`):
//! candidate pairs from the signatures ([`Detector::candidate_pairs`]), scores and a verdict
//! per pair, then the pairs a small signature leaves `unsure` and the pairs of the grey zone
//! below the thresholds re-scored on the full texts: exact shingle scores, and copied passages
//! ([`Engine::find`], or [`find_pairs`] for every pair). Callers differ only in where those
//! texts come from (memory, the store, a second pass over the input), so that is a callback.
//! Which copy of a duplicate group stays is [`choose_kept`], for build and update alike.

pub mod closed_sets;
mod components;
pub mod distributed;
mod keep;
pub mod standalone;

pub use components::components;
pub use keep::{choose_kept, Candidate, Standing};

use crate::canon::CanonText;
use crate::sign::{
    Common, Detector, Full, GreyZone, PartCuts, Scores, ShingleSeq, SigSize, Thresholds, Verdict,
};
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
    /// The verdict on those scores (and, when `verified`, on copied passages).
    pub verdict: Verdict,
    /// Whether the pair was re-scored on the full texts (small signature or grey zone).
    pub verified: bool,
    /// When `verified`: share of the shorter text's words in passages copied from the other
    /// (runs of at least [`GreyZone::passage_words`] words); 0 otherwise.
    pub copied: f64,
    /// Shingles the two texts share: counted when the scores are exact, else estimated from
    /// the shared signature elements ([`shared_shingles`]). What `weak` and review rules read.
    pub shared: u64,
}

/// Canonical texts by document index, for the pairs verified on the full texts.
pub type FullTexts = FxHashMap<u32, CanonText>;

/// Where the engine gets the texts of the documents to verify: called once with their sorted
/// indexes and the shingle width, it hands their shingle sequences ([`ShingleSeq::new`] of
/// their canonical texts) to the sink in chunks, so the texts never all sit in memory at once.
/// A text is read, canonicalized and made into shingles in one task: with the shingles made in
/// a second pass over each chunk, every canonical text was written out, then read again
/// from memory on whichever core took it.
pub type TextSource<'a> = dyn FnMut(&[u32], usize, &mut SequenceSink) -> Result<()> + 'a;

/// What a [`TextSource`] hands each chunk of (document, shingle sequence) to.
pub type SequenceSink<'a> = dyn FnMut(Vec<(u32, ShingleSeq)>) -> Result<()> + 'a;

/// All judged pairs among `sigs` that involve one of the first `queries` documents.
///
/// `full_texts` is asked once, with the sorted indexes of the documents whose pairs need
/// verifying (`unsure`, or in the `grey` zone), for their canonical texts; a document it leaves
/// out keeps its pairs as the signatures judged them. Pairs come sorted by `(a, b)`.
pub fn find_pairs(
    sigs: &[Vec<u64>],
    queries: usize,
    detector: &dyn Detector,
    thresholds: &Thresholds,
    grey: &GreyZone,
    full_texts: &mut dyn FnMut(&[u32]) -> Result<FullTexts>,
) -> Result<Vec<Pair>> {
    let engine = Engine {
        detector,
        thresholds,
        grey,
        wanted: Wanted::All,
    };
    let mut source = |need: &[u32], shingle: usize, sink: &mut SequenceSink| {
        sink(
            full_texts(need)?
                .into_par_iter()
                .map(|(i, t)| (i, ShingleSeq::new(&t, shingle)))
                .collect(),
        )
    };
    Ok(engine.find(sigs, queries, &mut source)?.pairs)
}

/// Which judged pairs the engine hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// Every pair sharing an element (`collect dedup --all-pairs`, the workbench).
    All,
    /// The pairs not `different` once judged (what a collection records, and `unsure` ones):
    /// the others are dropped as soon as they are judged, so memory follows the flagged pairs,
    /// not the candidates (millions on a large corpus).
    Flagged,
}

/// The engine's settings for one run.
pub struct Engine<'a> {
    /// The detector that signed the documents.
    pub detector: &'a dyn Detector,
    /// Its thresholds.
    pub thresholds: &'a Thresholds,
    /// The grey zone.
    pub grey: &'a GreyZone,
    /// Which pairs come back.
    pub wanted: Wanted,
}

/// What the engine found.
pub struct Found {
    /// The pairs wanted, sorted by `(a, b)`.
    pub pairs: Vec<Pair>,
    /// Pairs sharing at least one element (all judged).
    pub candidates: usize,
    /// Pairs re-scored on the full texts.
    pub verified: usize,
}

impl Engine<'_> {
    /// [`find_pairs`] with the pairs `wanted`, and the counts of all pairs judged.
    pub fn find(
        &self,
        sigs: &[Vec<u64>],
        queries: usize,
        full_texts: &mut TextSource,
    ) -> Result<Found> {
        let sizes = sigs.par_iter().map(|s| self.detector.size_of(s)).collect();
        self.find_sized(sigs, sizes, queries, full_texts)
    }

    /// [`Engine::find`] with each signature's [`Detector::size_of`] given. A document whose
    /// size is given may come with only the elements of its signature that one of the first
    /// `queries` documents holds: only pairs with one of those are judged, and judging reads
    /// nothing else of a sized signature (`update`'s stored partners, whose whole signatures
    /// it would otherwise load).
    pub fn find_sized(
        &self,
        sigs: &[Vec<u64>],
        sizes: Vec<Option<SigSize>>,
        queries: usize,
        full_texts: &mut TextSource,
    ) -> Result<Found> {
        let (detector, thresholds) = (self.detector, self.thresholds);
        let grey = grey_zone_of(detector, self.grey);
        let triage = Triage {
            grey,
            exact: sigs
                .iter()
                .zip(&sizes)
                .map(|(s, size)| size.map_or_else(|| detector.is_exact(s), |size| size.exact))
                .collect(),
            shingle: detector.shingle(),
        };
        let all = self.wanted == Wanted::All;
        let keep = |p: &Pair| all || p.verdict != Verdict::Different || triage.needs(p);
        let mut candidates = 0;
        let mut pairs = Vec::new();
        // Judged a block at a time: only the pairs kept are ever held, not every pair that
        // shares an element.
        detector.candidate_pairs(sigs, queries, &mut |block| {
            candidates += block.len();
            pairs.extend(judge_pairs(
                sigs, &sizes, &block, detector, thresholds, &keep,
            ));
        });
        let verified = verify_found(&mut pairs, &triage, detector, thresholds, full_texts)?;
        if self.wanted == Wanted::Flagged {
            pairs.retain(|p| p.verdict != Verdict::Different);
        }
        Ok(Found {
            pairs,
            candidates,
            verified,
        })
    }
}

/// Verifies the pairs that need it and concludes every pair; returns how many were verified.
fn verify_found(
    pairs: &mut [Pair],
    triage: &Triage,
    detector: &dyn Detector,
    thresholds: &Thresholds,
    full_texts: &mut TextSource,
) -> Result<usize> {
    let grey = triage.grey;
    let need = docs_to_verify(pairs, triage);
    if !need.is_empty() {
        let mut seqs = Sequences {
            at: vec![u32::MAX; triage.exact.len()],
            seqs: Vec::with_capacity(need.len()),
        };
        full_texts(&need, triage.shingle, &mut |chunk| {
            for (i, seq) in chunk {
                if let Some(at) = seqs.at.get_mut(i as usize) {
                    *at = seqs.seqs.len() as u32;
                    seqs.seqs.push(seq);
                }
            }
            Ok(())
        })?;
        if let Some(g) = grey.filter(|g| g.passage_words > 0) {
            let frequent = Common::new(frequent_shingles(seqs.seqs.iter().map(|s| s.set()), g));
            seqs.seqs
                .par_iter_mut()
                .for_each(|s| mark_boilerplate(s, &frequent));
        }
        verify(pairs, &seqs, &full_detector(detector), thresholds, triage);
    }
    let mut verified = 0;
    for p in pairs.iter_mut() {
        let both_exact = triage.both_exact(p);
        conclude(p, both_exact, detector, thresholds);
        verified += p.verified as usize;
    }
    Ok(verified)
}

/// The grey zone `detector`'s pairs have: none for a detector without containment, which
/// judges on its own terms.
pub fn grey_zone_of<'a>(detector: &dyn Detector, grey: &'a GreyZone) -> Option<&'a GreyZone> {
    (detector.uses_thresholds() && detector.supports_containment()).then_some(grey)
}

/// The last step of every judged pair, verified or not: the shingles its texts share
/// ([`shared_shingles`], exact when verified or when both signatures are full indexes) and
/// the verdict once that evidence is weighed ([`weigh`]).
pub fn conclude(p: &mut Pair, both_exact: bool, detector: &dyn Detector, thresholds: &Thresholds) {
    p.shared = shared_shingles(p.scores.inter, p.verified || both_exact, detector);
    p.verdict = weigh(p.verdict, p.shared, thresholds);
}

/// Shingles two texts share, from `inter` shared elements: `exact` says they count shingles
/// (full texts or full indexes), else each sampled element stands for
/// [`Detector::shingles_per_element`] shingles.
pub fn shared_shingles(inter: u32, exact: bool, detector: &dyn Detector) -> u64 {
    let per_element = if exact {
        1.0
    } else {
        detector.shingles_per_element()
    };
    (f64::from(inter) * per_element).round() as u64
}

/// A judged pair's verdict once its evidence is weighed: a `contained` pair whose texts share
/// fewer than `min_shared_shingles` shingles ([`shared_shingles`]) is `weak` (docs/method.md
/// §6.3).
pub fn weigh(verdict: Verdict, shared: u64, t: &Thresholds) -> Verdict {
    if verdict == Verdict::Contained && (shared as f64) < t.min_shared_shingles {
        Verdict::Weak
    } else {
        verdict
    }
}

/// Which pairs judged on their signatures are re-scored on the full texts.
struct Triage<'a> {
    grey: Option<&'a GreyZone>,
    /// By document: whether its signature is a full index.
    exact: Vec<bool>,
    shingle: usize,
}

impl Triage<'_> {
    /// Whether both signatures of the pair are full indexes.
    fn both_exact(&self, p: &Pair) -> bool {
        self.exact[p.a as usize] && self.exact[p.b as usize]
    }

    fn needs(&self, p: &Pair) -> bool {
        needs_verifying(p, self.both_exact(p), self.grey, self.shingle)
    }
}

/// Whether a pair judged on its signatures is re-scored on the full texts: `unsure` pairs, and
/// grey-zone pairs that the full texts can still change. A pair of two full indexes
/// (`both_exact`) already has its exact scores, and sharing fewer shingles than one copied
/// passage spans, it cannot have one.
pub fn needs_verifying(
    p: &Pair,
    both_exact: bool,
    grey: Option<&GreyZone>,
    shingle: usize,
) -> bool {
    if p.verdict == Verdict::Unsure {
        return true;
    }
    let Some(g) = grey.filter(|g| g.holds(&p.scores, p.verdict)) else {
        return false;
    };
    let passage_shingles = g
        .passage_words
        .saturating_sub(shingle.saturating_sub(1))
        .max(1);
    !(both_exact && (g.passage_words == 0 || (p.scores.inter as usize) < passage_shingles))
}

/// The detector that signs and judges full shingle indexes for `detector`'s verified pairs.
pub fn full_detector(detector: &dyn Detector) -> Full {
    Full::new(detector.shingle())
}

/// Scores and verdicts for the pairs sharing an element that `keep` keeps once judged.
fn judge_pairs(
    sigs: &[Vec<u64>],
    sizes: &[Option<SigSize>],
    shared: &[(u32, u32, u32)],
    detector: &dyn Detector,
    thresholds: &Thresholds,
    keep: &(dyn Fn(&Pair) -> bool + Sync),
) -> Vec<Pair> {
    shared
        .par_iter()
        .map(|&(a, b, inter)| {
            let (i, j) = (a as usize, b as usize);
            let (scores, verdict) = detector.judge_sized(
                &sigs[i],
                &sigs[j],
                sizes[i],
                sizes[j],
                inter as usize,
                thresholds,
            );
            Pair {
                a,
                b,
                scores,
                verdict,
                verified: false,
                copied: 0.0,
                shared: 0,
            }
        })
        .filter(|p| keep(p))
        .collect()
}

/// The shingles found in more than `passage_common` of the verified texts (`sets`: each
/// text's shingles without repeats), sorted: mailing-list footers and templated stubs shared by many
/// documents, which would otherwise pass for copied passages. A distributed run counts the same
/// statistic across executors and hands the result to [`mark_boilerplate`].
pub fn frequent_shingles<'a>(sets: impl Iterator<Item = &'a [u32]>, grey: &GreyZone) -> Vec<u32> {
    // Shingles are CRCs, spread evenly, so they are cut into parts by their top bits, and in a
    // part each is counted in a bucket by its next bits: a bucket holding no more than the
    // boilerplate count holds no boilerplate shingle, and the few shingles of the buckets that
    // do are then counted exactly (each set holds a shingle once, so a bucket counts the sets
    // that hold one of its shingles). A part's counts fit in a core's L2 cache. (80k dev
    // corpus, 22.6 million shingles, 12,220 of them boilerplate, 600,000 in crowded buckets:
    // 367–388 → 139–177 ms, against sorting all of a part's shingles by radix; 180–217 ms
    // with 1 MiB of counts a part, 446–490 ms with 64 parts, each a visit to every set.)
    let sets: Vec<&[u32]> = sets.collect();
    let starts: Vec<u32> = (0..1u32 << PART_BITS)
        .map(|part| part << (32 - PART_BITS))
        .collect();
    let cuts = PartCuts::new(&sets, &starts);
    // A bucket's count stops at 255; past a boilerplate count of 254, a full bucket may hold
    // one, and the exact count tells.
    let hot_above = grey.passage_common.min(254) as u8;
    let bucket_of =
        |x: u32| ((x >> (32 - PART_BITS - BUCKET_BITS)) & ((1 << BUCKET_BITS) - 1)) as usize;
    // Parts in parallel, one per thread at a time; collected in order, so the list is sorted.
    let parts: Vec<Vec<u32>> = (0..1u32 << PART_BITS)
        .into_par_iter()
        .with_max_len(1)
        .map_init(
            || (vec![0u8; 1 << BUCKET_BITS], Vec::new(), Vec::new()),
            |(counts, part_shingles, hot), part| {
                part_shingles.clear();
                for (i, set) in sets.iter().enumerate() {
                    part_shingles.extend_from_slice(&set[cuts.range(i, part as usize)]);
                }
                counts.fill(0);
                for &x in part_shingles.iter() {
                    let c = &mut counts[bucket_of(x)];
                    *c = c.saturating_add(1);
                }
                hot.clear();
                hot.extend(
                    part_shingles
                        .iter()
                        .filter(|&&x| counts[bucket_of(x)] > hot_above),
                );
                hot.sort_unstable();
                hot.chunk_by(|a, b| a == b)
                    .filter(|same| is_boilerplate(same.len(), grey))
                    .map(|same| same[0])
                    .collect::<Vec<u32>>()
            },
        )
        .collect();
    parts.concat()
}

/// Top bits of a shingle: the parts of [`frequent_shingles`].
const PART_BITS: u32 = 4;

/// Bits of a shingle after its part's that pick its bucket in [`frequent_shingles`]: 256 KiB
/// of counts.
const BUCKET_BITS: u32 = 18;

/// Whether a shingle seen in `count` of the verified texts is boilerplate.
pub fn is_boilerplate(count: usize, grey: &GreyZone) -> bool {
    count > grey.passage_common
}

/// Marks a text's shingles found in `frequent` ([`frequent_shingles`]) as boilerplate, never
/// part of a copied passage.
pub fn mark_boilerplate(seq: &mut ShingleSeq, frequent: &Common) {
    seq.mark_common(frequent);
}

/// The shingle sequences of the texts to verify, and which is whose: a slot per document, so
/// that a pair finds its two by an index each (a hash map's lookups, two per verified pair,
/// were a fifteenth of verifying).
struct Sequences {
    /// By document, its place in `seqs` (`u32::MAX`: none).
    at: Vec<u32>,
    seqs: Vec<ShingleSeq>,
}

impl Sequences {
    fn get(&self, doc: u32) -> Option<&ShingleSeq> {
        let at = *self.at.get(doc as usize)?;
        self.seqs.get(at as usize)
    }
}

/// Re-judges the pairs that need it on the full texts of both documents, where given.
fn verify(
    pairs: &mut [Pair],
    seqs: &Sequences,
    full: &Full,
    thresholds: &Thresholds,
    triage: &Triage,
) {
    pairs.par_iter_mut().for_each(|p| {
        if !triage.needs(p) {
            return;
        }
        let (Some(sa), Some(sb)) = (seqs.get(p.a), seqs.get(p.b)) else {
            return;
        };
        verify_pair(
            p,
            sa,
            sb,
            triage.both_exact(p),
            full,
            thresholds,
            triage.grey,
        );
    });
}

/// Re-judges one pair on the full texts (`sa`, `sb`: its documents in the pair's order):
/// exact shingle scores, then (grey zone) copied passages in the shorter text.
pub fn verify_pair(
    p: &mut Pair,
    sa: &ShingleSeq,
    sb: &ShingleSeq,
    both_exact: bool,
    full: &Full,
    thresholds: &Thresholds,
    grey: Option<&GreyZone>,
) {
    let passages = grey.filter(|g| g.passage_words > 0);
    // Copied passages are looked for in the shorter text.
    let (short, long) = if sa.words() <= sb.words() {
        (sa, sb)
    } else {
        (sb, sa)
    };
    // One merge of the two sets serves the exact scores and the passages.
    let shared = (passages.is_some() || !both_exact).then(|| short.shared_with(long));
    // Two full indexes were scored exactly on their signatures already.
    if let (false, Some(shared)) = (both_exact, &shared) {
        let size = |s: &[u32]| SigSize {
            len: s.len(),
            sampled: s.len(),
            exact: true,
        };
        p.scores = full
            .judge_sizes(size(sa.set()), size(sb.set()), shared.count, thresholds)
            .0;
    }
    p.verified = true;
    p.verdict = match (passages, &shared) {
        (Some(g), Some(shared)) => {
            p.copied = short.copied_share_of(shared, g.passage_words);
            g.judge(full, &p.scores, p.copied, thresholds)
        }
        _ => full.judge(&p.scores, thresholds),
    };
}

/// Documents of the pairs that need verifying.
fn docs_to_verify(pairs: &[Pair], triage: &Triage) -> Vec<u32> {
    let mut docs: Vec<u32> = pairs
        .iter()
        .filter(|p| triage.needs(p))
        .flat_map(|p| [p.a, p.b])
        .collect();
    docs.sort_unstable();
    docs.dedup();
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::{between, canon, reworded, words};
    use crate::sign::ModM;

    fn thresholds() -> Thresholds {
        Thresholds {
            resemblance: 0.6,
            containment: 0.6,
            min_shared_shingles: 0.0,
        }
    }

    #[test]
    fn frequent_shingles_are_those_counted_past_the_threshold() {
        let mut rng = crate::sign::test_support::Lcg(11);
        for round in 0..40 {
            // Values drawn from a small range repeat across sets; the range crosses the
            // parts.
            let range = 1 + rng.below(1 << (8 + round % 24));
            let sets: Vec<Vec<u32>> = (0..1 + rng.below(60))
                .map(|_| {
                    let n = rng.below(300);
                    let mut s: Vec<u32> = (0..n)
                        .map(|_| (rng.below(range) as u32).wrapping_mul(0x9E37_79B9))
                        .collect();
                    s.sort_unstable();
                    s.dedup();
                    s
                })
                .collect();
            let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
            for s in &sets {
                for &v in s {
                    *counts.entry(v).or_default() += 1;
                }
            }
            for passage_common in [0, 1, 3] {
                let g = GreyZone {
                    passage_common,
                    ..grey()
                };
                let want: Vec<u32> = counts
                    .iter()
                    .filter(|(_, &c)| is_boilerplate(c, &g))
                    .map(|(&v, _)| v)
                    .collect();
                let got = frequent_shingles(sets.iter().map(|s| s.as_slice()), &g);
                assert_eq!(got, want, "round {round}, passage_common {passage_common}");
            }
        }
    }

    #[test]
    fn frequent_shingles_are_counted_exactly_in_crowded_buckets_and_past_255() {
        // Shingles that differ only in their low bits share a bucket: 30 of them in 15 sets
        // each crowd it past the count, and none is boilerplate; a 31st in 21 sets is.
        let crowded = |k: u32| 0xABCD_E000 | k;
        let sets: Vec<Vec<u32>> = (0..450u32)
            .map(|s| {
                let mut set: Vec<u32> = Vec::new();
                if s < 30 {
                    set.extend((0..30).filter(|k| (s + k) % 30 < 15).map(crowded));
                }
                if s < 21 {
                    set.push(crowded(40));
                }
                // In 300 sets: past what a bucket's count of 255 can tell apart.
                if s < 300 {
                    set.push(0x1234_5678);
                }
                set.push(0x8000_0000 | (s * 7919));
                set.sort_unstable();
                set.dedup();
                set
            })
            .collect();
        let at = |passage_common| {
            let g = GreyZone {
                passage_common,
                ..grey()
            };
            frequent_shingles(sets.iter().map(|s| s.as_slice()), &g)
        };
        assert_eq!(at(20), vec![0x1234_5678, crowded(40)]);
        assert_eq!(at(14), {
            let mut want: Vec<u32> = (0..30).map(crowded).collect();
            want.push(crowded(40));
            want.insert(0, 0x1234_5678);
            want
        });
        assert_eq!(at(299), vec![0x1234_5678]);
        assert_eq!(at(300), Vec::<u32>::new());
    }

    #[test]
    fn contained_pairs_sharing_too_little_are_weak() {
        let det = ModM::new(4, 25, 8);
        let t = Thresholds {
            min_shared_shingles: 20.0,
            ..thresholds()
        };
        // One shared mod-25 element stands for about 25 shingles: enough when sampled.
        assert_eq!(shared_shingles(1, false, &det), 25);
        let w = |inter, exact, v| weigh(v, shared_shingles(inter, exact, &det), &t);
        assert_eq!(w(1, false, Verdict::Contained), Verdict::Contained);
        // Counted exactly (verified, or two full indexes), 2 shingles are not.
        assert_eq!(w(2, true, Verdict::Contained), Verdict::Weak);
        assert_eq!(w(20, true, Verdict::Contained), Verdict::Contained);
        // Only contained pairs are weighed.
        assert_eq!(w(2, true, Verdict::Duplicate), Verdict::Duplicate);
        assert_eq!(w(2, true, Verdict::Different), Verdict::Different);
    }

    fn grey() -> GreyZone {
        GreyZone {
            from: 0.15,
            passage_words: 12,
            passage_share: 0.1,
            passage_common: 10,
        }
    }

    fn no_texts(_: &[u32]) -> Result<FullTexts> {
        Ok(FullTexts::default())
    }

    /// Runs the engine over texts held in memory, with `det`'s signatures.
    fn pairs_of(texts: &[String], det: &dyn Detector, grey: &GreyZone) -> (Vec<Pair>, Vec<u32>) {
        let canons: Vec<CanonText> = texts.iter().map(|t| canon(t)).collect();
        let sigs: Vec<Vec<u64>> = canons.iter().map(|c| det.sign(c)).collect();
        let mut asked = Vec::new();
        let pairs = find_pairs(&sigs, sigs.len(), det, &thresholds(), grey, &mut |need| {
            asked = need.to_vec();
            Ok(need
                .iter()
                .map(|&i| (i, canons[i as usize].clone()))
                .collect())
        })
        .unwrap();
        (pairs, asked)
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
            &grey(),
            &mut no_texts,
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
        let det = ModM::new(4, 25, 8);
        // A short text (full index) sharing 30 of its 57 words with a long one (a sample).
        let texts = vec![
            format!("{} {}", words(0..30, "s"), words(0..27, "x")),
            words(0..3000, "s"),
        ];
        let sigs: Vec<Vec<u64>> = texts.iter().map(|t| det.sign(&canon(t))).collect();
        let unverified = find_pairs(&sigs, 2, &det, &thresholds(), &grey(), &mut no_texts).unwrap();
        assert_eq!(unverified.len(), 1, "the pair shares a sampled fingerprint");
        assert_eq!(unverified[0].verdict, Verdict::Unsure);
        let (pairs, asked) = pairs_of(&texts, &det, &grey());
        assert_eq!(asked, vec![0, 1]);
        assert!(pairs[0].verified);
        assert_eq!(pairs[0].scores.inter, 27);
        assert!((pairs[0].copied - 30.0 / 57.0).abs() < 1e-12);
        assert_eq!(pairs[0].verdict, Verdict::Contained);
        // Without the passage rule, 27 of 54 shingles stay below containment 0.6.
        let no_passages = GreyZone {
            passage_words: 0,
            ..grey()
        };
        assert_eq!(
            pairs_of(&texts, &det, &no_passages).0[0].verdict,
            Verdict::Different
        );
    }

    #[test]
    fn grey_zone_pairs_are_raised_by_copied_passages_only() {
        let det = Full::new(4);
        let source = words(0..200, "s");
        // One pasted passage of 20 words in 100: containment 17/97, under the thresholds.
        let pasted = between("a", 40, &words(50..70, "s"), 40);
        // 80 source words reworded every eighth word: containment 40/157, but runs of 7 words.
        let rewritten = between("b", 40, &reworded(50..130, 8), 40);
        let texts = [source, pasted, rewritten];
        let (pairs, _) = pairs_of(&texts, &det, &grey());
        let by_pair: Vec<(u32, u32, Verdict, bool)> = pairs
            .iter()
            .map(|p| (p.a, p.b, p.verdict, p.verified))
            .collect();
        assert_eq!(
            by_pair,
            vec![
                (0, 1, Verdict::Contained, true),
                (0, 2, Verdict::Different, true),
                (1, 2, Verdict::Different, false)
            ]
        );
        assert_eq!(pairs[1].copied, 0.0);
        // Above 1 there is no grey zone: nothing is verified.
        let off = GreyZone {
            from: 1.1,
            ..grey()
        };
        let (pairs, asked) = pairs_of(&texts, &det, &off);
        assert!(asked.is_empty());
        assert_eq!(pairs[0].verdict, Verdict::Different);
    }

    #[test]
    fn full_index_pairs_too_close_for_a_passage_are_not_verified() {
        // 8 shared words (5 shingles) of 30: containment 5/27 is in the grey zone, but no run
        // of 12 words can be shared, and the scores of two full indexes are exact already.
        let a = format!("{} {}", words(0..8, "s"), words(0..22, "a"));
        let b = format!("{} {}", words(0..8, "s"), words(0..22, "b"));
        let (pairs, asked) = pairs_of(&[a, b], &Full::new(4), &grey());
        assert!(asked.is_empty());
        assert_eq!(pairs[0].scores.inter, 5);
        assert_eq!(
            (pairs[0].verdict, pairs[0].verified),
            (Verdict::Different, false)
        );
        assert!(ModM::new(4, 25, 8).is_exact(&ModM::new(4, 25, 8).sign(&canon(&words(0..30, "s")))));
    }

    #[test]
    fn sized_documents_judged_on_the_elements_they_share_give_the_same_pairs() {
        let det = ModM::new(4, 25, 8);
        // Two newcomers; after them stored documents: a near-copy, a short one holding a passage
        // (a full index: unsure until verified), one sharing a passage (the grey zone), one
        // sharing nothing, and a copy of a newcomer among the stored.
        let texts = [
            words(0..1500, "s"),
            format!("{} {}", words(0..40, "t"), words(200..260, "s")),
            format!("{} {}", words(0..1400, "s"), words(0..60, "n")),
            format!("{} {}", words(300..330, "s"), words(0..27, "x")),
            between("g", 300, &words(600..640, "s"), 300),
            words(0..500, "z"),
            format!("{} {}", words(0..40, "t"), words(200..260, "s")),
        ];
        let canons: Vec<CanonText> = texts.iter().map(|t| canon(t)).collect();
        let sigs: Vec<Vec<u64>> = canons.iter().map(|c| det.sign(c)).collect();
        let queries = 2;
        let engine = Engine {
            detector: &det,
            thresholds: &thresholds(),
            grey: &grey(),
            wanted: Wanted::All,
        };
        let mut texts_of = |need: &[u32], shingle: usize, sink: &mut SequenceSink| {
            sink(
                need.iter()
                    .map(|&i| (i, ShingleSeq::new(&canons[i as usize], shingle)))
                    .collect(),
            )
        };
        let whole = engine.find(&sigs, queries, &mut texts_of).unwrap();
        let held: std::collections::HashSet<u64> =
            sigs[..queries].iter().flatten().copied().collect();
        let sizes: Vec<Option<SigSize>> = sigs.iter().map(|s| det.size_of(s)).collect();
        let shared: Vec<Vec<u64>> = sigs
            .iter()
            .enumerate()
            .map(|(i, s)| match i < queries {
                true => s.clone(),
                false => s.iter().copied().filter(|e| held.contains(e)).collect(),
            })
            .collect();
        assert!(shared[5].is_empty() && shared[2].len() < sigs[2].len());
        let sized = engine
            .find_sized(&shared, sizes, queries, &mut texts_of)
            .unwrap();
        assert_eq!(sized.pairs, whole.pairs);
        assert_eq!(sized.candidates, whole.candidates);
        assert_eq!(sized.verified, whole.verified);
        let verdicts: Vec<(u32, u32, Verdict)> =
            whole.pairs.iter().map(|p| (p.a, p.b, p.verdict)).collect();
        assert!(
            verdicts.contains(&(0, 2, Verdict::Duplicate)),
            "{verdicts:?}"
        );
        assert!(
            verdicts.contains(&(1, 6, Verdict::Duplicate)),
            "{verdicts:?}"
        );
        assert!(whole.pairs.iter().any(|p| p.verified), "{verdicts:?}");
        // A size given for a document says whether it is a full index, as its signature does.
        for s in &sigs {
            assert_eq!(det.size_of(s).map(|z| z.exact), Some(det.is_exact(s)));
        }
    }

    #[test]
    fn queries_leave_pairs_of_later_documents_out() {
        let sigs = vec![
            (0..10).collect::<Vec<u64>>(),
            (0..10).collect(),
            (0..10).collect(),
        ];
        let pairs = find_pairs(
            &sigs,
            1,
            &Full::new(4),
            &thresholds(),
            &grey(),
            &mut no_texts,
        )
        .unwrap();
        let ab: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(ab, vec![(0, 1), (0, 2)]);
    }
}
