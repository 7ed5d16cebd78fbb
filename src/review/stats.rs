//! `collect stats`: the paper's Table 1 figures of a collection and the review progress.

use crate::collection::{self, Counts};
use crate::review;
use crate::store::Store;
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
}

/// Computes the statistics of a collection's store.
pub fn stats(store: &Store) -> Result<Stats> {
    let docs = store.document_metas()?;
    let (sources, total) = collection::counts(store, &docs)?;
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
    })
}

/// The statistics as text: the report's table, then the review line.
pub fn render(store: &Store, s: &Stats) -> Result<String> {
    let topic = collection::stored_topic(store)?;
    let mut out = collection::report::report_markdown(&topic, &s.detector, &s.sources, &s.total);
    let r = &s.review;
    let _ = writeln!(
        out,
        "\nReview: {} contained pairs; {} pending, {} decided ({} keep-both, {} drop-contained, {} drop-container), {} moot (a text already out).",
        r.pairs, r.pending, r.decided, r.keep_both, r.drop_contained, r.drop_container, r.moot
    );
    out.push_str(&collection::report::skipped_markdown(&store.skipped()?));
    Ok(out)
}
