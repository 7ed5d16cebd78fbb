//! Writing a collection directory: kept texts, the manifest and the Table-1 report.

pub mod stats;

use crate::sign::{DedupSettings, Verdict};
use crate::store::queries::DocMeta;
use crate::store::{Status, Store};
use crate::topic::Topic;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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
    /// Texts a curator dropped in review.
    pub dropped: u64,
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

/// The store's file name inside a collection directory.
pub const STORE_FILE: &str = "collection.sqlite";

/// The store of the collection in `dir`.
pub fn store_path(dir: &Path) -> PathBuf {
    dir.join(STORE_FILE)
}

/// Removes what `write_collection` and the store put in `dir` (for `build --force`).
pub fn remove_collection_files(dir: &Path) -> Result<()> {
    for name in [
        STORE_FILE,
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
pub fn counts(store: &Store, docs: &[DocMeta]) -> Result<(BTreeMap<String, Counts>, Counts)> {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let mut source_of: BTreeMap<&str, &str> = BTreeMap::new();
    for d in docs {
        source_of.insert(&d.id, &d.source);
        let c = per.entry(d.source.clone()).or_default();
        c.texts_before += 1;
        c.bytes_before += d.raw_bytes;
        match d.status {
            Status::Short => c.short += 1,
            Status::Filtered => c.filtered += 1,
            st => {
                c.texts_after += 1;
                c.bytes_after += d.text_bytes;
                match st {
                    Status::Duplicate => c.duplicates += 1,
                    Status::Dropped => c.dropped += 1,
                    Status::Kept => {
                        c.kept += 1;
                        c.bytes_kept += d.text_bytes;
                    }
                    Status::Pending | Status::Short | Status::Filtered => {}
                }
            }
        }
    }
    for p in store.pairs()? {
        if p.verdict != Verdict::Contained {
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
        "| source | texts before | MB before | texts after cleaning | MB after cleaning | short | filtered | duplicates | contained pairs | dropped in review | in collection | MB in collection |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut row = |name: &str, c: &Counts| {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.texts_before,
            mb(c.bytes_before),
            c.texts_after,
            mb(c.bytes_after),
            c.short,
            c.filtered,
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
        "\n*texts after cleaning* are those that passed cleaning and the filters; *duplicates* are \
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

/// Writes `docs/<id>.txt` for kept documents, `manifest.jsonl` and `report.md` from scratch.
pub fn write_collection(store: &Store, topic: &Topic, out: &Path) -> Result<Counts> {
    remember_topic(store, topic)?;
    let docs_dir = out.join("docs");
    if docs_dir.exists() {
        std::fs::remove_dir_all(&docs_dir)
            .with_context(|| format!("{}: cannot clear", docs_dir.display()))?;
    }
    sync_collection(store, out)
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

/// Stores the topic's report header in the store's meta table.
pub fn remember_topic(store: &Store, topic: &Topic) -> Result<()> {
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

/// Above this many missing texts one scan of the store beats a lookup per text.
const BULK_TEXTS: usize = 512;

/// Brings the collection directory in line with the store: writes the kept texts missing from
/// `docs/`, removes texts no longer kept, rewrites `manifest.jsonl` and `report.md`.
///
/// Work on `docs/` is proportional to what changed, so an update or a review decision does not
/// rewrite a large collection. Texts are written through temporary names: a kill leaves no
/// half-written text under a final name, and the next sync removes leftovers.
pub fn sync_collection(store: &Store, out: &Path) -> Result<Counts> {
    let docs = store.document_metas()?;
    let docs_dir = out.join("docs");
    std::fs::create_dir_all(&docs_dir)
        .with_context(|| format!("{}: cannot create", docs_dir.display()))?;
    let mut present: std::collections::HashSet<String> = std::collections::HashSet::new();
    for e in std::fs::read_dir(&docs_dir)
        .with_context(|| format!("{}: cannot list", docs_dir.display()))?
    {
        let e = e.with_context(|| format!("{}: cannot list", docs_dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        match name.strip_suffix(".txt") {
            Some(id) => {
                present.insert(id.to_string());
            }
            None => std::fs::remove_file(e.path())
                .with_context(|| format!("{}: cannot remove", e.path().display()))?,
        }
    }
    let kept: std::collections::HashSet<&str> = docs
        .iter()
        .filter(|d| d.status == Status::Kept)
        .map(|d| d.id.as_str())
        .collect();
    for id in &present {
        if !kept.contains(id.as_str()) {
            let p = docs_dir.join(format!("{id}.txt"));
            std::fs::remove_file(&p).with_context(|| format!("{}: cannot remove", p.display()))?;
        }
    }
    let missing: Vec<&str> = kept
        .iter()
        .copied()
        .filter(|id| !present.contains(*id))
        .collect();
    let write_text = |id: &str, text: &str| -> Result<()> {
        let mut t = String::with_capacity(text.len() + 1);
        t.push_str(text);
        t.push('\n');
        write_atomic(&docs_dir.join(format!("{id}.txt")), t.as_bytes())
    };
    if missing.len() > BULK_TEXTS {
        let want: std::collections::HashSet<&str> = missing.iter().copied().collect();
        for (id, text) in store.texts_with_status(Status::Kept)? {
            if want.contains(id.as_str()) {
                write_text(&id, &text)?;
            }
        }
    } else {
        for id in &missing {
            if let Some(text) = store.document_text(id)? {
                write_text(id, &text)?;
            }
        }
    }
    crate::testhooks::pause("export-docs");
    let mut manifest = String::new();
    for d in &docs {
        let row = ManifestRow {
            id: &d.id,
            source: &d.source,
            locator: &d.locator,
            url: d.url.as_deref(),
            title: d.title.as_deref(),
            lang: d.lang.as_deref(),
            words: d.words,
            status: d.status.as_str(),
            duplicate_of: d.duplicate_of.as_deref(),
            sha256: &d.sha256,
        };
        manifest.push_str(&serde_json::to_string(&row)?);
        manifest.push('\n');
    }
    write_atomic(&out.join("manifest.jsonl"), manifest.as_bytes())?;
    let (per, total) = counts(store, &docs)?;
    let key = store.meta("detector")?.unwrap_or_default();
    let topic = stored_topic(store)?;
    let mut report = report_markdown(&topic, &key, &per, &total);
    report.push_str(&acquisition_markdown(&store.url_counts()?));
    write_atomic(&out.join("report.md"), report.as_bytes())?;
    Ok(total)
}

/// Output formats of `collect export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One `<id>.txt` per text in a directory.
    Txt,
    /// One JSON object per line: id, text, title, url, source, lang, words.
    Jsonl,
    /// RFC 4180 CSV with a header, same columns as JSONL.
    Csv,
}

impl Format {
    /// Parses a format name.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "txt" => Some(Format::Txt),
            "jsonl" => Some(Format::Jsonl),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// One exported text: the columns every format carries.
#[derive(Serialize)]
struct ExportRow<'a> {
    id: &'a str,
    text: &'a str,
    title: Option<&'a str>,
    url: Option<&'a str>,
    source: &'a str,
    lang: Option<&'a str>,
    words: u64,
}

fn csv_field(out: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

/// Writes the texts in the collection (status `kept`, so every decision is honoured) as
/// JSONL or CSV to `w`, in id order; returns how many.
pub fn export_stream(store: &Store, format: Format, w: &mut dyn std::io::Write) -> Result<usize> {
    let metas: BTreeMap<String, DocMeta> = store
        .document_metas()?
        .into_iter()
        .filter(|d| d.status == Status::Kept)
        .map(|d| (d.id.clone(), d))
        .collect();
    if format == Format::Csv {
        w.write_all(b"id,text,title,url,source,lang,words\r\n")?;
    }
    let mut n = 0;
    for (id, text) in store.texts_with_status(Status::Kept)? {
        let Some(d) = metas.get(&id) else { continue };
        let row = ExportRow {
            id: &d.id,
            text: &text,
            title: d.title.as_deref(),
            url: d.url.as_deref(),
            source: &d.source,
            lang: d.lang.as_deref(),
            words: d.words,
        };
        let mut line = String::new();
        match format {
            Format::Jsonl => line = serde_json::to_string(&row)?,
            Format::Csv => {
                for (i, f) in [
                    row.id,
                    row.text,
                    row.title.unwrap_or(""),
                    row.url.unwrap_or(""),
                    row.source,
                    row.lang.unwrap_or(""),
                    &row.words.to_string(),
                ]
                .iter()
                .enumerate()
                {
                    if i > 0 {
                        line.push(',');
                    }
                    csv_field(&mut line, f);
                }
                line.push('\r');
            }
            Format::Txt => anyhow::bail!("txt export writes a directory, not a stream"),
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        n += 1;
    }
    w.flush()?;
    Ok(n)
}

/// Writes each text in the collection as `<dir>/<id>.txt`; returns how many.
pub fn export_txt(store: &Store, dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut n = 0;
    for (id, text) in store.texts_with_status(Status::Kept)? {
        let mut t = text;
        t.push('\n');
        write_atomic(&dir.join(format!("{id}.txt")), t.as_bytes())?;
        n += 1;
    }
    Ok(n)
}
