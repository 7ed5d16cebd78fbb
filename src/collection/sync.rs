//! Keeps the collection directory in line with the store: the kept texts in `docs/`, the
//! manifest and the report.

use super::report::{
    acquisition_markdown, counts, hosts_markdown, remember_topic, report_markdown,
    skipped_markdown, stored_topic, Counts,
};
use super::write_atomic;
use crate::store::kept::{file_bytes, kept_file, kept_text, read_kept_file, KeptFile};
use crate::store::{Status, Store};
use crate::topic::Topic;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

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
    relevance: Option<f64>,
    // Absent rather than null for sources without dates, so their manifests stay as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<&'a str>,
    format: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// Writes `docs/<id>.txt` for kept documents, `manifest.jsonl` and `report.md` at the end of a
/// build.
pub fn write_collection(store: &Store, topic: &Topic, out: &Path) -> Result<Counts> {
    remember_topic(store, topic)?;
    sync(store, out, Texts::Fresh)
}

/// How texts reach `docs/`.
#[derive(Clone, Copy, PartialEq)]
enum Texts {
    /// By a command whose collection stays incomplete until it finishes: each text is written
    /// under its final name at once. A kill can leave a torn file, but the store keeps its
    /// copy of a text until the file is checked, so the rerun writes it again.
    Fresh,
    /// Into a finished collection: through a temporary name, so a kill leaves no half-written
    /// text under a final name.
    Atomic,
}

/// A scan of the store's kept texts unpacks all of them; a lookup per missing text pays two
/// B-tree searches instead. The scan is taken when more than one kept text in this many is
/// missing (a fresh `docs/`); an update's few new texts are looked up (100k-document store:
/// 947 new texts written in 0.3 s, against 1.0–1.4 s through the scan it used to make).
const SCAN_SHARE: usize = 8;

/// Brings the collection directory in line with the store: writes the kept texts missing from
/// `docs/`, moves texts no longer kept into the store, rewrites `manifest.jsonl` and
/// `report.md`.
///
/// Work on `docs/` is proportional to what changed, so an update or a review decision does not
/// rewrite a large collection. Texts are written through temporary names: a kill leaves no
/// half-written text under a final name, and the next sync removes leftovers.
pub fn sync_collection(store: &Store, out: &Path) -> Result<Counts> {
    sync(store, out, Texts::Atomic)
}

fn sync(store: &Store, out: &Path, texts: Texts) -> Result<Counts> {
    let docs = store.document_metas()?;
    let docs_dir = store.docs_dir();
    std::fs::create_dir_all(&docs_dir)
        .with_context(|| format!("{}: cannot create", docs_dir.display()))?;
    let mut present: HashSet<String> = HashSet::new();
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
    let kept: HashSet<&str> = docs
        .iter()
        .filter(|d| d.status == Status::Kept)
        .map(|d| d.id.as_str())
        .collect();
    hold_leaving_texts(store, &docs_dir, &present)?;
    for id in &present {
        if !kept.contains(id.as_str()) {
            let p = kept_file(&docs_dir, id);
            std::fs::remove_file(&p).with_context(|| format!("{}: cannot remove", p.display()))?;
        }
    }
    let write_text = |id: &str, text: &str| -> Result<()> {
        let path = kept_file(&docs_dir, id);
        match texts {
            Texts::Atomic => write_atomic(&path, &file_bytes(text)),
            Texts::Fresh => std::fs::write(&path, file_bytes(text))
                .with_context(|| format!("{}: cannot write", path.display())),
        }
    };
    let missing: Vec<&str> = kept
        .iter()
        .copied()
        .filter(|id| !present.contains(*id))
        .collect();
    if missing.len() * SCAN_SHARE > kept.len() {
        let want: HashSet<&str> = missing.iter().copied().collect();
        store.each_held_text_with_status(Status::Kept, &mut |id, text| {
            if want.contains(id.as_str()) {
                write_text(&id, &text)?;
            }
            Ok(())
        })?;
    } else {
        for id in &missing {
            // A kept text the store no longer holds and `docs/` lacks fails here, naming its file.
            if let Some(text) = store.document_text(id)? {
                write_text(id, &text)?;
            }
        }
    }
    let written: HashSet<&str> = missing.iter().copied().collect();
    release_kept_texts(store, &written, Some(&write_text))?;
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
            relevance: d.relevance,
            date: d.date.as_deref(),
            format: d.format.as_deref(),
            reason: d.reason.as_deref(),
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
    report.push_str(&hosts_markdown(&store.host_counts()?));
    report.push_str(&skipped_markdown(&store.skipped()?));
    write_atomic(&out.join("report.md"), report.as_bytes())?;
    Ok(total)
}

/// Before the files of texts no longer kept are removed, the store takes the texts it does not
/// hold yet (it gave them up when they were kept).
fn hold_leaving_texts(store: &Store, docs_dir: &Path, present: &HashSet<String>) -> Result<()> {
    let mut leaving = Vec::new();
    for (num, id, sha256) in store.unkept_texts_not_held()? {
        if !present.contains(&id) {
            continue;
        }
        leaving.push((num, kept_text(docs_dir, &id, &sha256)?));
    }
    store.hold_texts(&leaving)
}

/// Writes the file of a kept text (its id, its text).
pub type WriteText<'a> = &'a dyn Fn(&str, &str) -> Result<()>;

/// Drops the store's copy of each kept text whose file in `docs/` holds it. The files named in
/// `written` were written from the store's copy by the caller; every other file is read and
/// checked first. One that is torn or not the text is rewritten from the store's copy by
/// `repair`, or, without it, the store keeps its copy.
pub fn release_kept_texts(
    store: &Store,
    written: &HashSet<&str>,
    repair: Option<WriteText<'_>>,
) -> Result<()> {
    let docs_dir = store.docs_dir();
    let held = store.kept_texts_held()?;
    let mut release = Vec::with_capacity(held.len());
    for (num, id, sha256) in held {
        if !written.contains(id.as_str()) {
            let file = kept_file(&docs_dir, &id);
            let found = read_kept_file(&docs_dir, &id, &sha256)
                .with_context(|| format!("{}: cannot read", file.display()))?;
            if !matches!(found, KeptFile::Text(_)) {
                let Some(repair) = repair else { continue };
                let text = store
                    .document_text(&id)?
                    .with_context(|| format!("document {id} has gone from the store"))?;
                repair(&id, &text)?;
            }
        }
        release.push((num, id));
    }
    store.release_texts(&release)
}
