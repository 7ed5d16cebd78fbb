//! Writing a collection directory: kept texts, the manifest and the Table-1 report.

use crate::store::{status, Document, Store};
use crate::topic::Topic;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

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
    /// Texts dropped as near-duplicates.
    pub duplicates: u64,
    /// Pairs flagged as contained (counted for the contained text's source).
    pub contained_pairs: u64,
    /// Texts in the collection.
    pub kept: u64,
    /// Bytes of the texts in the collection.
    pub bytes_kept: u64,
}

#[derive(Serialize)]
struct ManifestRow<'a> {
    id: &'a str,
    source: &'a str,
    locator: &'a str,
    url: Option<&'a str>,
    title: Option<&'a str>,
    lang: Option<&'a str>,
    words: u64,
    status: &'a str,
    duplicate_of: Option<&'a str>,
    sha256: &'a str,
}

/// Removes what `write_collection` and the store put in `dir` (for `build --force`).
pub fn remove_collection_files(dir: &Path) -> Result<()> {
    for name in [
        "collection.sqlite",
        "collection.sqlite-wal",
        "collection.sqlite-shm",
        "manifest.jsonl",
        "report.md",
    ] {
        let p = dir.join(name);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("{}: cannot remove", p.display()))?;
        }
    }
    let docs = dir.join("docs");
    if docs.exists() {
        std::fs::remove_dir_all(&docs)
            .with_context(|| format!("{}: cannot remove", docs.display()))?;
    }
    Ok(())
}

/// Writes a file through a temporary name, so readers never see half of it.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}

/// Per-source and total figures from the store.
pub fn counts(store: &Store, docs: &[Document]) -> Result<(BTreeMap<String, Counts>, Counts)> {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let mut source_of: BTreeMap<&str, &str> = BTreeMap::new();
    for d in docs {
        source_of.insert(&d.id, &d.source);
        let c = per.entry(d.source.clone()).or_default();
        c.texts_before += 1;
        c.bytes_before += d.raw_bytes;
        match d.status.as_str() {
            status::SHORT => c.short += 1,
            status::FILTERED => c.filtered += 1,
            st => {
                c.texts_after += 1;
                c.bytes_after += d.text.len() as u64;
                if st == status::DUPLICATE {
                    c.duplicates += 1;
                } else if st == status::KEPT {
                    c.kept += 1;
                    c.bytes_kept += d.text.len() as u64;
                }
            }
        }
    }
    for p in store.pairs()? {
        if p.verdict != "contained" {
            continue;
        }
        let contained = if p.cont_a_in_b >= p.cont_b_in_a {
            &p.a
        } else {
            &p.b
        };
        if let Some(src) = source_of.get(contained.as_str()) {
            per.entry(src.to_string()).or_default().contained_pairs += 1;
        }
    }
    let mut total = Counts::default();
    for c in per.values() {
        total.texts_before += c.texts_before;
        total.bytes_before += c.bytes_before;
        total.texts_after += c.texts_after;
        total.bytes_after += c.bytes_after;
        total.short += c.short;
        total.filtered += c.filtered;
        total.duplicates += c.duplicates;
        total.contained_pairs += c.contained_pairs;
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
    topic: &Topic,
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
        topic.dedup.resemblance, topic.dedup.containment, topic.filter.min_words
    );
    let _ = writeln!(
        s,
        "| source | texts before | MB before | texts after cleaning | MB after cleaning | short | filtered | duplicates | contained pairs | in collection | MB in collection |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut row = |name: &str, c: &Counts| {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.texts_before,
            mb(c.bytes_before),
            c.texts_after,
            mb(c.bytes_after),
            c.short,
            c.filtered,
            c.duplicates,
            c.contained_pairs,
            c.kept,
            mb(c.bytes_kept)
        );
    };
    for (name, c) in per {
        row(name, c);
    }
    row("**total**", total);
    s.push_str(
        "\n*texts after cleaning* are those that passed cleaning and the filters; *duplicates* are \
         dropped near-copies (each names the kept copy in manifest.jsonl); *contained pairs* wait \
         for a curator and drop nothing.\n",
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

/// Writes `docs/<id>.txt` for kept documents, `manifest.jsonl` and `report.md`.
pub fn write_collection(store: &Store, topic: &Topic, out: &Path) -> Result<Counts> {
    let docs = store.documents(None)?;
    let docs_dir = out.join("docs");
    if docs_dir.exists() {
        std::fs::remove_dir_all(&docs_dir)
            .with_context(|| format!("{}: cannot clear", docs_dir.display()))?;
    }
    std::fs::create_dir_all(&docs_dir)
        .with_context(|| format!("{}: cannot create", docs_dir.display()))?;
    let mut manifest = String::new();
    for d in &docs {
        if d.status == status::KEPT {
            let mut text = d.text.clone();
            text.push('\n');
            std::fs::write(docs_dir.join(format!("{}.txt", d.id)), text)
                .with_context(|| format!("{}: cannot write", docs_dir.display()))?;
        }
        let row = ManifestRow {
            id: &d.id,
            source: &d.source,
            locator: &d.locator,
            url: d.url.as_deref(),
            title: d.title.as_deref(),
            lang: d.lang.as_deref(),
            words: d.words,
            status: &d.status,
            duplicate_of: d.duplicate_of.as_deref(),
            sha256: &d.sha256,
        };
        manifest.push_str(&serde_json::to_string(&row)?);
        manifest.push('\n');
    }
    write_atomic(&out.join("manifest.jsonl"), manifest.as_bytes())?;
    let (per, total) = counts(store, &docs)?;
    let key = store.meta("detector")?.unwrap_or_default();
    let mut report = report_markdown(topic, &key, &per, &total);
    report.push_str(&acquisition_markdown(&store.url_counts()?));
    write_atomic(&out.join("report.md"), report.as_bytes())?;
    Ok(total)
}
