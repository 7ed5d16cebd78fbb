//! Keeps the collection directory in line with the store: the kept texts in `docs/`, the
//! manifest and the report.

use super::manifest;
use super::report::{
    acquisition_markdown, counts, hosts_markdown, remember_topic, report_markdown,
    skipped_markdown, stored_topic, Counts,
};
use super::write_atomic;
use crate::store::kept::{
    file_bytes, kept_file, kept_texts, read_kept_file, write_file_of, KeptFile, PackedAhead,
    TextRow, FETCH_CHUNK, READ_CHUNK,
};
use crate::store::queries::DocMeta;
use crate::store::{Status, Store};
use crate::topic::Topic;
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::path::Path;

/// Writes `docs/<id>.txt` for kept documents, `manifest.jsonl` and `report.md` at the end of a
/// build.
/// `ahead`: texts of documents leaving `docs/`, read and packed while the verdicts were
/// recorded.
pub fn write_collection(
    store: &Store,
    topic: &Topic,
    out: &Path,
    ahead: PackedAhead,
) -> Result<Counts> {
    remember_topic(store, topic)?;
    sync(store, out, Texts::Fresh, ahead)
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
/// Work is proportional to what changed, so an update or a review decision does not rewrite
/// a large collection: where the directory is as the last sync left it (its stamp,
/// `manifest::stamp`), only the documents the store lists as changed are looked at, their
/// manifest lines rewritten and their files written or removed (100,000-document store: 0.5 s
/// for the manifest alone before, 0.03 s after an update of 1,000). Texts are written through
/// temporary names: a kill leaves no half-written text under a final name, and the next sync,
/// which finds `docs/` changed, lists it and removes leftovers.
pub fn sync_collection(store: &Store, out: &Path) -> Result<Counts> {
    sync(store, out, Texts::Atomic, PackedAhead::default())
}

fn sync(store: &Store, out: &Path, texts: Texts, ahead: PackedAhead) -> Result<Counts> {
    let docs_dir = store.docs_dir();
    std::fs::create_dir_all(&docs_dir)
        .with_context(|| format!("{}: cannot create", docs_dir.display()))?;
    // Read before anything is written: a change made while this sync runs stays for the next.
    let changes = store.manifest_changes()?;
    let as_left = texts == Texts::Atomic
        && store
            .manifest_stamp()?
            .is_some_and(|s| Some(s) == manifest::stamp(out, &docs_dir));
    let (docs, files) = if as_left {
        (store.document_metas_of(&changes)?, Files::Asked(&docs_dir))
    } else {
        // The folder is listed while the store reads out the documents (80k build: the two
        // in turn 0.155 s, side by side 0.12 s).
        let (docs, listed) = std::thread::scope(|scope| {
            let listing = scope.spawn(|| list_docs(&docs_dir));
            let docs = store.document_metas();
            let listed = listing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (docs, listed)
        });
        (docs?, Files::Listed(listed?))
    };
    // The manifest is made of the documents' rows alone: a core of its own writes it while
    // the texts are brought in line and the report is made (an update of 1,000 documents to a
    // 100,000-document store rewrote its 28 MB in 0.03 s of a 0.1 s sync).
    let (total, manifest_merged) = std::thread::scope(|scope| -> Result<_> {
        let manifest = scope.spawn(|| {
            if as_left {
                manifest::rewrite_changed(out, &changes, &docs)
            } else {
                manifest::write_whole(out, &docs).map(|()| true)
            }
        });
        let total = sync_docs(store, &docs_dir, &docs, &files, texts, ahead).and_then(|()| {
            crate::testhooks::pause("export-docs");
            write_report(store, out)
        });
        let merged = manifest
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok((total?, merged?))
    })?;
    if !manifest_merged {
        manifest::write_whole(out, &store.document_metas()?)?;
    }
    if let Some(stamp) = manifest::stamp(out, &docs_dir) {
        store.record_sync(&stamp, &changes)?;
    }
    Ok(total)
}

/// Writes `report.md` from the store; gives the collection's figures.
fn write_report(store: &Store, out: &Path) -> Result<Counts> {
    store.keep_figures()?;
    let (per, total) = counts(store)?;
    let key = store.meta("detector")?.unwrap_or_default();
    let topic = stored_topic(store)?;
    let mut report = report_markdown(&topic, &key, &per, &total);
    report.push_str(&acquisition_markdown(&store.url_counts()?));
    report.push_str(&hosts_markdown(&store.host_counts()?));
    report.push_str(&skipped_markdown(&store.skipped()?));
    write_atomic(&out.join("report.md"), report.as_bytes())?;
    Ok(total)
}

/// What a sync knows of the files in `docs/`.
enum Files<'a> {
    /// The ids of the `.txt` files, from a listing of the whole folder.
    Listed(FxHashSet<String>),
    /// Nothing listed: the folder is as the last sync left it, so only the files of the
    /// documents that changed since are looked at, one by one.
    Asked(&'a Path),
}

impl Files<'_> {
    fn has(&self, id: &str) -> bool {
        match self {
            Files::Listed(present) => present.contains(id),
            Files::Asked(docs_dir) => kept_file(docs_dir, id).exists(),
        }
    }
}

/// The ids of the texts in `docs/`; anything else there (a temporary file a killed write
/// left) is removed.
fn list_docs(docs_dir: &Path) -> Result<FxHashSet<String>> {
    let mut present = FxHashSet::default();
    for e in std::fs::read_dir(docs_dir)
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
    Ok(present)
}

/// Brings `docs/` in line with the store for `docs` (every document, with a listing; or the
/// changed ones): the texts of documents no longer kept move into the store, the kept texts
/// missing are written, and the store gives up its copy of each kept text `docs/` now holds.
fn sync_docs(
    store: &Store,
    docs_dir: &Path,
    docs: &[DocMeta],
    files: &Files<'_>,
    texts: Texts,
    ahead: PackedAhead,
) -> Result<()> {
    let kept: FxHashSet<&str> = docs
        .iter()
        .filter(|d| d.status == Status::Kept)
        .map(|d| d.id.as_str())
        .collect();
    // Where `docs/` is as the last sync left it, only a document that changed since (one of
    // `docs`) can have left the kept texts or joined them.
    let changed: Vec<i64>;
    let among = match files {
        Files::Listed(_) => None,
        Files::Asked(_) => {
            changed = docs.iter().map(|d| d.num).collect();
            Some(changed.as_slice())
        }
    };
    hold_leaving_texts(store, docs_dir, files, among, ahead)?;
    let leaving: Vec<&str> = match files {
        Files::Listed(present) => present
            .iter()
            .map(String::as_str)
            .filter(|id| !kept.contains(id))
            .collect(),
        Files::Asked(_) => docs
            .iter()
            .filter(|d| d.status != Status::Kept && files.has(&d.id))
            .map(|d| d.id.as_str())
            .collect(),
    };
    for id in leaving {
        let p = kept_file(docs_dir, id);
        std::fs::remove_file(&p).with_context(|| format!("{}: cannot remove", p.display()))?;
    }
    let write_text = |id: &str, text: &str| -> Result<()> {
        let path = kept_file(docs_dir, id);
        match texts {
            Texts::Atomic => write_atomic(&path, &file_bytes(text)),
            Texts::Fresh => write_file_of(&path, text)
                .with_context(|| format!("{}: cannot write", path.display())),
        }
    };
    let missing: Vec<&DocMeta> = docs
        .iter()
        .filter(|d| d.status == Status::Kept && !files.has(&d.id))
        .collect();
    let written: FxHashSet<&str> = missing.iter().map(|d| d.id.as_str()).collect();
    let listed = matches!(files, Files::Listed(_));
    if listed && missing.len() * SCAN_SHARE > kept.len() {
        store.each_held_text_with_status(Status::Kept, &mut |id, text| {
            if written.contains(id.as_str()) {
                write_text(&id, &text)?;
            }
            Ok(())
        })?;
    } else {
        // The store's rows are fetched on this thread (its connection is not shared), the
        // texts unpacked and written on all cores.
        let nums: Vec<i64> = missing.iter().map(|d| d.num).collect();
        let store_path = store.path();
        for chunk in nums.chunks(FETCH_CHUNK) {
            // A document the store lacks has no text to write.
            let rows: Vec<TextRow> = store.text_rows(chunk)?.into_iter().flatten().collect();
            rows.par_chunks(READ_CHUNK)
                .try_for_each(|part| -> Result<()> {
                    // A kept text the store no longer holds and `docs/` lacks fails here, naming
                    // its file.
                    let texts = TextRow::texts(part, store_path, docs_dir)?;
                    for (row, text) in part.iter().zip(texts) {
                        if let Some(text) = text {
                            write_text(&row.id, &text)?;
                        }
                    }
                    Ok(())
                })?;
        }
    }
    release_kept_texts(store, &written, Some(&write_text), among)
}

/// Before the files of texts no longer kept are removed, the store takes the texts it does not
/// hold yet (it gave them up when they were kept): of the documents numbered `among`, when
/// given.
fn hold_leaving_texts(
    store: &Store,
    docs_dir: &Path,
    files: &Files<'_>,
    among: Option<&[i64]>,
    mut ahead: PackedAhead,
) -> Result<()> {
    let leaving: Vec<(i64, String, String)> = store
        .unkept_texts_not_held(among)?
        .into_iter()
        .filter(|(_, id, _)| files.has(id))
        .collect();
    // Read and checked on all cores, a chunk at a time, so that only a chunk of texts is held
    // in memory (after a build, the duplicates: 5,601 texts of the 80k dev corpus, read one
    // by one on one core before). Each chunk is held in a transaction of its own: a kill
    // between them leaves the rest to the next sync, as no file is removed before all are.
    for chunk in leaving.chunks(HOLD_CHUNK) {
        let mut packed = Vec::new();
        let mut to_read = Vec::with_capacity(chunk.len());
        for leaving in chunk {
            let (num, _, sha256) = leaving;
            match ahead.take(*num, sha256) {
                Some(frame) => packed.push((*num, frame)),
                None => to_read.push(leaving),
            }
        }
        let texts: Vec<Vec<Result<String>>> = to_read
            .par_chunks(READ_CHUNK)
            .map(|part| {
                let wanted: Vec<(&str, &str)> = part
                    .iter()
                    .map(|(_, id, sha256)| (id.as_str(), sha256.as_str()))
                    .collect();
                kept_texts(docs_dir, &wanted)
            })
            .collect();
        let held = to_read
            .iter()
            .zip(texts.into_iter().flatten())
            .map(|(&(num, _, _), text)| Ok((*num, text?)))
            .collect::<Result<Vec<_>>>()?;
        store.hold_texts(&held, packed)?;
    }
    Ok(())
}

/// Texts moved from `docs/` into the store per transaction.
const HOLD_CHUNK: usize = 1024;

/// Writes the file of a kept text (its id, its text).
pub type WriteText<'a> = &'a dyn Fn(&str, &str) -> Result<()>;

/// Drops the store's copy of each kept text whose file in `docs/` holds it (of the documents
/// numbered `among`, when given). The files named in `written` were written from the store's
/// copy by the caller; every other file is read and checked first. One that is torn or not
/// the text is rewritten from the store's copy by `repair`, or, without it, the store keeps
/// its copy.
pub fn release_kept_texts(
    store: &Store,
    written: &FxHashSet<&str>,
    repair: Option<WriteText<'_>>,
    among: Option<&[i64]>,
) -> Result<()> {
    let docs_dir = store.docs_dir();
    let held = store.kept_texts_held(among)?;
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
