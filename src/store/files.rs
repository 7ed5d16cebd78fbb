//! The files each source's complete reads took whole (`readers::FileState`), so that an
//! update passes by the files that did not change instead of reading and hashing every one.
//!
//! Created when first written, like `skipped`: a collection from an earlier version opens
//! unchanged, and without the table every file is read, as before.

use crate::store::{At, Store};
use anyhow::Result;
use rusqlite::params;
use std::collections::HashMap;

/// What a file was when a reader took it: the quick check `make` and `rsync` use (size and
/// modification time, to the nanosecond), with the inode, so a file replaced by another of the
/// same size and time is read again. Taken before the file is opened: a change made while it
/// is read leaves a state that no longer matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// The absolute path.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number (0 where the platform has none).
    pub inode: u64,
}

impl FileState {
    /// The state of the file at `path`, if it can be read.
    pub fn of(path: &std::path::Path) -> Option<FileState> {
        let m = std::fs::metadata(path).ok()?;
        let mtime_ns = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos() as i64;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileState {
            path: std::path::absolute(path)
                .ok()?
                .to_string_lossy()
                .into_owned(),
            size: m.len(),
            mtime_ns,
            inode,
        })
    }
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS files (
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    PRIMARY KEY (source, path)
)";

impl Store {
    /// What the complete reads of `source` took whole, by path.
    pub fn known_files(&self, source: &str) -> Result<HashMap<String, FileState>> {
        let exists: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'files'",
                [],
                |r| r.get(0),
            )
            .at(&self.path)?;
        let mut known = HashMap::new();
        if exists == 0 {
            return Ok(known);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT path, size, mtime_ns, inode FROM files WHERE source = ?1")
            .at(&self.path)?;
        let rows = stmt
            .query_map([source], |r| {
                Ok(FileState {
                    path: r.get(0)?,
                    size: r.get::<_, i64>(1)? as u64,
                    mtime_ns: r.get(2)?,
                    inode: r.get::<_, i64>(3)? as u64,
                })
            })
            .at(&self.path)?;
        for f in rows {
            let f = f.at(&self.path)?;
            known.insert(f.path.clone(), f);
        }
        Ok(known)
    }

    /// Remembers the files a complete read of `source` took whole (their documents are stored
    /// by then), in one transaction.
    pub fn remember_files(&mut self, source: &str, files: &[FileState]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction().at(&self.path)?;
        tx.execute(CREATE, []).at(&self.path)?;
        {
            let mut ins = tx
                .prepare(
                    "INSERT OR REPLACE INTO files(source, path, size, mtime_ns, inode)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .at(&self.path)?;
            for f in files {
                ins.execute(params![
                    source,
                    f.path,
                    f.size as i64,
                    f.mtime_ns,
                    f.inode as i64
                ])
                .at(&self.path)?;
            }
        }
        tx.commit().at(&self.path)
    }
}
