//! The collection directory: where a collection lives on disk and what is in it.
//!
//! `collection.sqlite` (the store), `docs/<id>.txt` (each kept text), `manifest.jsonl` (one row
//! per document read) and `report.md` (the Table-1 report). The layout is named here once;
//! [`sync`] brings the directory in line with the store, [`report`] computes the figures and
//! writes the report, [`export`] writes the kept texts in the user's formats.

pub mod doctor;
pub mod export;
pub mod manifest;
pub mod report;
pub mod sync;

pub use export::{export_stream, export_txt, Format};
pub use report::{counts, remember_topic, stored_topic, Counts, ReportTopic};
pub use sync::{release_kept_texts, sync_collection, write_collection};

use crate::error::{bad_input, StoreCorrupt};
use crate::store::Store;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The store's file name inside a collection directory.
pub const STORE_FILE: &str = "collection.sqlite";

/// The manifest's file name inside a collection directory.
pub const MANIFEST_FILE: &str = "manifest.jsonl";

pub use crate::store::kept::DOCS_DIR;

/// The store of the collection in `dir`.
pub fn store_path(dir: &Path) -> PathBuf {
    dir.join(STORE_FILE)
}

/// Whether `dir` holds the files a build writes beside the store (manifest or texts): then a
/// store that is missing or empty has lost a collection rather than never held one.
pub fn has_collection_files(dir: &Path) -> bool {
    dir.join(MANIFEST_FILE).is_file() || dir.join(DOCS_DIR).is_dir()
}

/// Refuses a store file of 0 bytes beside a collection's files. SQLite takes an empty file
/// for an empty database, so without this check a truncated store would read as a collection
/// of no texts, and the first command that writes would lay a fresh schema over it.
pub fn refuse_emptied_store(dir: &Path) -> Result<()> {
    let path = store_path(dir);
    let empty = std::fs::metadata(&path)
        .map(|m| m.is_file() && m.len() == 0)
        .unwrap_or(false);
    if empty && has_collection_files(dir) {
        return Err(StoreCorrupt {
            path,
            what: format!(
                "the file is empty (0 bytes) while {MANIFEST_FILE} and {DOCS_DIR}/ hold a collection"
            ),
        }
        .into());
    }
    Ok(())
}

/// How a command uses a collection's store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only: the store is opened read-only and never created, migrated or written.
    Read,
    /// Records something (a review decision): the store is opened for writing.
    Write,
}

/// Opens the store of the collection in `dir`, which must exist and be sound.
pub fn open_store(dir: &Path, access: Access) -> Result<Store> {
    let path = store_path(dir);
    if !path.is_file() {
        let hint = if has_collection_files(dir) {
            format!(
                " ({MANIFEST_FILE} and {DOCS_DIR}/ are there: `collect doctor {} --rebuild --topic TOPIC` rebuilds the store from them)",
                dir.display()
            )
        } else {
            " (pass the collection directory, e.g. --collection DIR)".to_string()
        };
        return Err(bad_input(format!(
            "no collection at {}: no {STORE_FILE} there{hint}",
            dir.display()
        )));
    }
    refuse_emptied_store(dir)?;
    match access {
        Access::Read => Store::open_read_only(&path),
        Access::Write => Store::open(&path),
    }
}

/// The topic file the collection in `dir` was built from (or last updated with), as the store
/// remembers it. Bad input when the store does not remember one (a collection built before it
/// did) or the file is gone: the message says how to go on.
pub fn remembered_topic_file(dir: &Path) -> Result<PathBuf> {
    // For writing: `update` writes anyway, and an older schema is migrated rather than refused.
    let store = open_store(dir, Access::Write)?;
    let once = format!(
        "run `collect update TOPIC.yaml --out {}` once with the topic file it was built from",
        dir.display()
    );
    let Some(file) = store.meta(report::TOPIC_FILE_KEY)? else {
        return Err(bad_input(format!(
            "{}: the collection does not remember its topic file (it was built before collect \
             remembered it); {once}",
            dir.display()
        )));
    };
    let file = PathBuf::from(file);
    if !file.is_file() {
        return Err(bad_input(format!(
            "{}: the topic file the collection was built from, {}, is gone; {once}",
            dir.display(),
            file.display()
        )));
    }
    Ok(file)
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
    let docs = dir.join(DOCS_DIR);
    if docs.exists() {
        std::fs::remove_dir_all(&docs)
            .with_context(|| format!("{}: cannot remove", docs.display()))?;
    }
    Ok(())
}

/// Writes a file through a temporary name, so readers never see half of it.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `fill` writes, streamed to the temporary file (buffered) rather
/// than made in memory first.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let cannot = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("{}: cannot write", tmp.display()))
    };
    let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(cannot)?);
    fill(&mut w).map_err(cannot)?;
    w.flush().map_err(cannot)?;
    drop(w);
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}
