//! Signatures of canonical texts and the similarity they support (docs/method.md §1–§4).
//!
//! Every detector is one file implementing [`Detector`]; the dedup engine only sees sorted sets
//! of 64-bit elements and asks the detector how to score and judge a pair.

mod a12;
mod crc;
mod descrwords;
mod full;
mod heavysent;
mod infostream;
mod lexrand;
mod logshingles;
mod longsent;
mod md5;
mod megashingles;
mod minn;
mod modm;
mod optfreq;
mod passages;
mod postings;
mod prefilter2;
mod settings;
pub mod stats;
mod tf;
mod tfidf;
mod tfridf;

use rayon::prelude::*;

pub use a12::A12;
pub use descrwords::DescrWords;
pub use full::Full;
pub use heavysent::HeavySent;
pub use infostream::InfoStream;
pub use lexrand::LexRand;
pub use logshingles::LogShingles;
pub use longsent::LongSent;
pub use md5::Md5;
pub use megashingles::Megashingles;
pub use minn::MinN;
pub use modm::ModM;
pub use optfreq::OptFreq;
pub use passages::{Common, ShingleSeq};
pub use postings::{shared_pairs, Postings};
pub use prefilter2::Prefilter2;
pub use settings::DedupSettings;
pub use stats::CorpusStats;
pub use tf::Tf;
pub use tfidf::TfIdf;
pub use tfridf::TfRidf;

use crate::canon::CanonText;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Similarity of one pair, computed from the two signatures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scores {
    /// Number of shared signature elements.
    pub inter: u32,
    /// Resemblance |A∩B| / |A∪B| (or the detector's estimate of it).
    pub resemblance: f64,
    /// Containment of A in B, |A∩B| / |A|; NaN when the detector cannot estimate it.
    pub cont_a_in_b: f64,
    /// Containment of B in A, |A∩B| / |B|; NaN when the detector cannot estimate it.
    pub cont_b_in_a: f64,
}

impl Scores {
    /// Plain set scores from the intersection size and both set sizes.
    pub fn from_counts(inter: usize, len_a: usize, len_b: usize) -> Scores {
        let union = len_a + len_b - inter;
        let ratio = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        Scores {
            inter: inter as u32,
            resemblance: ratio(inter, union),
            cont_a_in_b: ratio(inter, len_a),
            cont_b_in_a: ratio(inter, len_b),
        }
    }

    /// The larger of the two containments (NaN-safe: NaN counts as 0).
    pub fn max_containment(&self) -> f64 {
        let z = |x: f64| if x.is_nan() { 0.0 } else { x };
        z(self.cont_a_in_b).max(z(self.cont_b_in_a))
    }
}

/// What a pair is, judged against the thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Resemblance at or above the duplicate threshold: one copy is dropped.
    Duplicate,
    /// One text is mostly inside the other: flagged for a curator, nothing dropped.
    Contained,
    /// Shares something, but below both thresholds.
    Different,
    /// A signature is too small to back any verdict (see `min_elements`).
    Unsure,
    /// Contained by its scores, but the two texts share fewer shingles than `min_shared_shingles`:
    /// too little to be worth a curator's reading. Stored and shown, never queued.
    Weak,
}

impl Verdict {
    /// The name used in TSV output and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Duplicate => "duplicate",
            Verdict::Contained => "contained",
            Verdict::Different => "different",
            Verdict::Unsure => "unsure",
            Verdict::Weak => "weak",
        }
    }

    /// Whether the store records pairs of this verdict: duplicates (the keep rule's input),
    /// contained pairs (the review queue) and weak ones (shown by `explain`, never queued).
    pub fn is_recorded(self) -> bool {
        matches!(
            self,
            Verdict::Duplicate | Verdict::Contained | Verdict::Weak
        )
    }

    /// Parses the name written by [`Verdict::as_str`].
    pub fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "duplicate" => Verdict::Duplicate,
            "contained" => Verdict::Contained,
            "different" => Verdict::Different,
            "unsure" => Verdict::Unsure,
            "weak" => Verdict::Weak,
            _ => return None,
        })
    }
}

/// What judging a pair reads of a signature when its sizes say enough, so that a distributed
/// run ships three numbers per document to the pair judge instead of whole signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigSize {
    /// Elements in the signature.
    pub len: usize,
    /// Elements of the sample (all of them for a detector that does not sample).
    pub sampled: usize,
    /// Whether the signature is a full shingle index ([`Detector::is_exact`]).
    pub exact: bool,
}

/// The two thresholds (docs/method.md §5): resemblance for duplicates, containment for review.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Resemblance at or above which a pair is a duplicate.
    pub resemblance: f64,
    /// Containment at or above which a pair is flagged as contained.
    pub containment: f64,
    /// Shingles a contained pair must share (estimated from the signature, exact on full
    /// texts); below it the pair is `weak`.
    pub min_shared_shingles: f64,
}

/// Which pairs below the thresholds are re-scored on the full texts, and the passage rule that
/// can raise them to `contained` (docs/method.md §6.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GreyZone {
    /// Signature resemblance or containment from which a `different` pair is verified.
    pub from: f64,
    /// Words a copied passage spans at least.
    pub passage_words: usize,
    /// Share of the shorter text in copied passages that makes the pair `contained`.
    pub passage_share: f64,
    /// A shingle in more than this many of the texts verified together is boilerplate (a
    /// footer, a template sentence), never part of a copied passage.
    pub passage_common: usize,
}

impl GreyZone {
    /// Whether a pair with these signature scores and verdict is in the grey zone.
    pub fn holds(&self, s: &Scores, v: Verdict) -> bool {
        v == Verdict::Different && s.resemblance.max(s.max_containment()) >= self.from
    }

    /// The verdict on verified scores, raised to `contained` by copied passages.
    pub fn judge(&self, full: &dyn Detector, s: &Scores, copied: f64, t: &Thresholds) -> Verdict {
        match full.judge(s, t) {
            Verdict::Different if self.passage_words > 0 && copied >= self.passage_share => {
                Verdict::Contained
            }
            v => v,
        }
    }
}

/// A near-duplicate detector: how a canonical text becomes a signature and how pairs are judged.
pub trait Detector: Send + Sync {
    /// Short name used on the command line and in topic files.
    fn name(&self) -> &'static str;

    /// Name plus every parameter that changes the signature; stored so that a store built with
    /// other parameters is never compared against silently.
    fn key(&self) -> String;

    /// Words per shingle.
    fn shingle(&self) -> usize;

    /// The signature of one canonical text: sorted, without repeats.
    fn sign(&self, text: &CanonText) -> Vec<u64>;

    /// Whether containment can be estimated from this signature.
    fn supports_containment(&self) -> bool {
        true
    }

    /// Shingles of the text one shared signature element stands for: 1 for a full index, m
    /// for a mod-m sample. Turns a pair's shared elements into an estimate of shared shingles.
    fn shingles_per_element(&self) -> f64 {
        1.0
    }

    /// Whether `sig` holds every shingle fingerprint of its text, so that set scores on it
    /// are exact (a full index).
    fn is_exact(&self, _sig: &[u64]) -> bool {
        false
    }

    /// Scores of a pair from both signatures and their intersection size.
    fn scores(&self, a: &[u64], b: &[u64], inter: usize) -> Scores {
        Scores::from_counts(inter, a.len(), b.len())
    }

    /// Scores and verdict of a pair; `Unsure` when the signatures cannot back a verdict.
    fn judge_pair(&self, a: &[u64], b: &[u64], inter: usize, t: &Thresholds) -> (Scores, Verdict) {
        self.judge_sized(a, b, self.size_of(a), self.size_of(b), inter, t)
    }

    /// [`Detector::judge_pair`] with both signatures' [`Detector::size_of`] already known: the
    /// engine sizes each signature once, not once per pair it is in.
    fn judge_sized(
        &self,
        a: &[u64],
        b: &[u64],
        size_a: Option<SigSize>,
        size_b: Option<SigSize>,
        inter: usize,
        t: &Thresholds,
    ) -> (Scores, Verdict) {
        match (size_a, size_b) {
            (Some(sa), Some(sb)) => self.judge_sizes(sa, sb, inter, t),
            _ => {
                let s = self.scores(a, b, inter);
                let v = self.judge(&s, t);
                (s, v)
            }
        }
    }

    /// The sizes [`Detector::judge_sizes`] reads, for a detector whose pair verdict depends on
    /// nothing else; `None` for one that reads the signatures themselves (min-n merges them,
    /// key detectors count keys), which a distributed run cannot judge from sizes.
    fn size_of(&self, _sig: &[u64]) -> Option<SigSize> {
        None
    }

    /// Scores and verdict of a pair from the sizes of both signatures and their intersection:
    /// the one judge of a pair for detectors with [`Detector::size_of`].
    fn judge_sizes(
        &self,
        a: SigSize,
        b: SigSize,
        inter: usize,
        t: &Thresholds,
    ) -> (Scores, Verdict) {
        let s = Scores::from_counts(inter, a.len, b.len);
        let v = self.judge(&s, t);
        (s, v)
    }

    /// The verdict on a pair's scores.
    fn judge(&self, s: &Scores, t: &Thresholds) -> Verdict {
        if s.resemblance >= t.resemblance {
            Verdict::Duplicate
        } else if self.supports_containment() && s.max_containment() >= t.containment {
            Verdict::Contained
        } else {
            Verdict::Different
        }
    }

    /// Whether signing needs collection statistics, handed over by [`Detector::prepare`].
    fn needs_stats(&self) -> bool {
        false
    }

    /// The terms of one document that the statistics count (text order, repeats included).
    fn terms(&self, _raw: &str, _canon: &CanonText) -> Vec<u64> {
        Vec::new()
    }

    /// Receives the collection statistics before any document is signed.
    fn prepare(&mut self, _stats: Arc<CorpusStats>) {}

    /// The signature of one document; detectors that read sentences use the raw text.
    fn sign_doc(&self, _raw: &str, canon: &CanonText) -> Vec<u64> {
        self.sign(canon)
    }

    /// Whether the thresholds change verdicts (not for methods where a shared key decides).
    fn uses_thresholds(&self) -> bool {
        true
    }

    /// Candidate pairs `(a, b, shared elements)`, `a < b`, among the pairs that involve one of
    /// the first `queries` documents, handed to `sink` in blocks, sorted across blocks. The
    /// default counts shared elements through postings; a detector with its own pairing logic
    /// (A12) overrides it.
    fn candidate_pairs(
        &self,
        sigs: &[Vec<u64>],
        queries: usize,
        sink: &mut dyn FnMut(Vec<(u32, u32, u32)>),
    ) {
        shared_pairs(sigs, &Postings::build(sigs), queries, sink)
    }
}

/// Scores of a key-sharing detector: containment means nothing over a handful of keys.
pub(crate) fn key_scores(a: &[u64], b: &[u64], inter: usize) -> Scores {
    let mut s = Scores::from_counts(inter, a.len(), b.len());
    s.cont_a_in_b = f64::NAN;
    s.cont_b_in_a = f64::NAN;
    s
}

/// Verdict of a key-sharing detector: duplicate when at least `k` keys are shared.
pub(crate) fn judge_shared(s: &Scores, k: usize) -> Verdict {
    if s.inter as usize >= k.max(1) {
        Verdict::Duplicate
    } else {
        Verdict::Different
    }
}

/// Implements the [`Detector`] methods shared by every key-sharing detector.
macro_rules! key_detector_common {
    ($k:expr) => {
        fn supports_containment(&self) -> bool {
            false
        }

        fn uses_thresholds(&self) -> bool {
            false
        }

        fn scores(&self, a: &[u64], b: &[u64], inter: usize) -> $crate::sign::Scores {
            $crate::sign::key_scores(a, b, inter)
        }

        fn judge(
            &self,
            s: &$crate::sign::Scores,
            _t: &$crate::sign::Thresholds,
        ) -> $crate::sign::Verdict {
            $crate::sign::judge_shared(s, $k(self))
        }
    };
}
pub(crate) use key_detector_common;

/// Names of the detectors [`build_detector`] knows.
pub const METHODS: &[&str] = &[
    "modm",
    "minn",
    "full",
    "megashingles",
    "megashingles36",
    "md5",
    "tf",
    "tfidf",
    "tfridf",
    "longsent",
    "heavysent",
    "lexrand",
    "logshingles",
    "descrwords",
    "optfreq",
    "a12",
    "infostream",
    "prefilter2",
];

/// Builds the detector named in `p`, or says what is wrong with the parameters.
pub fn build_detector(p: &DedupSettings) -> Result<Box<dyn Detector>, String> {
    let five = matches!(
        p.method.as_str(),
        "megashingles" | "megashingles36" | "logshingles"
    );
    let w = p.shingle.unwrap_or(if five { 5 } else { 4 });
    if w == 0 {
        return Err("shingle must be at least 1 word".into());
    }
    Ok(match p.method.as_str() {
        "modm" => {
            if p.modulus == 0 {
                return Err("modulus must be at least 1".into());
            }
            Box::new(ModM::new(w, p.modulus, p.min_elements))
        }
        "minn" => {
            if p.min_n == 0 {
                return Err("min_n must be at least 1".into());
            }
            Box::new(MinN::new(w, p.min_n))
        }
        "full" => Box::new(Full::new(w)),
        "megashingles" => Box::new(Megashingles::new(w, p.maps, p.supershingles)?),
        // The 2007 comparison's variant (A6): 36 maps in 6 groups of 6, for usable recall.
        "megashingles36" => Box::new(Megashingles::new(w, 36, 6)?),
        "md5" => Box::new(Md5),
        "tf" => Box::new(Tf::default()),
        "tfidf" => Box::new(TfIdf::default()),
        "tfridf" => Box::new(TfRidf::default()),
        "longsent" => Box::new(LongSent),
        "heavysent" => Box::new(HeavySent::default()),
        "lexrand" => Box::new(LexRand::default()),
        "logshingles" => Box::new(LogShingles::new(w)),
        "descrwords" => Box::new(DescrWords::default()),
        "optfreq" => Box::new(OptFreq::default()),
        "a12" => Box::new(A12),
        "infostream" => {
            if p.agree == 0 || p.agree > infostream::TERMS {
                return Err(format!(
                    "agree must be between 1 and {}, got {}",
                    infostream::TERMS,
                    p.agree
                ));
            }
            Box::new(InfoStream::new(p.agree))
        }
        "prefilter2" => Box::new(Prefilter2::default()),
        other => {
            return Err(format!(
                "unknown method `{other}` (known: {})",
                METHODS.join(", ")
            ))
        }
    })
}

/// CRC32 fingerprints of every `w`-word shingle of `text`, in text order, repeats included.
///
/// A text shorter than `w` words has one shingle: the whole text, so that short texts still
/// have a non-empty index (they are dropped by the length filter in collections anyway).
#[inline]
pub fn for_each_shingle_crc(text: &CanonText, w: usize, mut f: impl FnMut(u32)) {
    let n = text.len();
    if n == 0 {
        return;
    }
    if n < w {
        f(crc32fast::hash(text.buf.as_bytes()));
        return;
    }
    let spans = (0..=n - w).map(|i| {
        let span = text.span_range(i, w);
        (span.start, span.end)
    });
    crc::for_each_span_crc(text.buf.as_bytes(), spans, f);
}

/// Sorts and removes repeats: the set form every signature is kept in.
pub fn into_set(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Where each of a list of sorted sets is cut into parts by value, for work done a part at a
/// time over all of them: part `p` holds the elements from `starts[p]` on, below
/// `starts[p + 1]` when there is one.
///
/// The cuts of a set are all found while its elements are in the cache, on all cores: cutting
/// each set anew for every part walked the whole list once per part, a cache miss per step of
/// each search, and that was most of the inverted index's build.
pub struct PartCuts {
    /// Per set, `parts + 1` positions: part `p` is `cuts[p]..cuts[p + 1]`.
    cuts: Vec<u32>,
    parts: usize,
}

impl PartCuts {
    /// The cuts of `sets` (each sorted) by `starts` (increasing).
    pub fn new<T, S>(sets: &[S], starts: &[T]) -> PartCuts
    where
        T: Ord + Copy + Sync,
        S: AsRef<[T]> + Sync,
    {
        let parts = starts.len();
        let mut cuts = vec![0u32; sets.len() * (parts + 1)];
        cuts.par_chunks_mut(parts + 1)
            .zip(sets.par_iter())
            .with_min_len(256)
            .for_each(|(cut, set)| {
                let set = set.as_ref();
                let mut from = 0;
                for (c, &start) in cut.iter_mut().zip(starts) {
                    from += set[from..].partition_point(|&e| e < start);
                    *c = from as u32;
                }
                cut[parts] = set.len() as u32;
            });
        PartCuts { cuts, parts }
    }

    /// Positions in set `set` of the elements of part `part`.
    pub fn range(&self, set: usize, part: usize) -> std::ops::Range<usize> {
        let at = set * (self.parts + 1) + part;
        self.cuts[at] as usize..self.cuts[at + 1] as usize
    }
}

/// Whether the sorted set `large` is so much larger than `small` that a search in the rest of
/// it per element of `small` ([`search_each`]) beats walking it.
pub(crate) fn far_apart<T>(small: &[T], large: &[T]) -> bool {
    small.len() * 16 < large.len()
}

/// Calls `found(i, j)` for each element `small[i]` that the sorted set `large` holds, at
/// `large[j]`, in order: each searched for in what is left of `large` after the last one,
/// galloping from there (1, 2, 4, … ahead) before the binary search, so that a search costs
/// the log of the gap to the next element, not of all that is left, and reads near the last
/// one. (A binary search over all that was left was half the time of verifying the 80k dev
/// corpus's pairs, most of it waiting on far reads.)
pub(crate) fn search_each<T: Ord>(small: &[T], large: &[T], mut found: impl FnMut(usize, usize)) {
    let mut from = 0;
    for (i, x) in small.iter().enumerate() {
        let rest = &large[from..];
        let mut end = 1;
        while end < rest.len() && rest[end - 1] < *x {
            end *= 2;
        }
        // Everything before `end / 2` is below `x`; `rest[end - 1]`, if there, is not.
        let skipped = end / 2;
        match rest[skipped..end.min(rest.len())].binary_search(x) {
            Ok(at) => {
                found(i, from + skipped + at);
                from += skipped + at + 1;
            }
            Err(at) => from += skipped + at,
        }
    }
}

/// Size of the intersection of two sorted sets.
pub fn intersection_size<T: Ord + Copy>(a: &[T], b: &[T]) -> usize {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if far_apart(small, large) {
        let mut n = 0;
        search_each(small, large, |_, _| n += 1);
        return n;
    }
    // A merge without branches on the comparison: which side moves is unpredictable.
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::canon::{CanonText, Canonicalizer, StopWords};

    /// A seeded generator (a 64-bit LCG): random cases that are the same on every run.
    pub struct Lcg(pub u64);

    impl Lcg {
        /// A number below `n`.
        pub fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }

        /// A sorted set of `n` draws below `range`, repeats dropped.
        pub fn sorted_set(&mut self, n: u64, range: u64) -> Vec<u64> {
            let mut v: Vec<u64> = (0..n).map(|_| self.below(range)).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
    }

    /// Canonical form without stop-word removal, so tests control every word.
    pub fn canon(text: &str) -> CanonText {
        let stop = StopWords::none();
        Canonicalizer::new(&stop).canonicalize(text)
    }

    /// Words `{prefix}{i}` for `i` in `range`, space-separated: texts whose overlaps tests set.
    pub fn words(range: std::ops::Range<usize>, prefix: &str) -> String {
        range
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `middle` between `before` and `after` words of the text's own (prefix `own`): a passage
    /// pasted into another text.
    pub fn between(own: &str, before: usize, middle: &str, after: usize) -> String {
        format!(
            "{} {middle} {}",
            words(0..before, own),
            words(before..before + after, own)
        )
    }

    /// [`words`] with `s` prefixes, every `every`-th word replaced by an `r` word: a copy
    /// reworded often enough that no shared run is longer than `every - 1` words.
    pub fn reworded(range: std::ops::Range<usize>, every: usize) -> String {
        range
            .map(|i| {
                if i % every == every - 1 {
                    format!("r{i}")
                } else {
                    format!("s{i}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_from_counts() {
        let s = Scores::from_counts(2, 4, 8);
        assert_eq!(s.resemblance, 0.2);
        assert_eq!(s.cont_a_in_b, 0.5);
        assert_eq!(s.cont_b_in_a, 0.25);
    }

    #[test]
    fn parts_of_sorted_sets_cover_each_once() {
        let sets: [&[u32]; 3] = [&[1, 4, 4 << 28, u32::MAX], &[], &[0, 5, 6, 7]];
        let cuts = PartCuts::new(&sets, &[0, 4, 4 << 28]);
        assert_eq!(cuts.range(0, 0), 0..1);
        assert_eq!(cuts.range(0, 1), 1..2);
        assert_eq!(cuts.range(0, 2), 2..4);
        assert_eq!(cuts.range(1, 0), 0..0);
        assert_eq!(cuts.range(1, 2), 0..0);
        assert_eq!(cuts.range(2, 0), 0..1);
        assert_eq!(cuts.range(2, 1), 1..4);
        assert_eq!(cuts.range(2, 2), 4..4);
        // Elements below the first start belong to no part.
        let cuts = PartCuts::new(&sets, &[5, 7]);
        assert_eq!(cuts.range(2, 0), 1..3);
        assert_eq!(cuts.range(2, 1), 3..4);
        assert_eq!(cuts.range(0, 0), 2..2);
    }

    #[test]
    fn intersection_of_sorted_sets() {
        assert_eq!(intersection_size(&[1, 3, 5, 7], &[2, 3, 4, 7, 9]), 2);
        assert_eq!(intersection_size(&[], &[1]), 0);
        // Sets far apart in size (searched, not merged), either way round, with shared
        // elements at both ends and absent ones between.
        let large: Vec<u32> = (0..1000).map(|x| x * 3).collect();
        let small = [0u32, 4, 299, 300, 1500, 2997, 5000];
        let naive = small.iter().filter(|x| large.contains(x)).count();
        assert_eq!(naive, 4);
        assert_eq!(intersection_size(&small, &large), naive);
        assert_eq!(intersection_size(&large, &small), naive);
        assert_eq!(intersection_size(&large, &large), 1000);
    }

    #[test]
    fn each_search_finds_what_a_lookup_finds_at_every_gap() {
        let mut rng = test_support::Lcg(11);
        for round in 0..3000 {
            // Gaps from none to past the end of `large`, so the gallop stops on an element,
            // between two and at the end, from every place it can start.
            let range = 1 + rng.below(5000);
            let (na, nb) = (rng.below(40), rng.below(700));
            let (small, large) = (rng.sorted_set(na, range), rng.sorted_set(nb, range));
            let mut got = Vec::new();
            search_each(&small, &large, |i, j| got.push((i, j)));
            let want: Vec<(usize, usize)> = small
                .iter()
                .enumerate()
                .filter_map(|(i, x)| large.binary_search(x).ok().map(|j| (i, j)))
                .collect();
            assert_eq!(got, want, "round {round}: {small:?} in {large:?}");
        }
    }

    #[test]
    fn short_text_has_one_shingle() {
        let t = test_support::canon("two words");
        let mut n = 0;
        for_each_shingle_crc(&t, 4, |_| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn shingle_crc_is_crc32_of_space_joined_words() {
        let t = test_support::canon("Alpha beta, gamma delta epsilon");
        let mut got = Vec::new();
        for_each_shingle_crc(&t, 4, |c| got.push(c));
        assert_eq!(
            got,
            vec![
                crc32fast::hash(b"alpha beta gamma delta"),
                crc32fast::hash(b"beta gamma delta epsilon")
            ]
        );
    }

    #[test]
    fn judge_prefers_duplicate_then_contained() {
        let d = Full::new(4);
        let t = Thresholds {
            resemblance: 0.6,
            containment: 0.6,
            min_shared_shingles: 0.0,
        };
        assert_eq!(
            d.judge(&Scores::from_counts(6, 8, 8), &t),
            Verdict::Duplicate
        );
        assert_eq!(
            d.judge(&Scores::from_counts(6, 6, 30), &t),
            Verdict::Contained
        );
        assert_eq!(
            d.judge(&Scores::from_counts(1, 6, 30), &t),
            Verdict::Different
        );
    }

    #[test]
    fn unknown_method_is_named() {
        let p = DedupSettings {
            method: "simhash".into(),
            ..Default::default()
        };
        assert!(build_detector(&p).err().unwrap().contains("simhash"));
    }
}
