//! The files each source's complete reads took whole (`FileState`), so that an update passes by
//! the files that did not change instead of reading and hashing every one, and reads only the
//! lines appended to a JSONL file since (`FileState::jsonl`, with the ids of its records in
//! `file_ids`, which the duplicate-id check of the new lines needs).
//!
//! Created when first written, like `skipped`: a collection from an earlier version opens
//! unchanged, and without the tables every file is read, as before.

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
    /// For a JSONL file: what its `size` bytes were.
    pub jsonl: Option<JsonlState>,
}

/// What the bytes of a JSONL file read whole were: enough to know that a larger file only had
/// lines appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonlState {
    /// CRC-32 of a sample of the bytes (every byte of a file up to 2 MiB; of a larger one, 32
    /// blocks of 64 KiB spread from its first byte to its last: `readers::local`).
    pub crc32: u32,
    /// Lines in them (blank ones too): where the numbering of appended lines goes on.
    pub lines: u64,
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
            jsonl: None,
        })
    }

    /// Whether both describe the same bytes by the quick check (path, size, time, inode).
    pub fn same_as(&self, other: &FileState) -> bool {
        (&self.path, self.size, self.mtime_ns, self.inode)
            == (&other.path, other.size, other.mtime_ns, other.inode)
    }
}

/// A file a complete read took whole, with the ids of the JSONL records it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The file as it was read.
    pub state: FileState,
    /// Ids of the JSONL records read (empty for other files).
    pub ids: Vec<String>,
    /// Only the lines appended since the last read were read: `ids` add to those remembered.
    pub appended: bool,
}

impl FileRead {
    /// A file other than JSONL, read whole.
    pub fn whole(state: FileState) -> FileRead {
        FileRead {
            state,
            ids: Vec::new(),
            appended: false,
        }
    }
}

/// The ids of the records earlier reads took from a JSONL file, asked one at a time: the
/// duplicate-id check of the lines appended to a large file then costs what those lines cost,
/// not a load of every id read before.
pub trait EarlierIds: std::fmt::Debug {
    /// Whether an earlier read took a record with this id.
    fn contains(&self, id: &str) -> Result<bool>;
}

/// The ids `file_ids` remembers for one file of a source.
pub struct FileIds {
    store: Store,
    source: String,
    path: String,
}

impl std::fmt::Debug for FileIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileIds")
            .field("store", &self.store.path)
            .field("source", &self.source)
            .field("path", &self.path)
            .finish()
    }
}

impl EarlierIds for FileIds {
    fn contains(&self, id: &str) -> Result<bool> {
        self.store
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM file_ids WHERE source = ?1 AND path = ?2 AND id = ?3)",
            )
            .and_then(|mut stmt| stmt.query_row(params![self.source, self.path, id], |r| r.get(0)))
            .at(&self.store.path)
    }
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS files (
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    crc32 INTEGER,
    lines INTEGER,
    PRIMARY KEY (source, path)
);
CREATE TABLE IF NOT EXISTS file_ids (
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (source, path, id)
) WITHOUT ROWID;";

impl Store {
    /// What the complete reads of `source` took whole, by path.
    pub fn known_files(&self, source: &str) -> Result<HashMap<String, FileState>> {
        let mut known = HashMap::new();
        if !self.has_table("files")? {
            return Ok(known);
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT path, size, mtime_ns, inode, crc32, lines FROM files WHERE source = ?1",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([source], |r| {
                let crc32: Option<i64> = r.get(4)?;
                let lines: Option<i64> = r.get(5)?;
                Ok(FileState {
                    path: r.get(0)?,
                    size: r.get::<_, i64>(1)? as u64,
                    mtime_ns: r.get(2)?,
                    inode: r.get::<_, i64>(3)? as u64,
                    jsonl: crc32.zip(lines).map(|(c, l)| JsonlState {
                        crc32: c as u32,
                        lines: l as u64,
                    }),
                })
            })
            .at(&self.path)?;
        for f in rows {
            let f = f.at(&self.path)?;
            known.insert(f.path.clone(), f);
        }
        Ok(known)
    }

    /// The ids of the JSONL records remembered for a file of `source`, asked one at a time.
    /// Only a file [`Store::known_files`] listed is asked for: its row and its ids were
    /// written together, so the tables are there.
    pub fn file_ids(&self, source: &str, path: &str) -> Result<FileIds> {
        // A connection of their own: the store's is storing what the reader delivers meanwhile.
        Ok(FileIds {
            store: Store::open_read_only(&self.path)?,
            source: source.to_string(),
            path: path.to_string(),
        })
    }

    /// Remembers the files a complete read of `source` took whole (their documents are stored
    /// by then), in one transaction.
    pub fn remember_files(&mut self, source: &str, files: &[FileRead]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction().at(&self.path)?;
        tx.execute_batch(CREATE).at(&self.path)?;
        {
            let mut ins = tx
                .prepare(
                    "INSERT OR REPLACE INTO files(source, path, size, mtime_ns, inode, crc32, lines)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .at(&self.path)?;
            let mut forget = tx
                .prepare("DELETE FROM file_ids WHERE source = ?1 AND path = ?2")
                .at(&self.path)?;
            let mut ids_of = tx
                .prepare(
                    "INSERT OR IGNORE INTO file_ids(source, path, id)
                     SELECT ?1, ?2, value FROM rarray(?3)",
                )
                .at(&self.path)?;
            for f in files {
                let s = &f.state;
                ins.execute(params![
                    source,
                    s.path,
                    s.size as i64,
                    s.mtime_ns,
                    s.inode as i64,
                    s.jsonl.map(|j| i64::from(j.crc32)),
                    s.jsonl.map(|j| j.lines as i64)
                ])
                .at(&self.path)?;
                // A file read whole again may have lost lines: only its ids now stand.
                if !f.appended {
                    forget.execute(params![source, s.path]).at(&self.path)?;
                }
                // In key order, so that they are appended to the table's B-tree rather than
                // each put at a random place in it, and in one statement (the 80k dev corpus's
                // 80,000 ids: 0.27–0.31 s in read order, a statement each; 0.05–0.07 s so).
                let ids = Store::text_array(f.ids.iter().map(String::as_str));
                ids_of
                    .execute(params![source, s.path, ids])
                    .at(&self.path)?;
            }
        }
        tx.commit().at(&self.path)
    }
}
