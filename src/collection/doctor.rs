//! `collect doctor`: whether a collection's store is sound and, when it is not, what the
//! collection's other files still hold to rebuild it from.
//!
//! `manifest.jsonl` has one row per document ever stored (id, source, locator, url, title,
//! lang, words, status, duplicate_of, sha256) and `docs/` the text of each *kept* one, so a
//! rebuild gets every document's standing back but the texts of kept documents only; a
//! damaged store often still gives the rest row by row. Nothing here writes.

use super::{has_collection_files, store_path, DOCS_DIR, MANIFEST_FILE};
use crate::store::health::{examine, Health, Salvage};
use crate::store::kept::{read_kept_file, sha256_hex, KeptFile};
use crate::store::Status;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of `manifest.jsonl`, as `sync_collection` writes it.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct ManifestEntry {
    /// Document id.
    pub id: String,
    /// Report name of the source.
    pub source: String,
    /// Where it came from.
    pub locator: String,
    /// Web address.
    pub url: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// Language.
    pub lang: Option<String>,
    /// Words in the cleaned text.
    pub words: u64,
    /// Status name.
    pub status: String,
    /// The kept document it duplicates.
    pub duplicate_of: Option<String>,
    /// SHA-256 of the cleaned text.
    pub sha256: String,
    /// Date the source gave (absent from manifests of sources without dates).
    #[serde(default)]
    pub date: Option<String>,
    /// Relevance to the topic (absent in manifests written before the stage existed).
    #[serde(default)]
    pub relevance: Option<f64>,
    /// The format it was read from (absent in manifests written before it was recorded).
    #[serde(default)]
    pub format: Option<String>,
    /// Why it was kept out, for `filtered` and `short` (absent in older manifests).
    #[serde(default)]
    pub reason: Option<String>,
}

impl ManifestEntry {
    /// The status, if the name is one this collect knows.
    pub fn status(&self) -> Option<Status> {
        Status::parse(&self.status)
    }
}

/// `manifest.jsonl` read line by line; lines that do not parse are listed, not fatal.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    /// The rows that parse.
    pub entries: Vec<ManifestEntry>,
    /// `manifest.jsonl:LINE: what is wrong`, for every line that does not.
    pub bad_lines: Vec<String>,
}

/// Reads the manifest of the collection in `dir`; `None` when there is none.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    let text = String::from_utf8_lossy(&text);
    let mut m = Manifest::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<ManifestEntry>(line) {
            Ok(e) if e.status().is_some() => m.entries.push(e),
            Ok(e) => m.bad_lines.push(format!(
                "{}:{}: unknown status `{}`",
                path.display(),
                n + 1,
                e.status
            )),
            Err(e) => m
                .bad_lines
                .push(format!("{}:{}: {e}", path.display(), n + 1)),
        }
    }
    Ok(Some(m))
}

/// The text `docs/<id>.txt` holds for a kept document, if it is there and matches `sha256`.
pub fn kept_text(dir: &Path, id: &str, sha256: &str) -> Option<String> {
    match read_kept_file(&dir.join(DOCS_DIR), id, sha256) {
        Ok(KeptFile::Text(t)) => Some(t),
        _ => None,
    }
}

/// Where a document's text can come from in a rebuild.
#[derive(Debug, Clone, PartialEq)]
pub enum TextSource {
    /// `docs/<id>.txt`, checked against the manifest's SHA-256.
    Docs(String),
    /// The damaged store's row, checked the same way.
    Store(String),
    /// Nowhere.
    Lost,
}

/// The text of a manifest entry: `docs/` for kept documents, else what the damaged store
/// still gives, each only when it matches the manifest's SHA-256.
pub fn find_text(dir: &Path, salvage: &Salvage, e: &ManifestEntry) -> TextSource {
    if e.status() == Some(Status::Kept) {
        if let Some(t) = kept_text(dir, &e.id, &e.sha256) {
            return TextSource::Docs(t);
        }
    }
    match salvage.document(&e.id) {
        Some(d) if sha256_hex(&d.text) == e.sha256 => TextSource::Store(d.text),
        _ => TextSource::Lost,
    }
}

/// What `collect doctor DIR` reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Diagnosis {
    /// The collection directory.
    pub dir: PathBuf,
    /// The store's examination.
    pub store: Health,
    /// Whether `manifest.jsonl` is there.
    pub manifest_present: bool,
    /// Its rows, by status.
    pub manifest_rows: BTreeMap<String, u64>,
    /// Its lines that do not parse.
    pub manifest_bad_lines: Vec<String>,
    /// `.txt` files in `docs/`.
    pub docs_files: u64,
    /// Kept documents whose text `docs/` holds intact.
    pub kept_texts_in_docs: u64,
    /// Kept documents missing from `docs/` whose text the damaged store still gives.
    pub kept_texts_in_store: u64,
    /// Kept documents whose text is neither in `docs/` nor readable in the store.
    pub kept_texts_lost: Vec<String>,
    /// Documents not kept whose text the damaged store still gives (docs/ never holds them).
    pub other_texts_in_store: u64,
    /// Documents not kept whose text is gone (their standing is still in the manifest).
    pub other_texts_lost: u64,
    /// Review decisions the damaged store still gives.
    pub decisions_in_store: u64,
}

impl Diagnosis {
    /// Whether the store is sound.
    pub fn healthy(&self) -> bool {
        self.store.healthy()
    }
}

/// Examines the collection in `dir` without writing anything.
pub fn diagnose(dir: &Path) -> Result<Diagnosis> {
    let path = store_path(dir);
    if !path.is_file() && !has_collection_files(dir) {
        return Err(crate::error::bad_input(format!(
            "no collection at {}: neither a store nor {MANIFEST_FILE} nor {DOCS_DIR}/",
            dir.display()
        )));
    }
    let store = examine(&path);
    let manifest = read_manifest(dir)?;
    let docs_files = std::fs::read_dir(dir.join(DOCS_DIR))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
                .count() as u64
        })
        .unwrap_or(0);
    let mut d = Diagnosis {
        dir: dir.to_path_buf(),
        manifest_present: manifest.is_some(),
        manifest_rows: BTreeMap::new(),
        manifest_bad_lines: Vec::new(),
        docs_files,
        kept_texts_in_docs: 0,
        kept_texts_in_store: 0,
        kept_texts_lost: Vec::new(),
        other_texts_in_store: 0,
        other_texts_lost: 0,
        decisions_in_store: 0,
        store,
    };
    let Some(m) = manifest else { return Ok(d) };
    let salvage = Salvage::open(&path);
    d.decisions_in_store = salvage.decisions().len() as u64;
    d.manifest_bad_lines = m.bad_lines;
    for e in &m.entries {
        *d.manifest_rows.entry(e.status.clone()).or_default() += 1;
        let kept = e.status() == Some(Status::Kept);
        match (kept, find_text(dir, &salvage, e)) {
            (true, TextSource::Docs(_)) => d.kept_texts_in_docs += 1,
            (true, TextSource::Store(_)) => d.kept_texts_in_store += 1,
            (true, TextSource::Lost) => d.kept_texts_lost.push(e.id.clone()),
            (false, TextSource::Lost) => d.other_texts_lost += 1,
            (false, _) => d.other_texts_in_store += 1,
        }
    }
    Ok(d)
}
