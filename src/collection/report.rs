//! The figures of a collection (the paper's Table 1, per source and in total) and the report
//! that shows them, with the topic header the store keeps so that commands run on a collection
//! directory alone can rewrite it.

use crate::sign::DedupSettings;
use crate::store::skipped::SkippedInput;
use crate::store::{Status, Store};
use crate::topic::Topic;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The paper's Table 1 figures for one source or the whole collection.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Counts {
    /// Texts received from sources.
    pub texts_before: u64,
    /// Bytes received, before cleaning.
    pub bytes_before: u64,
    /// Texts that passed cleaning and the filters.
    pub texts_after: u64,
    /// Bytes of those texts after cleaning.
    pub bytes_after: u64,
    /// Texts too short after cleaning.
    pub short: u64,
    /// Texts rejected by another filter.
    pub filtered: u64,
    /// Texts scored below the topic's relevance threshold.
    pub off_topic: u64,
    /// Texts dropped as near-duplicates.
    pub duplicates: u64,
    /// Pairs flagged as contained (counted for the contained text's source).
    pub contained_pairs: u64,
    /// Texts a curator dropped in review.
    pub dropped: u64,
    /// Texts in the collection.
    pub kept: u64,
    /// Bytes of the texts in the collection.
    pub bytes_kept: u64,
}

/// Per-source and total figures from the store (counted there, without reading every
/// document out of it).
pub fn counts(store: &Store) -> Result<(BTreeMap<String, Counts>, Counts)> {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    for f in store.status_figures()? {
        let c = per.entry(f.source).or_default();
        c.texts_before += f.documents;
        c.bytes_before += f.raw_bytes;
        match f.status {
            Status::Short => c.short += f.documents,
            Status::Filtered => c.filtered += f.documents,
            Status::OffTopic => c.off_topic += f.documents,
            st => {
                c.texts_after += f.documents;
                c.bytes_after += f.text_bytes;
                match st {
                    Status::Duplicate => c.duplicates += f.documents,
                    Status::Dropped => c.dropped += f.documents,
                    Status::Kept => {
                        c.kept += f.documents;
                        c.bytes_kept += f.text_bytes;
                    }
                    Status::Pending | Status::Short | Status::Filtered | Status::OffTopic => {}
                }
            }
        }
    }
    let sources: Vec<&str> = per.keys().map(String::as_str).collect();
    let contained = store.contained_pairs_by_source(&sources)?;
    for (source, pairs) in contained {
        per.entry(source).or_default().contained_pairs += pairs;
    }
    let mut total = Counts::default();
    for c in per.values() {
        total.texts_before += c.texts_before;
        total.bytes_before += c.bytes_before;
        total.texts_after += c.texts_after;
        total.bytes_after += c.bytes_after;
        total.short += c.short;
        total.filtered += c.filtered;
        total.off_topic += c.off_topic;
        total.duplicates += c.duplicates;
        total.contained_pairs += c.contained_pairs;
        total.dropped += c.dropped;
        total.kept += c.kept;
        total.bytes_kept += c.bytes_kept;
    }
    Ok((per, total))
}

fn mb(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1_000_000.0)
}

/// The report in the shape of the paper's Table 1, one row per source plus the total.
pub fn report_markdown(
    topic: &ReportTopic,
    detector_key: &str,
    per: &BTreeMap<String, Counts>,
    total: &Counts,
) -> String {
    let mut s = String::new();
    let title = if topic.title.is_empty() {
        &topic.name
    } else {
        &topic.title
    };
    let _ = writeln!(s, "# Collection `{}`: {}\n", topic.name, title);
    let _ = writeln!(
        s,
        "Detector `{detector_key}`, resemblance ≥ {} → duplicate, containment ≥ {} → review; min_words {}.\n",
        topic.resemblance, topic.containment, topic.min_words
    );
    let _ = writeln!(
        s,
        "| source | texts before | MB before | texts after cleaning | MB after cleaning | short | filtered | off topic | duplicates | contained pairs | dropped in review | in collection | MB in collection |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut row = |name: &str, c: &Counts| {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.texts_before,
            mb(c.bytes_before),
            c.texts_after,
            mb(c.bytes_after),
            c.short,
            c.filtered,
            c.off_topic,
            c.duplicates,
            c.contained_pairs,
            c.dropped,
            c.kept,
            mb(c.bytes_kept)
        );
    };
    for (name, c) in per {
        row(name, c);
    }
    row("**total**", total);
    s.push_str(
        "\n*texts after cleaning* are those that passed cleaning and the filters; *off topic* are \
         texts scored below the topic's relevance threshold (each with its score in \
         manifest.jsonl; `collect explain ID` shows the terms); *duplicates* are \
         dropped near-copies (each names the kept copy in manifest.jsonl); *contained pairs* wait \
         for a curator (`collect review`) and drop nothing until one decides; *dropped in review* \
         are the texts such decisions removed.\n",
    );
    s
}

/// The acquisition table of the report: per web source, what was asked and fetched.
pub fn acquisition_markdown(counts: &BTreeMap<String, crate::store::UrlCounts>) -> String {
    let mut s = String::new();
    if counts.is_empty() {
        return s;
    }
    s.push_str("\n## Acquisition\n\n");
    s.push_str("| source | queries | results | fetched | failed | robots-blocked | skipped |\n");
    s.push_str("|---|---:|---:|---:|---|---:|---|\n");
    let list = |m: &BTreeMap<String, u64>, skip: &str| -> String {
        let parts: Vec<String> = m
            .iter()
            .filter(|(k, _)| k.as_str() != skip)
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(", ")
        }
    };
    for (name, c) in counts {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            c.queries,
            c.results,
            c.fetched,
            list(&c.failed, ""),
            c.skipped.get("robots").copied().unwrap_or(0),
            list(&c.skipped, "robots")
        );
    }
    s.push_str(
        "\n*queries* are answered search, API and sitemap requests; *results* every URL found; \
         *failed* counts final failures (after retries) by cause.\n",
    );
    s
}

/// The "Hosts" section of the report: what the run fetched, failed and skipped on each host,
/// the hosts with failures first. Empty for a collection without web sources.
pub fn hosts_markdown(hosts: &BTreeMap<String, crate::store::HostCounts>) -> String {
    let mut s = String::new();
    if hosts.is_empty() {
        return s;
    }
    s.push_str("\n## Hosts\n\n| host | fetched | failed | skipped |\n|---|---:|---:|---:|\n");
    let mut rows: Vec<_> = hosts.iter().collect();
    rows.sort_by(|a, b| b.1.failed.cmp(&a.1.failed).then_with(|| a.0.cmp(b.0)));
    for (host, c) in rows {
        let _ = writeln!(
            s,
            "| {host} | {} | {} | {} |",
            c.fetched, c.failed, c.skipped
        );
    }
    s
}

/// One line on the hosts of an acquisition: how many, and the busiest and the failing ones
/// with their fetched/failed counts.
pub fn hosts_line(hosts: &BTreeMap<String, crate::store::HostCounts>) -> String {
    const NAMED: usize = 3;
    let named = |mut v: Vec<(&String, &crate::store::HostCounts)>| -> String {
        v.truncate(NAMED);
        v.iter()
            .map(|(h, c)| format!("{h} {}/{}", c.fetched, c.failed))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut busiest: Vec<_> = hosts.iter().collect();
    busiest.sort_by_key(|(_, c)| std::cmp::Reverse(c.fetched + c.failed));
    let mut failing: Vec<_> = hosts.iter().filter(|(_, c)| c.failed > 0).collect();
    failing.sort_by_key(|(_, c)| std::cmp::Reverse(c.failed));
    let mut line = format!(
        "{} hosts, fetched/failed per host: busiest {}",
        hosts.len(),
        named(busiest)
    );
    if !failing.is_empty() {
        let _ = write!(line, "; most failures {}", named(failing));
    }
    line
}

/// Skipped inputs listed by name in the report; `collect stats DIR --skipped` lists them all.
const SKIPS_LISTED: usize = 10;

/// The "Skipped inputs" section of the report: per source, how many inputs were not read and
/// why, then the first few with their place. Empty when nothing was skipped.
pub fn skipped_markdown(skipped: &[SkippedInput]) -> String {
    let mut s = String::new();
    if skipped.is_empty() {
        return s;
    }
    let mut per: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for k in skipped {
        *per.entry(&k.source)
            .or_default()
            .entry(k.reason.as_str())
            .or_default() += 1;
    }
    let _ = writeln!(s, "\n## Skipped inputs\n");
    let _ = writeln!(
        s,
        "{} input{} could not be read and {} left out; the collection holds everything else. \
         `collect stats DIR --skipped` lists them all.\n",
        skipped.len(),
        if skipped.len() == 1 { "" } else { "s" },
        if skipped.len() == 1 { "was" } else { "were" },
    );
    s.push_str("| source | skipped | by reason |\n|---|---:|---|\n");
    for (source, reasons) in &per {
        let n: u64 = reasons.values().sum();
        let by: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        let _ = writeln!(s, "| {} | {n} | {} |", cell(source), by.join(", "));
    }
    let _ = writeln!(
        s,
        "\n| source | where | reason | detail |\n|---|---|---|---|"
    );
    for k in skipped.iter().take(SKIPS_LISTED) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            cell(&k.source),
            cell(&k.locator),
            k.reason,
            cell(&k.detail)
        );
    }
    if skipped.len() > SKIPS_LISTED {
        let _ = writeln!(s, "\n…and {} more.", skipped.len() - SKIPS_LISTED);
    }
    s
}

/// Text made safe for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// What the report and the review page need of the topic, kept in the store so that commands
/// run on a collection directory alone (review, serve, export) can rewrite it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct ReportTopic {
    /// Topic name.
    pub name: String,
    /// Human title.
    pub title: String,
    /// Resemblance threshold.
    pub resemblance: f64,
    /// Containment threshold.
    pub containment: f64,
    /// Minimum words.
    pub min_words: usize,
    /// Stop-word languages.
    pub languages: Vec<String>,
    /// Words per shingle.
    pub shingle: usize,
}

impl ReportTopic {
    /// The parts of `topic` the report needs.
    pub fn of(topic: &Topic) -> ReportTopic {
        ReportTopic {
            name: topic.name.clone(),
            title: topic.title.clone(),
            resemblance: topic.dedup.resemblance,
            containment: topic.dedup.containment,
            min_words: topic.filter.min_words,
            languages: topic.languages.clone(),
            shingle: crate::sign::build_detector(&topic.dedup)
                .map(|d| d.shingle())
                .unwrap_or(4),
        }
    }
}

const REPORT_TOPIC_KEY: &str = "report_topic";

/// The meta key of the topic file's absolute path.
pub(crate) const TOPIC_FILE_KEY: &str = "topic_file";

/// Stores the topic's report header in the store's meta table.
/// With the header goes the topic file's absolute path, when the topic was read from one.
pub fn remember_topic(store: &Store, topic: &Topic) -> Result<()> {
    if let Some(file) = topic.file.as_deref().and_then(|f| f.to_str()) {
        store.set_meta(TOPIC_FILE_KEY, file)?;
    }
    store.set_meta(
        REPORT_TOPIC_KEY,
        &serde_json::to_string(&ReportTopic::of(topic))?,
    )
}

/// The report header stored by the last build or update.
pub fn stored_topic(store: &Store) -> Result<ReportTopic> {
    if let Some(json) = store.meta(REPORT_TOPIC_KEY)? {
        if let Ok(t) = serde_json::from_str(&json) {
            return Ok(t);
        }
    }
    // A store written before the header was kept: defaults stand in for what is unknown.
    Ok(ReportTopic {
        name: store.meta("topic")?.unwrap_or_default(),
        title: String::new(),
        resemblance: DedupSettings::default().resemblance,
        containment: DedupSettings::default().containment,
        min_words: 0,
        languages: vec!["ru".into(), "en".into()],
        shingle: 4,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SkipReason;

    fn skip(source: &str, locator: &str, reason: SkipReason) -> SkippedInput {
        SkippedInput {
            source: source.into(),
            locator: locator.into(),
            reason,
            detail: "a | b".into(),
        }
    }

    #[test]
    fn skipped_section_counts_per_source_and_lists_the_first_few() {
        assert_eq!(skipped_markdown(&[]), "");
        let mut all = vec![
            skip("local", "in.jsonl:3", SkipReason::BadJson),
            skip("local", "in.jsonl:4", SkipReason::BadJson),
            skip("web", "d/pipe.txt", SkipReason::NotRegularFile),
        ];
        for i in 0..10 {
            all.push(skip("local", &format!("x{i}"), SkipReason::Loop));
        }
        let md = skipped_markdown(&all);
        assert!(md.contains("## Skipped inputs"), "{md}");
        assert!(md.contains("13 inputs could not be read"), "{md}");
        assert!(
            md.contains("| local | 12 | bad-json: 2, loop: 10 |"),
            "{md}"
        );
        assert!(md.contains("| web | 1 | not-regular-file: 1 |"), "{md}");
        assert!(
            md.contains("| local | in.jsonl:3 | bad-json | a \\| b |"),
            "{md}"
        );
        assert!(md.contains("…and 3 more."), "{md}");
    }
}
