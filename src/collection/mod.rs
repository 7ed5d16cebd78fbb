//! The collection directory: where a collection lives on disk and what is in it.
//!
//! `collection.sqlite` (the store), `docs/<id>.txt` (each kept text), `manifest.jsonl` (one row
//! per document read) and `report.md` (the Table-1 report). The layout is named here once;
//! [`sync`] brings the directory in line with the store, [`report`] computes the figures and
//! writes the report, [`export`] writes the kept texts in the user's formats.

pub mod export;
pub mod report;
pub mod sync;

pub use export::{export_stream, export_txt, Format};
pub use report::{counts, remember_topic, stored_topic, Counts, ReportTopic};
pub use sync::{sync_collection, write_collection};

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

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
