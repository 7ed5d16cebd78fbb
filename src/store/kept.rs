//! One copy of each text: a kept document's text lives in the collection's `docs/<id>.txt`,
//! every other text in the store's `texts` table.
//!
//! The file in `docs/` is what users read, so a second, packed copy in the store only cost
//! space: with it, store and `docs/` took 1.69 times the text of the dev corpus. The store
//! reads a kept text from its file and checks it against the SHA-256 recorded with the
//! document, so a file that was edited or lost is named, never taken for the text.
//!
//! A build writes the text of each document bound for dedup (`pending`) straight into
//! `docs/` and the store never packs it (`Unwritten::write`): most of them are kept, and
//! packing them only to unpack, write and release them at the end cost a 10k build 0.6 s of
//! its 1.3 s after reading. The files of a batch are on disk before its rows are committed.
//!
//! A text moves between the two homes without ever being without a copy:
//! - into `docs/` ([`Store::release_texts`]): its file is written and on disk before the row
//!   goes;
//! - out of `docs/` ([`Store::hold_texts`]): its row is committed before the file is removed.
//!
//! A kill between the steps leaves both copies, which the next sync of the collection resolves.

use super::text::{self, StoredFrame};
use super::{At, Status, Store};
use crate::error::KeptTextLost;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The folder of the kept texts inside a collection directory (beside the store).
pub const DOCS_DIR: &str = "docs";

/// Whether the text of a document of this status that the store does not hold is in `docs/`:
/// a kept one's always, a pending one's when a build wrote it there at ingest.
pub fn lives_in_docs(status: Status) -> bool {
    matches!(status, Status::Kept | Status::Pending)
}

/// The SHA-256 of a text, hex: what the store and the manifest record of each document.
///
/// ring's rather than the `sha2` crate's: on a machine without the SHA extensions its assembly
/// hashes 7.7 KB texts at 340 MB/s against 186 MB/s, and with them both reach 1.2 GB/s. A
/// batch of texts goes through [`sha256_hex_many`] instead.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()))
}

/// [`sha256_hex`] of each text, in their order.
pub fn sha256_hex_many<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let messages: Vec<_> = texts
        .into_iter()
        .map(|t| tape_sha256::Message::new(t.as_bytes()))
        .collect();
    sha256_many(&messages).iter().map(hex::encode).collect()
}

/// The SHA-256 of each message, in their order.
///
/// A build hashes each text twice (its id and its [`sha256_hex`]), so how matters:
/// - On a CPU with SHA-256 instructions of its own (x86's SHA extensions), two messages at a
///   time, their rounds interleaved (`super::sha_streams`): on the dev corpus's texts
///   2.8 GB/s against ring's 1.7 GB/s one at a time, and `tape-sha256`'s 1.6 GB/s, which
///   interleaves only messages of equal length (`examples/hash_batches.rs`).
/// - Without them, ring's assembly manages 340 MB/s, so a batch is hashed side by side, one
///   message a lane of the vector unit (16 with AVX-512), sorted by length so that a wave's
///   messages are alike (`tape-sha256`, batches of 256: 1,300 MB/s). ARM's SHA2 instructions
///   go through ring one message at a time.
pub fn sha256_many(messages: &[tape_sha256::Message<'_>]) -> Vec<[u8; 32]> {
    sha256_many_in(messages, !sha_instructions())
}

/// [`sha256_many`] in the vector unit's lanes or, without `lanes`, in two interleaved streams
/// on x86's SHA extensions, else one message at a time by ring.
fn sha256_many_in(messages: &[tape_sha256::Message<'_>], lanes: bool) -> Vec<[u8; 32]> {
    if !lanes {
        if let Some(digests) = super::sha_streams::hash_messages(messages) {
            return digests;
        }
    }
    // A lone message would leave every other lane idle.
    if !lanes || messages.len() == 1 {
        return messages
            .iter()
            .map(|m| {
                let mut h = ring::digest::Context::new(&ring::digest::SHA256);
                for piece in [m.prefix, m.body, m.tail] {
                    h.update(piece);
                }
                let mut digest = [0u8; 32];
                digest.copy_from_slice(h.finish().as_ref());
                digest
            })
            .collect();
    }
    let length = |m: &tape_sha256::Message<'_>| m.prefix.len() + m.body.len() + m.tail.len();
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_unstable_by_key(|&i| length(&messages[i]));
    let sorted: Vec<tape_sha256::Message<'_>> = order.iter().map(|&i| messages[i]).collect();
    let mut digests = vec![[0u8; 32]; messages.len()];
    tape_sha256::hash_messages(&sorted, &mut digests);
    let mut out = vec![[0u8; 32]; messages.len()];
    for (digest, &i) in digests.iter().zip(&order) {
        out[i] = *digest;
    }
    out
}

/// Whether this CPU has the SHA-256 instructions ring uses when it finds them.
pub fn sha_instructions() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("ssse3")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("sha2")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The file of kept document `id` in the folder `docs`.
pub fn kept_file(docs: &Path, id: &str) -> PathBuf {
    docs.join(format!("{id}.txt"))
}

/// What the file of a kept text holds: the text and one newline, so that tools that read
/// lines see the last one.
pub fn file_bytes(text: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(text.len() + 1);
    b.extend_from_slice(text.as_bytes());
    b.push(b'\n');
    b
}

/// Creates (or truncates) the file `path` and writes [`file_bytes`] of `text` into it, the
/// text and its newline handed to the kernel together rather than copied into one buffer
/// first (a build writes every text bound for dedup this way).
pub fn write_file_of(path: &Path, text: &str) -> std::io::Result<()> {
    write_text_into(std::fs::File::create(path)?, text)
}

/// Writes [`file_bytes`] of `text` into `file`, just created.
fn write_text_into(mut file: std::fs::File, text: &str) -> std::io::Result<()> {
    use std::io::{IoSlice, Write};
    let mut parts = [IoSlice::new(text.as_bytes()), IoSlice::new(b"\n")];
    let mut rest = &mut parts[..];
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `docs/`, open for a build to write texts into it one file after another. On Linux each
/// file is created by its name within the folder, opened once: the kernel does not walk the
/// folder's whole path again for each file (80,000 files of 8 KB on tmpfs, three rounds: 1.03
/// and 1.04 s of system CPU against 0.88 and 0.89 s, and one round with 1.04 against 1.11).
pub struct DocsDir {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    folder: std::fs::File,
}

impl DocsDir {
    /// Opens the folder `path`.
    pub fn open(path: &Path) -> Result<DocsDir> {
        Ok(DocsDir {
            path: path.to_path_buf(),
            #[cfg(target_os = "linux")]
            folder: std::fs::File::open(path)
                .with_context(|| format!("{}: cannot open", path.display()))?,
        })
    }

    /// Creates (or truncates) the file of document `id` and writes [`file_bytes`] of `text`
    /// into it, as [`write_file_of`] does.
    pub fn write(&self, id: &str, text: &str) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::{AsRawFd, FromRawFd};
            let name = std::ffi::CString::new(format!("{id}.txt"))?;
            // SAFETY: the folder's descriptor is open while `self` lives, and `name` is a
            // NUL-terminated string that outlives the call.
            let fd = unsafe {
                libc::openat(
                    self.folder.as_raw_fd(),
                    name.as_ptr(),
                    libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                    0o666 as libc::c_uint,
                )
            };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `fd` was just opened here and nothing else owns it.
            write_text_into(unsafe { std::fs::File::from_raw_fd(fd) }, text)
        }
        #[cfg(not(target_os = "linux"))]
        write_file_of(&kept_file(&self.path, id), text)
    }

    /// Puts the files of documents `ids`, in the folder, on disk. On Linux one `syncfs` of the
    /// file system, through the folder already open, does it: a sync per file cost 0.23 ms
    /// each here, 2.3 s for 10,000 texts, against 6 ms for 256.
    pub fn flush_to_disk<'a>(&self, ids: impl Iterator<Item = &'a str>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let _ = ids;
            // SAFETY: the folder's descriptor is open while `self` lives.
            if unsafe { libc::syncfs(self.folder.as_raw_fd()) } != 0 {
                return Err(std::io::Error::last_os_error())
                    .with_context(|| format!("{}: cannot flush to disk", self.path.display()));
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            for id in ids {
                let f = kept_file(&self.path, id);
                std::fs::File::open(&f)
                    .and_then(|h| h.sync_all())
                    .with_context(|| format!("{}: cannot flush to disk", f.display()))?;
            }
            Ok(())
        }
    }
}

/// What the file of a kept text was found to hold.
#[derive(Debug, PartialEq)]
pub enum KeptFile {
    /// The text recorded with the document.
    Text(String),
    /// No file.
    Missing,
    /// Something else.
    Changed,
}

/// Reads the file of kept document `id` and checks it against `sha256` (hex, as the store and
/// the manifest record it). Errors are only those of reading a file that is there.
pub fn read_kept_file(docs: &Path, id: &str, sha256: &str) -> std::io::Result<KeptFile> {
    let found = read_unchecked(docs, id)?;
    let hash = found.as_deref().map(sha256_hex).unwrap_or_default();
    Ok(checked(found, &hash, sha256))
}

/// The text in the file of kept document `id`, not checked yet, or what the file is instead
/// (missing, or not a text).
fn read_unchecked(docs: &Path, id: &str) -> std::io::Result<Result<String, KeptFile>> {
    let bytes = match std::fs::read(kept_file(docs, id)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Err(KeptFile::Missing)),
        Err(e) => return Err(e),
    };
    let Ok(mut text) = String::from_utf8(bytes) else {
        return Ok(Err(KeptFile::Changed));
    };
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(Ok(text))
}

/// What a file found by [`read_unchecked`] holds for a document recorded with `sha256`, its
/// text's SHA-256 being `hash`.
fn checked(found: Result<String, KeptFile>, hash: &str, sha256: &str) -> KeptFile {
    match found {
        Ok(text) if hash == sha256 => KeptFile::Text(text),
        Ok(_) => KeptFile::Changed,
        Err(other) => other,
    }
}

/// The text of kept document `id` from its file, or why it cannot be had
/// ([`KeptTextLost`] for a file that is missing or not the text).
pub fn kept_text(docs: &Path, id: &str, sha256: &str) -> Result<String> {
    let found = read_kept_file(docs, id, sha256)
        .with_context(|| format!("{}: cannot read", kept_file(docs, id).display()))?;
    kept_text_of(docs, id, found)
}

/// [`kept_text`] from what the file was found to hold.
fn kept_text_of(docs: &Path, id: &str, found: KeptFile) -> Result<String> {
    let file = kept_file(docs, id);
    match found {
        KeptFile::Text(t) => Ok(t),
        KeptFile::Missing => Err(KeptTextLost {
            file,
            changed: false,
        }
        .into()),
        KeptFile::Changed => Err(KeptTextLost {
            file,
            changed: true,
        }
        .into()),
    }
}

/// A document's text as a query finds it: the store's frame, if the store holds the text.
pub(crate) struct TextRow {
    pub id: String,
    pub status: Status,
    pub sha256: String,
    pub frame: Option<StoredFrame>,
}

impl TextRow {
    /// Reads the columns `id, status, sha256, text` from `r`, starting at column `first`.
    pub(crate) fn read(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<TextRow> {
        Ok(TextRow {
            id: r.get(first)?,
            status: r.get(first + 1)?,
            sha256: r.get(first + 2)?,
            frame: r.get(first + 3)?,
        })
    }

    /// The text: unpacked from the frame of the store at `store`, or read from `docs` for a
    /// kept or pending document; None for a document held without a text. Free of the store's
    /// connection, so texts are read on all cores.
    pub(crate) fn text(&self, store: &Path, docs: &Path) -> Result<Option<String>> {
        let mut text = Self::texts(std::slice::from_ref(self), store, docs)?;
        Ok(text.pop().flatten())
    }

    /// [`TextRow::text`] of each row, in their order, the texts from `docs/` read and checked
    /// together ([`kept_texts`]).
    pub(crate) fn texts(
        rows: &[TextRow],
        store: &Path,
        docs: &Path,
    ) -> Result<Vec<Option<String>>> {
        let mut texts = Vec::with_capacity(rows.len());
        let mut in_files = Vec::new();
        for (at, row) in rows.iter().enumerate() {
            texts.push(match &row.frame {
                Some(frame) => Some(frame.unpack().at(store)?),
                None if lives_in_docs(row.status) => {
                    in_files.push(at);
                    None
                }
                None => None,
            });
        }
        let wanted: Vec<(&str, &str)> = in_files
            .iter()
            .map(|&at| (rows[at].id.as_str(), rows[at].sha256.as_str()))
            .collect();
        for (at, text) in in_files.into_iter().zip(kept_texts(docs, &wanted)) {
            texts[at] = Some(text?);
        }
        Ok(texts)
    }
}

/// Texts read from `docs/` together on one core by [`kept_texts`] (their hashes side by side),
/// wherever texts are read on all cores.
pub const READ_CHUNK: usize = 64;

/// Texts whose store rows are fetched at a time by the thread holding the connection, before
/// they are read on all cores [`READ_CHUNK`] at a time: enough to keep both cores busy, few
/// enough that texts never pile up (the engine's verification, a sync's missing kept texts).
pub const FETCH_CHUNK: usize = 1024;

/// [`kept_text`] of each `(id, sha256)`, in their order, the files' checks hashed together
/// ([`sha256_hex_many`]): one at a time, the check was a sixth of the work of reading the
/// texts an update verifies.
pub fn kept_texts(docs: &Path, wanted: &[(&str, &str)]) -> Vec<Result<String>> {
    let found: Vec<Result<Result<String, KeptFile>>> = wanted
        .iter()
        .map(|(id, _)| {
            read_unchecked(docs, id)
                .with_context(|| format!("{}: cannot read", kept_file(docs, id).display()))
        })
        .collect();
    let hashes = sha256_hex_many(found.iter().filter_map(|f| match f {
        Ok(Ok(text)) => Some(text.as_str()),
        _ => None,
    }));
    let mut hashes = hashes.into_iter();
    wanted
        .iter()
        .zip(found)
        .map(|((id, sha256), found)| {
            found.and_then(|found| {
                let hash = match &found {
                    Ok(_) => hashes.next().unwrap_or_default(),
                    Err(_) => String::new(),
                };
                kept_text_of(docs, id, checked(found, &hash, sha256))
            })
        })
        .collect()
}

/// Texts of documents about to leave `docs/`, read from their files and packed ahead of the
/// sync that moves them into the store, while the store's one writer is busy with something
/// else (a build recording its verdicts, single-threaded, leaves a core idle for as long).
/// The sync takes a text from here only when it is the one the store records.
#[derive(Default)]
pub struct PackedAhead(rustc_hash::FxHashMap<i64, (String, Vec<u8>)>);

/// Packed bytes [`PackedAhead`] holds at most (about a chunk more): the 80k dev corpus's 5,601
/// duplicates pack into 15.5 MB.
const AHEAD_BYTES: usize = 32 << 20;

impl PackedAhead {
    /// Reads and packs, on the calling thread and a read-only connection of its own, the files
    /// in `docs/` of the documents `ids` of the store at `store_path`. A file that cannot be
    /// read, or does not hold the recorded text, is left out: the sync reads it again and
    /// reports it as it always does.
    pub fn read(store_path: &Path, ids: &[&str]) -> PackedAhead {
        Self::try_read(store_path, ids, AHEAD_BYTES).unwrap_or_default()
    }

    /// [`PackedAhead::read`], stopping at the first chunk after `most` packed bytes.
    fn try_read(store_path: &Path, ids: &[&str], most: usize) -> Result<PackedAhead> {
        if ids.is_empty() {
            return Ok(PackedAhead::default());
        }
        let store = Store::open_read_only(store_path)?;
        let docs = store.docs_dir();
        let named = store.documents_named(ids)?;
        let mut packed = rustc_hash::FxHashMap::default();
        let mut bytes = 0;
        for chunk in named.chunks(READ_CHUNK) {
            // Memory follows the signatures, not the texts: past this, the sync reads the rest.
            if bytes > most {
                break;
            }
            let wanted: Vec<(&str, &str)> = chunk
                .iter()
                .map(|(_, id, sha256)| (id.as_str(), sha256.as_str()))
                .collect();
            for ((num, _, sha256), text) in chunk.iter().zip(kept_texts(&docs, &wanted)) {
                if let Ok(text) = text {
                    let frame = text::pack(&text);
                    bytes += frame.len();
                    packed.insert(*num, (sha256.clone(), frame));
                }
            }
        }
        Ok(PackedAhead(packed))
    }

    /// The packed text of document `num`, if the one read ahead is the text recorded as
    /// `sha256`.
    pub fn take(&mut self, num: i64, sha256: &str) -> Option<Vec<u8>> {
        self.0
            .remove(&num)
            .filter(|(read, _)| read == sha256)
            .map(|(_, frame)| frame)
    }
}

impl Store {
    /// The folder of the kept texts: `docs/` beside the store file.
    pub fn docs_dir(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(DOCS_DIR)
    }

    /// Kept documents whose text the store still holds: `(num, id, sha256)`; of those numbered
    /// `among`, when given.
    pub fn kept_texts_held(&self, among: Option<&[i64]>) -> Result<Vec<(i64, String, String)>> {
        match among {
            // From the texts held, a few thousand, not from the kept documents, nearly all of
            // a large collection.
            None => self.id_rows(
                "SELECT d.num, d.id, d.sha256 FROM texts t CROSS JOIN documents d ON d.num = t.num
                 WHERE d.status = 'kept' ORDER BY t.num",
                None,
            ),
            // Every text held was 3,000 pages read (13 ms in the `sqlite3` shell) in each
            // update's sync of a 100,000-document store holding the texts of 8,000 documents
            // not kept.
            Some(nums) => self.id_rows(
                "SELECT d.num, d.id, d.sha256 FROM rarray(?1) q
                 CROSS JOIN documents d ON d.num = q.value CROSS JOIN texts t ON t.num = d.num
                 WHERE d.status = 'kept' ORDER BY d.num",
                Some(Store::value_array(nums.iter().copied())),
            ),
        }
    }

    /// Documents not kept whose text the store does not hold (it is in `docs/`, where they
    /// were kept, or nowhere): `(num, id, sha256)`; of those numbered `among`, when given.
    pub fn unkept_texts_not_held(
        &self,
        among: Option<&[i64]>,
    ) -> Result<Vec<(i64, String, String)>> {
        const NOT_HELD: &str = "LEFT JOIN texts t ON t.num = d.num
             WHERE t.num IS NULL AND d.status != 'kept' ORDER BY d.num";
        match among {
            None => self.id_rows(
                &format!("SELECT d.num, d.id, d.sha256 FROM documents d {NOT_HELD}"),
                None,
            ),
            // Every document's row was 0.03 s of an update to a 100,000-document store.
            Some(nums) => self.id_rows(
                &format!(
                    "SELECT d.num, d.id, d.sha256 FROM rarray(?1) q
                     CROSS JOIN documents d ON d.num = q.value {NOT_HELD}"
                ),
                Some(Store::value_array(nums.iter().copied())),
            ),
        }
    }

    fn id_rows(
        &self,
        sql: &str,
        nums: Option<rusqlite::vtab::array::Array>,
    ) -> Result<Vec<(i64, String, String)>> {
        let mut stmt = self.conn.prepare(sql).at(&self.path)?;
        let row = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?, r.get(2)?));
        let rows = match nums {
            Some(nums) => stmt.query_map([nums], row),
            None => stmt.query_map([], row),
        }
        .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }

    /// Has the store hold the texts `(num, text)` and the texts already packed `(num, frame)`
    /// (of documents leaving the collection), in one transaction: their files may be removed
    /// once this returns.
    pub fn hold_texts(&self, texts: &[(i64, String)], packed: Vec<(i64, Vec<u8>)>) -> Result<()> {
        use rayon::prelude::*;
        let mut frames: Vec<(i64, Vec<u8>)> = texts
            .par_iter()
            .map(|(num, t)| (*num, text::pack(t)))
            .collect();
        frames.extend(packed);
        if frames.is_empty() {
            return Ok(());
        }
        // In row order: appended to the table rather than put among its rows.
        frames.sort_unstable_by_key(|(num, _)| *num);
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        {
            let mut ins = tx
                .prepare_cached("INSERT OR REPLACE INTO texts(num, text) VALUES (?1, ?2)")
                .at(&self.path)?;
            for (num, frame) in &frames {
                ins.execute(rusqlite::params![num, frame]).at(&self.path)?;
            }
        }
        tx.commit().at(&self.path)
    }

    /// `(num, id, sha256)` of the documents `ids` the store holds, by number.
    fn documents_named(&self, ids: &[&str]) -> Result<Vec<(i64, String, String)>> {
        self.id_rows(
            "SELECT d.num, d.id, d.sha256 FROM rarray(?1) q
             CROSS JOIN documents d ON d.id = q.value ORDER BY d.num",
            Some(Store::text_array(ids.iter().copied())),
        )
    }

    /// Drops the store's copies of the kept texts `(num, id)`, whose files in `docs/` hold the
    /// recorded texts: the files are flushed to disk first, so a power cut cannot leave a
    /// text in neither home. A store left mostly empty by it (after a build) is compacted.
    pub fn release_texts(&self, kept: &[(i64, String)]) -> Result<()> {
        if kept.is_empty() {
            return Ok(());
        }
        DocsDir::open(&self.docs_dir())?.flush_to_disk(kept.iter().map(|(_, id)| id.as_str()))?;
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        {
            let mut del = tx
                .prepare_cached("DELETE FROM texts WHERE num = ?1")
                .at(&self.path)?;
            for (num, _) in kept {
                del.execute([num]).at(&self.path)?;
            }
        }
        tx.commit().at(&self.path)?;
        self.compact_if_sparse()
    }

    /// Rewrites the store file when more than a quarter of it (and over a megabyte) is free
    /// pages: SQLite reuses free pages but never gives them back to the file system.
    fn compact_if_sparse(&self) -> Result<()> {
        let (free, pages, page_size): (i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT freelist_count FROM pragma_freelist_count),
                        (SELECT page_count FROM pragma_page_count),
                        (SELECT page_size FROM pragma_page_size)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .at(&self.path)?;
        if free * 4 > pages && free * page_size > 1 << 20 {
            self.conn.execute_batch("VACUUM").at(&self.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_of_hashing_a_batch_give_each_messages_own_digest() {
        // Every length around the block and padding edges, in pieces, out of length order;
        // whichever way this CPU takes, the other is held to the same digests.
        let bodies: Vec<String> = (0..300)
            .rev()
            .map(|n| "ж".repeat(n / 2) + &"a".repeat(n % 2))
            .collect();
        let messages: Vec<_> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| tape_sha256::Message::pair(&b"loc"[..i % 4], b"\0", b.as_bytes()))
            .collect();
        let alone = |m: &tape_sha256::Message<'_>| {
            let whole = [m.prefix, m.body, m.tail].concat();
            let mut d = [0u8; 32];
            d.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, &whole).as_ref());
            d
        };
        let expected: Vec<[u8; 32]> = messages.iter().map(alone).collect();
        assert_eq!(sha256_many_in(&messages, true), expected);
        assert_eq!(sha256_many_in(&messages, false), expected);
        assert_eq!(sha256_many_in(&messages[..1], true), expected[..1]);
        assert!(sha256_many_in(&[], true).is_empty());
    }

    #[test]
    fn a_text_written_into_the_open_folder_is_its_file_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            kept_file(dir.path(), "b"),
            "a much longer text, written before",
        )
        .unwrap();
        let docs = DocsDir::open(dir.path()).unwrap();
        for (id, text) in [
            ("a", "Первый абзац.\n\nSecond."),
            ("b", ""),
            ("c", "слово "),
        ] {
            docs.write(id, text).unwrap();
            assert_eq!(
                std::fs::read(kept_file(dir.path(), id)).unwrap(),
                file_bytes(text)
            );
        }
        docs.flush_to_disk(["a", "b", "c"].into_iter()).unwrap();
        assert!(docs.write("no-such-folder/d", "text").is_err());
        assert!(DocsDir::open(&dir.path().join("no-such-folder")).is_err());
    }

    #[test]
    fn a_file_written_from_a_text_holds_its_file_bytes_and_nothing_of_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = kept_file(dir.path(), "a");
        std::fs::write(
            &path,
            "an older and much longer text than the one that replaces it",
        )
        .unwrap();
        for text in ["Первый абзац.\n\nSecond.", "", &"слово ".repeat(100_000)] {
            write_file_of(&path, text).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), file_bytes(text));
        }
        let missing = dir.path().join("no-such-folder").join("a.txt");
        assert!(write_file_of(&missing, "text").is_err());
    }

    #[test]
    fn a_kept_file_reads_back_only_as_the_recorded_text() {
        let dir = tempfile::tempdir().unwrap();
        let text = "Первый абзац.\n\nSecond paragraph.";
        let sha = sha256_hex(text);
        assert_eq!(
            read_kept_file(dir.path(), "a", &sha).unwrap(),
            KeptFile::Missing
        );
        std::fs::write(kept_file(dir.path(), "a"), file_bytes(text)).unwrap();
        assert_eq!(
            read_kept_file(dir.path(), "a", &sha).unwrap(),
            KeptFile::Text(text.to_string())
        );
        std::fs::write(kept_file(dir.path(), "a"), file_bytes("Первый абзац.")).unwrap();
        assert_eq!(
            read_kept_file(dir.path(), "a", &sha).unwrap(),
            KeptFile::Changed
        );
        std::fs::write(kept_file(dir.path(), "a"), [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_kept_file(dir.path(), "a", &sha).unwrap(),
            KeptFile::Changed
        );
        let e = kept_text(dir.path(), "a", &sha).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e}");
        assert!(e.to_string().contains("a.txt: has changed"), "{e}");
        let e = kept_text(dir.path(), "b", &sha).unwrap_err();
        assert!(e.to_string().contains("b.txt: is missing"), "{e}");
    }

    #[test]
    fn kept_texts_read_together_say_of_each_file_what_it_holds_in_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let texts = ["Один.", "Two.", "Three.", "Four."];
        let shas: Vec<String> = texts.iter().map(|t| sha256_hex(t)).collect();
        std::fs::write(kept_file(dir.path(), "a"), file_bytes(texts[0])).unwrap();
        std::fs::write(kept_file(dir.path(), "b"), file_bytes("Not two.")).unwrap();
        std::fs::write(kept_file(dir.path(), "d"), file_bytes(texts[3])).unwrap();
        let wanted: Vec<(&str, &str)> = ["a", "b", "c", "d"]
            .into_iter()
            .zip(shas.iter().map(String::as_str))
            .collect();
        let read = kept_texts(dir.path(), &wanted);
        assert_eq!(read.len(), 4);
        assert_eq!(read[0].as_ref().unwrap(), texts[0]);
        assert_eq!(read[3].as_ref().unwrap(), texts[3]);
        let lost = |r: &Result<String>| {
            let e = r
                .as_ref()
                .unwrap_err()
                .downcast_ref::<KeptTextLost>()
                .unwrap();
            (e.file.file_name().unwrap().to_owned(), e.changed)
        };
        assert_eq!(lost(&read[1]), ("b.txt".into(), true));
        assert_eq!(lost(&read[2]), ("c.txt".into(), false));
    }

    #[test]
    fn texts_read_ahead_are_taken_only_as_the_recorded_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let mut s = Store::open(&path).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let texts = [
            ("a", "Первый текст."),
            ("b", "Second text."),
            ("c", "Third."),
        ];
        let docs = texts.map(|(id, text)| {
            let mut d = super::super::tests::doc(id, text);
            d.sha256 = sha256_hex(text);
            (d, vec![])
        });
        s.insert_documents(run, docs.to_vec(), None).unwrap();
        let docs_dir = s.docs_dir();
        std::fs::create_dir_all(&docs_dir).unwrap();
        for (id, text) in texts {
            std::fs::write(kept_file(&docs_dir, id), file_bytes(text)).unwrap();
        }
        std::fs::write(kept_file(&docs_dir, "b"), file_bytes("Edited.")).unwrap();
        let num = |id: &str| s.document_meta(id).unwrap().unwrap().num;
        let unpacked = |frame: Vec<u8>| StoredFrame::Packed(frame).unpack().unwrap();
        let mut ahead = PackedAhead::read(&path, &["a", "b", "c", "not stored"]);
        assert_eq!(
            ahead.take(num("a"), &sha256_hex(texts[0].1)).map(unpacked),
            Some(texts[0].1.to_string())
        );
        assert_eq!(
            ahead.take(num("a"), &sha256_hex(texts[0].1)),
            None,
            "taken once"
        );
        // A file that is not the recorded text was not read ahead: the sync reads and names it.
        assert_eq!(ahead.take(num("b"), &sha256_hex(texts[1].1)), None);
        // A text the store records otherwise by the time of the sync is not taken.
        assert_eq!(ahead.take(num("c"), &sha256_hex("Another text.")), None);
        assert!(PackedAhead::read(&dir.path().join("none.sqlite"), &["a"])
            .0
            .is_empty());
        // Past its bytes, it stops after a chunk: the sync reads the others.
        let many: Vec<String> = (0..READ_CHUNK + 6).map(|n| format!("m{n}")).collect();
        let texts: Vec<String> = (0..many.len()).map(|n| format!("Text {n}.")).collect();
        let docs = many.iter().zip(&texts).map(|(id, text)| {
            let mut d = super::super::tests::doc(id, text);
            d.sha256 = sha256_hex(text);
            std::fs::write(kept_file(&docs_dir, id), file_bytes(text)).unwrap();
            (d, vec![])
        });
        s.insert_documents(run, docs.collect(), None).unwrap();
        let ids: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            PackedAhead::try_read(&path, &ids, 0).unwrap().0.len(),
            READ_CHUNK
        );
        assert_eq!(
            PackedAhead::try_read(&path, &ids, AHEAD_BYTES)
                .unwrap()
                .0
                .len(),
            many.len()
        );
    }

    #[test]
    fn texts_read_together_are_those_read_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let (docs, store) = (dir.path(), Path::new("store.sqlite"));
        let row = |id: &str, status: Status, text: &str, frame: Option<&str>| TextRow {
            id: id.to_string(),
            status,
            sha256: sha256_hex(text),
            frame: frame.map(|f| StoredFrame::Packed(text::pack(f))),
        };
        let mut rows = Vec::new();
        for n in 0..40 {
            let text = format!("Текст {n}. ").repeat(n * 7 + 1);
            std::fs::write(kept_file(docs, &format!("k{n}")), file_bytes(&text)).unwrap();
            rows.push(row(&format!("k{n}"), Status::Kept, &text, None));
            rows.push(row(&format!("d{n}"), Status::Duplicate, &text, Some(&text)));
        }
        rows.push(row("none", Status::Short, "", None));
        let one_by_one: Vec<Option<String>> = rows
            .iter()
            .map(|r| match &r.frame {
                Some(frame) => Some(frame.unpack().unwrap()),
                None if lives_in_docs(r.status) => Some(kept_text(docs, &r.id, &r.sha256).unwrap()),
                None => None,
            })
            .collect();
        assert_eq!(TextRow::texts(&rows, store, docs).unwrap(), one_by_one);
        assert_eq!(one_by_one.last(), Some(&None));
        assert!(one_by_one[..80].iter().all(Option::is_some));
        // A file edited among good ones is named, as alone.
        std::fs::write(kept_file(docs, "k7"), file_bytes("edited")).unwrap();
        let e = TextRow::texts(&rows, store, docs).unwrap_err();
        assert!(e.to_string().contains("k7.txt: has changed"), "{e}");
        std::fs::remove_file(kept_file(docs, "k7")).unwrap();
        let e = TextRow::texts(&rows, store, docs).unwrap_err();
        assert!(e.to_string().contains("k7.txt: is missing"), "{e}");
    }
}
