//! `collect stats`: the paper's Table 1 figures of a collection and the review progress.

use crate::collection::{self, Counts};
use crate::review;
use crate::store::{Status, Store};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Everything `collect stats` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Topic name.
    pub topic: String,
    /// Detector key.
    pub detector: String,
    /// Figures per source.
    pub sources: BTreeMap<String, Counts>,
    /// Figures of the whole collection.
    pub total: Counts,
    /// Review queue counts.
    pub review: review::Progress,
    /// Inputs skipped per source (`collect stats DIR --skipped` lists them).
    pub skipped: BTreeMap<String, u64>,
    /// Relevance scores of the collection; null when no text was scored (the stage off).
    pub relevance: Option<RelevanceStats>,
    /// Documents by the format they were read from (`html`, `text`, `wikitext`, `pdf`, `docx`,
    /// `odt`, `epub`; `unrecorded` for documents stored before formats were).
    pub formats: BTreeMap<String, u64>,
    /// The archive dates documents carry (WARC sources); null when none does.
    pub dates: Option<DateSpan>,
}

/// The span of the dates sources gave their documents.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DateSpan {
    /// Documents with a date.
    pub dated: u64,
    /// Earliest date, as the source wrote it (ISO 8601 sorts as text).
    pub first: String,
    /// Latest date.
    pub last: String,
}

fn date_span(docs: &[crate::store::queries::DocMeta]) -> Option<DateSpan> {
    let mut dates: Vec<&str> = docs.iter().filter_map(|d| d.date.as_deref()).collect();
    dates.sort_unstable();
    Some(DateSpan {
        dated: dates.len() as u64,
        first: dates.first()?.to_string(),
        last: dates.last()?.to_string(),
    })
}

/// The spread of the relevance scores.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RelevanceStats {
    /// Texts with a score.
    pub scored: u64,
    /// Of those, texts kept out as off topic.
    pub off_topic: u64,
    /// Lowest score of a text in the collection.
    pub min_kept: Option<f64>,
    /// Median score of the texts in the collection.
    pub median_kept: Option<f64>,
}

fn relevance_stats(docs: &[crate::store::queries::DocMeta]) -> Option<RelevanceStats> {
    let scored: Vec<&crate::store::queries::DocMeta> =
        docs.iter().filter(|d| d.relevance.is_some()).collect();
    if scored.is_empty() {
        return None;
    }
    let mut kept: Vec<f64> = scored
        .iter()
        .filter(|d| d.status == Status::Kept)
        .filter_map(|d| d.relevance)
        .collect();
    kept.sort_by(f64::total_cmp);
    Some(RelevanceStats {
        scored: scored.len() as u64,
        off_topic: scored
            .iter()
            .filter(|d| d.status == Status::OffTopic)
            .count() as u64,
        min_kept: kept.first().copied(),
        median_kept: kept.get(kept.len() / 2).copied(),
    })
}

/// Computes the statistics of a collection's store.
pub fn stats(store: &Store) -> Result<Stats> {
    let docs = store.document_metas()?;
    let (sources, total) = collection::counts(store)?;
    let mut skipped: BTreeMap<String, u64> = BTreeMap::new();
    for k in store.skipped()? {
        *skipped.entry(k.source).or_default() += 1;
    }
    Ok(Stats {
        topic: collection::stored_topic(store)?.name,
        detector: store.meta("detector")?.unwrap_or_default(),
        sources,
        total,
        review: review::progress(store)?,
        skipped,
        relevance: relevance_stats(&docs),
        formats: docs.iter().fold(BTreeMap::new(), |mut m, d| {
            *m.entry(d.format.clone().unwrap_or_else(|| "unrecorded".into()))
                .or_default() += 1;
            m
        }),
        dates: date_span(&docs),
    })
}

/// The statistics as text: the report's table, then the review line.
pub fn render(store: &Store, s: &Stats) -> Result<String> {
    let topic = collection::stored_topic(store)?;
    let mut out = collection::report::report_markdown(&topic, &s.detector, &s.sources, &s.total);
    let r = &s.review;
    let _ = writeln!(
        out,
        "\nReview: {} contained pairs; {} pending in {} clusters ({} words at stake), {} decided ({} keep-both, {} drop-contained, {} drop-container), {} moot (a text already out).",
        r.pairs, r.pending, r.clusters_pending, r.words_pending, r.decided, r.keep_both, r.drop_contained, r.drop_container, r.moot
    );
    if let Some(r) = &s.relevance {
        let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into());
        let _ = writeln!(
            out,
            "Relevance: {} texts scored, {} off topic; in the collection lowest {}, median {}.",
            r.scored,
            r.off_topic,
            f(r.min_kept),
            f(r.median_kept)
        );
    }
    if !s.formats.is_empty() {
        let list: Vec<String> = s.formats.iter().map(|(f, n)| format!("{f} {n}")).collect();
        let _ = writeln!(out, "Formats: {}.", list.join(", "));
    }
    if let Some(d) = &s.dates {
        let _ = writeln!(
            out,
            "Dates: {} documents dated, {} to {}.",
            d.dated, d.first, d.last
        );
    }
    out.push_str(&collection::report::skipped_markdown(&store.skipped()?));
    Ok(out)
}
