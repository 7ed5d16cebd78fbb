//! The curator's review of contained pairs: the queue, the shared passages of a pair, decisions,
//! and `explain` (why a document is in or out of the collection).
//!
//! The CLI (`collect review`, `collect explain`) and the web page (`serve`) both go through
//! these functions, so a decision means the same wherever it is taken.

pub mod pages;
pub mod queue;
pub mod serve;
pub mod stats;

use crate::canon::{fold_word, is_word_char, StopWords};
use crate::collection::{self, ReportTopic};
use crate::rule::Facts;
use crate::sign::Verdict;
use crate::store::queries::{Decision, DecisionRecord, DocMeta, ReviewPair};
use crate::store::review_log::EntryKind;
use crate::store::{Status, Store};
use anyhow::Result;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::ops::Range;
use std::path::Path;

/// Where a contained pair stands in the review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairStatus {
    /// Waiting for a curator: undecided, both texts in the collection.
    Pending,
    /// A decision was taken.
    Decided,
    /// Undecided, but one of the texts already left the collection for another reason.
    Moot,
}

/// A pair in the review queue; the JSON shape of `review list --json` (one object per pair).
#[derive(Debug, Clone, Serialize)]
pub struct PairSummary {
    /// Pair id.
    pub id: i64,
    /// First document id.
    pub a: String,
    /// Second document id.
    pub b: String,
    /// URL of a.
    pub url_a: Option<String>,
    /// URL of b.
    pub url_b: Option<String>,
    /// Source of a.
    pub source_a: String,
    /// Source of b.
    pub source_b: String,
    /// Title of a.
    pub title_a: Option<String>,
    /// Title of b.
    pub title_b: Option<String>,
    /// Resemblance.
    pub resemblance: f64,
    /// Containment of a in b (null when the method has none).
    pub cont_a_in_b: Option<f64>,
    /// Containment of b in a.
    pub cont_b_in_a: Option<f64>,
    /// Whether scores come from full shingle indexes.
    pub verified: bool,
    /// Shingles the texts share (the signature intersection).
    pub shared: u64,
    /// Words of a.
    pub words_a: u64,
    /// Words of b.
    pub words_b: u64,
    /// Which document is contained in the other.
    pub contained: String,
    /// pending, decided or moot.
    pub status: PairStatus,
    /// The decision, when taken.
    pub decision: Option<String>,
    /// The curator's note.
    pub note: Option<String>,
    /// When decided (seconds since the epoch).
    pub decided_at: Option<String>,
}

fn finite(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

impl PairSummary {
    /// Whether `a` is the contained text.
    fn a_is_contained(&self) -> bool {
        self.contained == self.a
    }

    /// The container's id.
    pub fn container(&self) -> &str {
        if self.a_is_contained() {
            &self.b
        } else {
            &self.a
        }
    }

    /// Containment of the contained text in the container.
    pub fn containment(&self) -> f64 {
        let c = if self.a_is_contained() {
            self.cont_a_in_b
        } else {
            self.cont_b_in_a
        };
        c.unwrap_or(0.0)
    }

    /// Words of the contained text: what keeping the container would take out.
    pub fn words_contained(&self) -> u64 {
        if self.a_is_contained() {
            self.words_a
        } else {
            self.words_b
        }
    }

    /// Words of the container.
    pub fn words_container(&self) -> u64 {
        if self.a_is_contained() {
            self.words_b
        } else {
            self.words_a
        }
    }

    /// The figures a rule tests.
    pub fn facts(&self) -> Facts<'_> {
        let a = self.a_is_contained();
        Facts {
            cont: self.containment(),
            res: self.resemblance,
            words: self.words_contained(),
            container_words: self.words_container(),
            shared: self.shared,
            source: if a { &self.source_a } else { &self.source_b },
            container_source: if a { &self.source_b } else { &self.source_a },
            verified: self.verified,
        }
    }
}

fn summarize(p: &ReviewPair, a: &DocMeta, b: &DocMeta) -> PairSummary {
    let in_collection = |m: &DocMeta| m.status == Status::Kept;
    let status = if p.decision.is_some() {
        PairStatus::Decided
    } else if in_collection(a) && in_collection(b) {
        PairStatus::Pending
    } else {
        PairStatus::Moot
    };
    PairSummary {
        id: p.pair.id,
        a: p.pair.a.clone(),
        b: p.pair.b.clone(),
        url_a: a.url.clone(),
        url_b: b.url.clone(),
        source_a: a.source.clone(),
        source_b: b.source.clone(),
        title_a: a.title.clone(),
        title_b: b.title.clone(),
        resemblance: p.pair.resemblance,
        cont_a_in_b: finite(p.pair.cont_a_in_b),
        cont_b_in_a: finite(p.pair.cont_b_in_a),
        verified: p.pair.verified,
        shared: p.pair.shared,
        words_a: a.words,
        words_b: b.words,
        contained: p.contained().to_string(),
        status,
        decision: p.decision.clone(),
        note: p.note.clone(),
        decided_at: p.decided_at.clone(),
    }
}

/// Opens the store of a collection directory for reading only (listing, showing, explaining,
/// exporting, stats): a read never creates or changes a store.
pub fn open_collection(dir: &Path) -> Result<Store> {
    collection::open_store(dir, collection::Access::Read)
}

/// Opens the store of a collection directory to record a decision.
pub fn open_collection_mut(dir: &Path) -> Result<Store> {
    collection::open_store(dir, collection::Access::Write)
}

/// Every contained pair with its review status, by id; `filter` keeps one status.
pub fn list(store: &Store, filter: Option<PairStatus>) -> Result<Vec<PairSummary>> {
    let metas: FxHashMap<String, DocMeta> = store
        .document_metas()?
        .into_iter()
        .map(|m| (m.id.clone(), m))
        .collect();
    let mut out = Vec::new();
    for p in store.review_pairs(Some(Verdict::Contained))? {
        let (Some(a), Some(b)) = (metas.get(&p.pair.a), metas.get(&p.pair.b)) else {
            continue;
        };
        let s = summarize(&p, a, b);
        if filter.is_none_or(|f| f == s.status) {
            out.push(s);
        }
    }
    Ok(out)
}

/// Review progress: how many contained pairs stand where, and decisions by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Progress {
    /// Contained pairs in all.
    pub pairs: usize,
    /// Waiting for a curator.
    pub pending: usize,
    /// Decided.
    pub decided: usize,
    /// Undecided but moot.
    pub moot: usize,
    /// Decided keep-both.
    pub keep_both: usize,
    /// Decided drop-contained.
    pub drop_contained: usize,
    /// Decided drop-container.
    pub drop_container: usize,
    /// Clusters with a pair waiting.
    pub clusters_pending: usize,
    /// Words at stake in them (what keeping their containers would take out).
    pub words_pending: u64,
}

/// Counts of the review queue.
pub fn progress(store: &Store) -> Result<Progress> {
    let all = list(store, None)?;
    Ok(tally(&all, &queue::clusters(&all)))
}

/// Counts of a listing of every contained pair and of its clusters.
pub fn tally(all: &[PairSummary], clusters: &[queue::Cluster]) -> Progress {
    let left = queue::left(clusters);
    let mut p = Progress {
        clusters_pending: left.clusters,
        words_pending: left.words,
        ..Progress::default()
    };
    for s in all {
        p.pairs += 1;
        match s.status {
            PairStatus::Pending => p.pending += 1,
            PairStatus::Decided => p.decided += 1,
            PairStatus::Moot => p.moot += 1,
        }
        match s.decision.as_deref().and_then(Decision::parse) {
            Some(Decision::KeepBoth) => p.keep_both += 1,
            Some(Decision::DropContained) => p.drop_contained += 1,
            Some(Decision::DropContainer) => p.drop_container += 1,
            None => {}
        }
    }
    p
}

/// A passage of one text that the other text shares.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Passage {
    /// Byte range in the text.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// Index of the passage of the other text where the same words first occur.
    pub other: Option<usize>,
}

/// Both texts of a pair with their shared passages: what `review show` and the page display.
#[derive(Debug, Clone, Serialize)]
pub struct PairDetail {
    /// The pair as listed.
    #[serde(flatten)]
    pub summary: PairSummary,
    /// Text of a.
    pub text_a: String,
    /// Text of b.
    pub text_b: String,
    /// Passages of a shared with b.
    pub passages_a: Vec<Passage>,
    /// Passages of b shared with a.
    pub passages_b: Vec<Passage>,
    /// Every decision taken on the pair, oldest first.
    pub history: Vec<DecisionRecord>,
}

/// One pair in full.
pub fn show(store: &Store, id: i64) -> Result<PairDetail> {
    let no_pair = || crate::error::bad_input(format!("{}: no pair {id}", store.path().display()));
    let p = store.review_pair(id)?.ok_or_else(no_pair)?;
    let a = store.document_meta(&p.pair.a)?.ok_or_else(no_pair)?;
    let b = store.document_meta(&p.pair.b)?.ok_or_else(no_pair)?;
    let text_a = store.document_text(&a.id)?.unwrap_or_default();
    let text_b = store.document_text(&b.id)?.unwrap_or_default();
    let topic = collection::stored_topic(store)?;
    let (passages_a, passages_b) = shared_passages(&topic, &text_a, &text_b);
    Ok(PairDetail {
        summary: summarize(&p, &a, &b),
        text_a,
        text_b,
        passages_a,
        passages_b,
        history: store.decision_log(id)?,
    })
}

/// Records and applies a decision, then brings the collection directory in line.
pub fn decide(
    store: &mut Store,
    dir: &Path,
    id: i64,
    decision: Decision,
    note: Option<&str>,
) -> Result<()> {
    store.record_decisions(EntryKind::Pair, &id.to_string(), decision, note, &[id])?;
    collection::sync_collection(store, dir)?;
    Ok(())
}

struct Word {
    span: Range<usize>,
    key: String,
}

/// Canonical words of a text with their byte spans (same words, folding and stop words as the
/// signatures), so shared shingles can be shown in the original text.
fn words_with_spans(text: &str, stop: &StopWords) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (is_word_char(c) && i < text.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let key = fold_word(&text[s..i]);
                if !stop.contains(&key) {
                    out.push(Word { span: s..i, key });
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The passages of `a` and `b` made of word shingles both texts hold, each linked to where the
/// other text has the same words.
pub fn shared_passages(topic: &ReportTopic, a: &str, b: &str) -> (Vec<Passage>, Vec<Passage>) {
    let stop = StopWords::for_languages(&topic.languages).unwrap_or_else(|_| StopWords::none());
    let w = topic.shingle.max(1);
    let wa = words_with_spans(a, &stop);
    let wb = words_with_spans(b, &stop);
    let shingles = |ws: &[Word]| -> Vec<String> {
        if ws.len() < w {
            return Vec::new();
        }
        (0..=ws.len() - w)
            .map(|i| {
                ws[i..i + w]
                    .iter()
                    .map(|x| x.key.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let sa = shingles(&wa);
    let sb = shingles(&wb);
    let set_b: FxHashSet<&str> = sb.iter().map(String::as_str).collect();
    let common: FxHashSet<&str> = sa
        .iter()
        .map(String::as_str)
        .filter(|s| set_b.contains(s))
        .collect();
    let runs = |ws: &[Word], sh: &[String]| -> Vec<(Range<usize>, usize)> {
        // Word ranges covered by common shingles, merged; with the first shingle of each run.
        let mut covered = vec![false; ws.len()];
        for (i, s) in sh.iter().enumerate() {
            if common.contains(s.as_str()) {
                covered[i..i + w].iter_mut().for_each(|c| *c = true);
            }
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < ws.len() {
            if covered[i] {
                let s = i;
                while i < ws.len() && covered[i] {
                    i += 1;
                }
                out.push((s..i, s));
            } else {
                i += 1;
            }
        }
        out
    };
    let ra = runs(&wa, &sa);
    let rb = runs(&wb, &sb);
    let (pos_a, pos_b) = (first_pos(&sa), first_pos(&sb));
    let link = |mine: &[(Range<usize>, usize)],
                my_sh: &[String],
                theirs: &[(Range<usize>, usize)],
                their_pos: &FxHashMap<&str, usize>,
                ws: &[Word]|
     -> Vec<Passage> {
        mine.iter()
            .map(|(r, _)| {
                let other = (r.start..r.end)
                    .filter(|&i| i < my_sh.len())
                    .find_map(|i| their_pos.get(my_sh[i].as_str()).copied())
                    .and_then(|pos| theirs.iter().position(|(tr, _)| tr.contains(&pos)));
                Passage {
                    start: ws[r.start].span.start,
                    end: ws[r.end - 1].span.end,
                    other,
                }
            })
            .collect()
    };
    (
        on_whole_tokens(a, link(&ra, &sa, &rb, &pos_b, &wa)),
        on_whole_tokens(b, link(&rb, &sb, &ra, &pos_a, &wb)),
    )
}

/// Characters of markup: a token holding one (`<onlyinclude>`, `[[Year`, `{{cite|…}}`) is
/// marked whole or not at all, so a marker never lands inside a tag-like string.
const MARKUP: &[char] = &['<', '>', '[', ']', '{', '}', '|'];

/// The passages widened, where a boundary falls inside a whitespace-delimited token that holds
/// markup, to that token's edges; never over the previous passage, so the order and the
/// links between the two texts' passages stay as they were.
fn on_whole_tokens(text: &str, mut passages: Vec<Passage>) -> Vec<Passage> {
    let token_start = |at: usize| text[..at].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let token_end = |at: usize| {
        text[at..]
            .find(char::is_whitespace)
            .map_or(text.len(), |i| at + i)
    };
    let mut previous_end = 0;
    for p in &mut passages {
        let (ts, te) = (token_start(p.start), token_end(p.start));
        if text[ts..te].contains(MARKUP) {
            p.start = ts.max(previous_end);
        }
        let (ts, te) = (token_start(p.end), token_end(p.end));
        if ts < p.end && text[ts..te].contains(MARKUP) {
            p.end = te;
        }
        previous_end = p.end;
    }
    passages
}

fn first_pos(sh: &[String]) -> FxHashMap<&str, usize> {
    let mut m = FxHashMap::default();
    for (i, s) in sh.iter().enumerate() {
        m.entry(s.as_str()).or_insert(i);
    }
    m
}

/// A text with its shared passages between `[[` and `]]`, for the terminal.
pub fn mark_plain(text: &str, passages: &[Passage]) -> String {
    let mut out = String::with_capacity(text.len() + passages.len() * 4);
    let mut at = 0;
    for p in passages {
        out.push_str(&text[at..p.start]);
        out.push_str("[[");
        out.push_str(&text[p.start..p.end]);
        out.push_str("]]");
        at = p.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Why a document is in or out of the collection.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// Document id.
    pub id: String,
    /// Status.
    pub status: Status,
    /// Whether its text is in the collection.
    pub in_collection: bool,
    /// One sentence saying why.
    pub why: String,
    /// Filter or review reason, when stored.
    pub reason: Option<String>,
    /// The kept document it duplicates.
    pub duplicate_of: Option<String>,
    /// The review pair whose decision dropped it.
    pub dropped_by: Option<i64>,
    /// Relevance to the topic (null: not scored, the stage was off or another filter said no).
    pub relevance: Option<f64>,
    /// The topic stems that carried the relevance, with their counts (`собак×12 пород×5`).
    pub relevance_terms: Option<String>,
    /// Where it came from.
    pub source: String,
    /// Locator.
    pub locator: String,
    /// URL.
    pub url: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// Words.
    pub words: u64,
    /// Run that stored it.
    pub added_run: i64,
    /// Every stored pair it is in, with scores, verdicts and decisions.
    pub pairs: Vec<ExplainedPair>,
}

/// A pair as `explain` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedPair {
    /// Pair id.
    pub id: i64,
    /// The other document.
    pub other: String,
    /// duplicate or contained.
    pub verdict: Verdict,
    /// Resemblance.
    pub resemblance: f64,
    /// Containment of this document in the other.
    pub cont_this_in_other: Option<f64>,
    /// Containment of the other in this one.
    pub cont_other_in_this: Option<f64>,
    /// The decision on it, when taken.
    pub decision: Option<String>,
    /// The note.
    pub note: Option<String>,
    /// Every decision taken, oldest first.
    pub history: Vec<DecisionRecord>,
}

/// Explains one document.
pub fn explain(store: &Store, id: &str) -> Result<Explanation> {
    let m = store.document_meta(id)?.ok_or_else(|| {
        crate::error::bad_input(format!("{}: no document {id}", store.path().display()))
    })?;
    let why = match m.status {
        Status::Kept => {
            "in the collection: it passed the filters and no kept text duplicates it".into()
        }
        Status::Duplicate => format!(
            "out: a near-duplicate of the kept text {}",
            m.duplicate_of.as_deref().unwrap_or("?")
        ),
        Status::Short => format!(
            "out: too short ({})",
            m.reason.as_deref().unwrap_or("few words")
        ),
        Status::Filtered => format!(
            "out: filtered ({})",
            m.reason.as_deref().unwrap_or("a filter")
        ),
        Status::OffTopic => format!(
            "out: off topic ({})",
            m.reason
                .as_deref()
                .unwrap_or("relevance below the threshold")
        ),
        Status::Dropped => format!(
            "out: dropped by the curator's decision on pair {}",
            m.dropped_by.map(|p| p.to_string()).unwrap_or("?".into())
        ),
        Status::Pending => {
            "not settled yet: an update was interrupted; rerun `collect update`".into()
        }
    };
    let mut pairs = Vec::new();
    for p in store.pairs_of(id)? {
        let this_is_a = p.pair.a == id;
        let (this_in, other_in) = if this_is_a {
            (p.pair.cont_a_in_b, p.pair.cont_b_in_a)
        } else {
            (p.pair.cont_b_in_a, p.pair.cont_a_in_b)
        };
        pairs.push(ExplainedPair {
            id: p.pair.id,
            other: if this_is_a {
                p.pair.b.clone()
            } else {
                p.pair.a.clone()
            },
            verdict: p.pair.verdict,
            resemblance: p.pair.resemblance,
            cont_this_in_other: finite(this_in),
            cont_other_in_this: finite(other_in),
            decision: p.decision.clone(),
            note: p.note.clone(),
            history: store.decision_log(p.pair.id)?,
        });
    }
    Ok(Explanation {
        id: m.id.clone(),
        in_collection: m.status == Status::Kept,
        status: m.status,
        why,
        reason: m.reason.clone(),
        duplicate_of: m.duplicate_of.clone(),
        dropped_by: m.dropped_by,
        relevance: m.relevance,
        relevance_terms: m.relevance_terms.clone(),
        source: m.source.clone(),
        locator: m.locator.clone(),
        url: m.url.clone(),
        title: m.title.clone(),
        words: m.words,
        added_run: m.added_run,
        pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic() -> ReportTopic {
        ReportTopic {
            name: "t".into(),
            title: String::new(),
            resemblance: 0.5,
            containment: 0.5,
            min_words: 0,
            languages: vec!["en".into()],
            shingle: 3,
        }
    }

    #[test]
    fn passages_cover_shared_shingles_and_link_across() {
        let a = "Intro words here. The quick brown fox jumps over lazy dogs. Tail.";
        let b = "Other start; the QUICK brown fox jumps over lazy dogs!";
        let (pa, pb) = shared_passages(&topic(), a, b);
        assert_eq!(pa.len(), 1);
        assert_eq!(
            &a[pa[0].start..pa[0].end],
            "quick brown fox jumps over lazy dogs"
        );
        assert_eq!(
            &b[pb[0].start..pb[0].end],
            "QUICK brown fox jumps over lazy dogs"
        );
        assert_eq!(pa[0].other, Some(0));
        assert_eq!(
            mark_plain(b, &pb),
            "Other start; the [[QUICK brown fox jumps over lazy dogs]]!"
        );
    }

    #[test]
    fn passages_never_split_a_tag_like_token() {
        let a = "<onlyinclude>Year 821 was a common year starting on Tuesday</onlyinclude> end";
        let b = "intro: Year 821 was a common year starting on Tuesday.";
        let (pa, _) = shared_passages(&topic(), a, b);
        assert_eq!(pa.len(), 1);
        let marked = mark_plain(a, &pa);
        assert_eq!(
            marked,
            "[[<onlyinclude>Year 821 was a common year starting on Tuesday</onlyinclude>]] end"
        );
        // Plain punctuation is not markup: the marker stays beside the word.
        let (_, pb) = shared_passages(&topic(), a, b);
        assert_eq!(
            mark_plain(b, &pb),
            "intro: [[Year 821 was a common year starting on Tuesday]]."
        );
    }

    /// Two real year stubs (tests/fixtures/review): passages start and end on whole words,
    /// never inside `<onlyinclude>`, adjacent shared shingles make one passage, and each
    /// passage links to a twin that holds the same words.
    #[test]
    fn passages_on_real_year_stubs_are_whole_and_linked() {
        let fixture = |n: &str| {
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/review")
                    .join(n),
            )
            .unwrap()
        };
        let (a, b) = (fixture("year_50_bc.txt"), fixture("year_47_bc.txt"));
        let (pa, pb) = shared_passages(&topic(), &a, &b);
        assert!(!pa.is_empty() && !pb.is_empty());
        for (text, ps, other, other_ps) in [(&a, &pa, &b, &pb), (&b, &pb, &a, &pa)] {
            for p in ps.iter() {
                let before = text[..p.start].chars().next_back();
                let after = text[p.end..].chars().next();
                assert!(
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '<')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '>'),
                    "passage cuts a token: {:?}",
                    &text[p.start.saturating_sub(3)..(p.end + 3).min(text.len())]
                );
                let inside = &text[p.start..p.end];
                assert_eq!(
                    inside.matches('<').count(),
                    inside.matches('>').count(),
                    "{inside}"
                );
                let twin = &other_ps[p.other.expect("a twin")];
                let first_word = |s: &str| s.split_whitespace().next().unwrap().to_lowercase();
                assert_eq!(first_word(inside), first_word(&other[twin.start..twin.end]));
            }
        }
        // The opening sentence is one passage, not one per shingle.
        let opening = "BC was a year of the pre-Julian Roman calendar. At the time, it was known as the Year of the Consulship";
        assert!(
            pa.iter().any(|p| &a[p.start..p.end] == opening),
            "{:?}",
            pa.iter().map(|p| &a[p.start..p.end]).collect::<Vec<_>>()
        );
    }

    #[test]
    fn no_shared_words_no_passages() {
        let (pa, pb) = shared_passages(&topic(), "один два три четыре", "five six seven eight");
        assert!(pa.is_empty() && pb.is_empty());
    }
}
