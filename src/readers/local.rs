//! `local`: texts already on disk — a directory of `.txt`/`.html` files and documents
//! (`.pdf`, `.docx`, `.odt`, `.epub`: `documents`), or a JSONL file.
//!
//! A bad input never stops the reading: an entry the walk refuses (`walk.rs`), a file that
//! cannot be read or is too large, a JSONL line that is not a document, each becomes a
//! [`Notice::Skipped`] and the reader goes on; the build decides whether that ends the run
//! (`--strict`) or is recorded.

use super::documents::DocFormat;
use super::walk::{has_ext, kind_of, walk, WalkOptions};
use super::{
    document_body, Check, FileRead, FileState, JsonlState, KnownFiles, Notice, Payload, RawDoc,
    Reader, Skip, SkipReason,
};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Files (and JSONL lines) above this size are skipped unless the source sets `max_file_bytes`.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

/// How a local source reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalOptions {
    /// Follow symbolic links whose target lies outside the source's folder.
    pub follow_links: bool,
    /// Largest file read (after decompression), and largest JSONL line.
    pub max_file_bytes: u64,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            follow_links: false,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// A directory of `.txt`, `.html`, `.htm`, `.wikitext` (optionally `.gz`) files and `.pdf`,
/// `.docx`, `.odt`, `.epub` documents, or a `.jsonl` file.
pub struct LocalReader {
    name: String,
    rank: u32,
    path: PathBuf,
    opts: LocalOptions,
    known: KnownFiles,
}

impl LocalReader {
    /// A local source at `path` (already resolved against the topic file).
    pub fn new(name: String, rank: u32, path: PathBuf, opts: LocalOptions) -> Self {
        LocalReader {
            name,
            rank,
            path,
            opts,
            known: KnownFiles::default(),
        }
    }
}

/// One line of a JSONL input.
#[derive(Debug, Deserialize)]
pub struct JsonDoc<'a> {
    /// Document id (string or number).
    pub id: JsonId,
    /// The text.
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    /// Web address.
    #[serde(default)]
    pub url: Option<String>,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
}

/// A JSONL id: strings and integers are both accepted.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum JsonId {
    /// A string id.
    Str(String),
    /// A numeric id.
    Num(i64),
}

impl JsonId {
    /// The id as text.
    pub fn into_string(self) -> String {
        match self {
            JsonId::Str(s) => s,
            JsonId::Num(n) => n.to_string(),
        }
    }
}

/// Parses one JSONL line into a document, or says why it is not one (with line and column).
pub fn parse_json_record<'a>(
    path: &Path,
    line_no: usize,
    line: &'a str,
) -> std::result::Result<JsonDoc<'a>, Skip> {
    if let Some(doc) = super::json_line::read(line) {
        return Ok(doc);
    }
    serde_json::from_str(line).map_err(|e| {
        // serde_json appends " at line X column Y" itself; the locator already says where.
        let msg = e.to_string();
        let detail = msg
            .split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string();
        let reason = if detail.starts_with("missing field") {
            SkipReason::MissingField
        } else {
            SkipReason::BadJson
        };
        Skip {
            path: path.to_path_buf(),
            line: Some(line_no),
            column: Some(e.column()),
            offset: None,
            reason,
            detail,
        }
    })
}

/// Parses one JSONL line; errors are bad input naming `file:line:col`.
pub fn parse_json_line<'a>(path: &Path, line_no: usize, line: &'a str) -> Result<JsonDoc<'a>> {
    parse_json_record(path, line_no, line).map_err(Skip::into_error)
}

/// Opens a file for reading without ever blocking: a FIFO opened non-blocking returns at once
/// (a blocking open waits for a writer forever), and anything but a regular file is refused
/// from the metadata of the opened handle, so a file swapped after the walk is caught too.
pub(crate) fn open_regular(path: &Path) -> std::result::Result<(std::fs::File, u64), Skip> {
    let mut oo = std::fs::OpenOptions::new();
    oo.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        oo.custom_flags(libc::O_NONBLOCK);
    }
    let file = oo
        .open(path)
        .map_err(|e| Skip::file(path, SkipReason::Unreadable, format!("cannot open: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| Skip::file(path, SkipReason::Unreadable, format!("cannot stat: {e}")))?;
    if !meta.is_file() {
        let kind = kind_of(&meta.file_type());
        return Err(Skip::file(
            path,
            SkipReason::NotRegularFile,
            format!("{kind}, not read"),
        ));
    }
    Ok((file, meta.len()))
}

/// The raw document of a JSONL record (`id` is its id, `line` the line it was read from): the
/// local source and `collect worker` make it alike, so both give a record the same id.
pub fn json_raw_doc(source: &str, rank: u32, id: &str, doc: JsonDoc<'_>, line: &str) -> RawDoc {
    RawDoc {
        source: source.to_string(),
        source_rank: rank,
        locator: doc.url.clone().unwrap_or_else(|| format!("jsonl:{id}")),
        url: doc.url,
        title: doc.title,
        raw_bytes: line.len() as u64,
        body: doc.text.into_owned(),
        payload: Payload::PlainText,
        lang: None,
        date: None,
        document: None,
        defect: None,
    }
}

/// The skip of a JSONL record whose id an earlier line of the file has.
pub fn duplicate_id_skip(path: &Path, line: usize, id: &str) -> Skip {
    Skip {
        path: path.to_path_buf(),
        line: Some(line),
        column: None,
        offset: None,
        reason: SkipReason::DuplicateId,
        detail: format!("id `{id}` appears twice"),
    }
}

/// Calls `f(line_no, line)` for each non-blank line of a JSONL file (1-based line numbers),
/// a line that cannot be a document (not UTF-8, longer than `max_line_bytes`) as the `Skip`
/// that says so. A UTF-8 byte order mark before the first line is dropped. Fails when the file
/// cannot be opened or read, or when `f` fails.
pub fn jsonl_records(
    path: &Path,
    max_line_bytes: u64,
    mut f: impl FnMut(usize, std::result::Result<&str, Skip>) -> Result<()>,
) -> Result<()> {
    jsonl_records_from(path, max_line_bytes, WHOLE, |place, line| {
        f(place.line_no, line)
    })
    .map(|_| ())
}

/// Where a read of a JSONL file starts and ends.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Byte to start at.
    from: u64,
    /// Lines before it: the first line read is numbered `lines_before + 1`.
    lines_before: u64,
    /// Bytes to stop at (None: the end of the file), so that what a remembered state says was
    /// read is exactly what was read, even if the file grows meanwhile.
    end: Option<u64>,
}

const WHOLE: Span = Span {
    from: 0,
    lines_before: 0,
    end: None,
};

/// [`jsonl_records`] over the `span` of the file, each line with its place in the file;
/// returns the number of the last line.
fn jsonl_records_from(
    path: &Path,
    max_line_bytes: u64,
    span: Span,
    mut f: impl FnMut(LinePlace, std::result::Result<&str, Skip>) -> Result<()>,
) -> Result<u64> {
    let (mut file, _) = open_regular(path).map_err(Skip::into_error)?;
    if span.from > 0 {
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(span.from))
            .with_context(|| format!("{}: cannot seek to byte {}", path.display(), span.from))?;
    }
    let bytes = span.end.map_or(u64::MAX, |e| e.saturating_sub(span.from));
    let reader = BufReader::with_capacity(1 << 20, file.take(bytes));
    jsonl_records_placed(
        reader,
        path,
        max_line_bytes,
        span.lines_before,
        |place, line| {
            let offset = place.offset + span.from;
            f(LinePlace { offset, ..place }, line)
        },
    )
}

/// Blocks of the sample a check of a JSONL file's first bytes reads ([`prefix_sample`]).
const SAMPLE_BLOCKS: u64 = 32;
/// Bytes of each block.
const SAMPLE_BLOCK: u64 = 64 << 10;

/// CRC-32 of a sample of the first `size` bytes of `file`, and their last byte: all of them up
/// to 2 MiB, else [`SAMPLE_BLOCKS`] blocks spread evenly from the first byte to byte `size`.
/// This is what a JSONL file's remembered state holds, so that finding whether a file only
/// grew reads 2 MiB however large it is (a 300 MB file was read whole before: a quarter of
/// the CPU of an update of 1,000 documents). An edit that keeps the length of the bytes before
/// and falls between the blocks is not seen; any other change of the file's first bytes is.
fn prefix_sample(file: &mut std::fs::File, size: u64) -> std::io::Result<(u32, Option<u8>)> {
    use std::io::{Seek, SeekFrom};
    let mut crc = crc32fast::Hasher::new();
    let mut buf = vec![0u8; SAMPLE_BLOCK as usize];
    let mut last = None;
    let mut take = |file: &mut std::fs::File, at: u64, len: u64| -> std::io::Result<()> {
        file.seek(SeekFrom::Start(at))?;
        let mut left = len;
        while left > 0 {
            let n = left.min(SAMPLE_BLOCK) as usize;
            file.read_exact(&mut buf[..n])?;
            crc.update(&buf[..n]);
            last = buf[..n].last().copied();
            left -= n as u64;
        }
        Ok(())
    };
    if size <= SAMPLE_BLOCKS * SAMPLE_BLOCK {
        take(file, 0, size)?;
    } else {
        for i in 0..SAMPLE_BLOCKS {
            take(
                file,
                i * (size - SAMPLE_BLOCK) / (SAMPLE_BLOCKS - 1),
                SAMPLE_BLOCK,
            )?;
        }
    }
    Ok((crc.finalize(), last))
}

/// [`jsonl_records`] over any reader (`path` names it in messages), the first line numbered
/// `first_line + 1`; returns the number of the last line.
pub fn jsonl_records_in(
    reader: impl BufRead,
    path: &Path,
    max_line_bytes: u64,
    first_line: u64,
    mut f: impl FnMut(usize, std::result::Result<&str, Skip>) -> Result<()>,
) -> Result<u64> {
    jsonl_records_placed(reader, path, max_line_bytes, first_line, |place, line| {
        f(place.line_no, line)
    })
}

/// Where a JSONL line's text lies in its file (after its line break and any byte order mark
/// are left out): what a second read needs to read that line alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinePlace {
    /// 1-based line number.
    pub line_no: usize,
    /// Byte of the file the text starts at.
    pub offset: u64,
    /// Bytes of the text.
    pub len: usize,
}

/// [`jsonl_records_in`], each line with its place (its offset counted from where the reader
/// started).
fn jsonl_records_placed(
    mut reader: impl BufRead,
    path: &Path,
    max_line_bytes: u64,
    first_line: u64,
    mut f: impl FnMut(LinePlace, std::result::Result<&str, Skip>) -> Result<()>,
) -> Result<u64> {
    let mut buf: Vec<u8> = Vec::new();
    let mut line_no = first_line as usize;
    let mut consumed = 0u64;
    let read_err = |line_no: usize| format!("{}:{}: cannot read", path.display(), line_no);
    loop {
        buf.clear();
        let starts = consumed;
        // Bounded, so that one endless line (or a device) cannot take all memory.
        let n = (&mut reader)
            .take(max_line_bytes.saturating_add(1))
            .read_until(b'\n', &mut buf)
            .with_context(|| read_err(line_no + 1))?;
        if n == 0 {
            return Ok(line_no as u64);
        }
        consumed += n as u64;
        line_no += 1;
        if !buf.ends_with(b"\n") && buf.len() as u64 > max_line_bytes {
            consumed += skip_rest_of_line(&mut reader).with_context(|| read_err(line_no))?;
            f(
                LinePlace {
                    line_no,
                    offset: starts,
                    len: (consumed - starts) as usize,
                },
                Err(too_large(path, line_no, max_line_bytes)),
            )?;
            continue;
        }
        let Some((dropped, line)) = line_text(&buf, line_no) else {
            continue;
        };
        let place = LinePlace {
            line_no,
            offset: starts + dropped as u64,
            len: line.len(),
        };
        match std::str::from_utf8(line) {
            Ok(s) => f(place, Ok(s))?,
            Err(e) => f(place, Err(bad_utf8(path, line_no, e.valid_up_to() + 1)))?,
        }
    }
}

/// The text of JSONL line `line_no` as read: without its line break, nor the byte order mark
/// the first line may start with, and how many bytes were dropped before it; None for a blank
/// line.
fn line_text(raw: &[u8], line_no: usize) -> Option<(usize, &[u8])> {
    let mut line = raw;
    while let Some(rest) = line
        .strip_suffix(b"\n")
        .or_else(|| line.strip_suffix(b"\r"))
    {
        line = rest;
    }
    let mut dropped = 0;
    if line_no == 1 {
        if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
            line = rest;
            dropped = 3;
        }
    }
    (!line.iter().all(u8::is_ascii_whitespace)).then_some((dropped, line))
}

/// Consumes input up to and including the next newline, keeping none of it; returns the bytes
/// consumed.
fn skip_rest_of_line(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut skipped = 0u64;
    loop {
        let avail = reader.fill_buf()?;
        if avail.is_empty() {
            return Ok(skipped);
        }
        match avail.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(skipped + i as u64 + 1);
            }
            None => {
                let n = avail.len();
                reader.consume(n);
                skipped += n as u64;
            }
        }
    }
}

/// Calls `f(line_no, line)` for each non-blank line of a JSONL file (1-based line numbers);
/// stops at the first line that is not UTF-8 or too long, as bad input naming `file:line:col`.
pub fn for_each_jsonl_line(
    path: &Path,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    for_each_jsonl_line_placed(path, |place, line| f(place.line_no, line))
}

/// [`for_each_jsonl_line`], each line with its place in the file.
pub fn for_each_jsonl_line_placed(
    path: &Path,
    mut f: impl FnMut(LinePlace, &str) -> Result<()>,
) -> Result<()> {
    jsonl_records_from(
        path,
        DEFAULT_MAX_FILE_BYTES,
        WHOLE,
        |place, line| match line {
            Ok(line) => f(place, line),
            Err(skip) => Err(skip.into_error()),
        },
    )
    .map(|_| ())
}

/// Whole lines of a JSONL file in one buffer, for a reader that hands lines to other threads:
/// a buffer a block rather than a `String` a line (reading the 80k dev corpus a line at a
/// time, copying each into a `String` and checking its UTF-8 on the reader's thread was half
/// of that thread's time; here the check runs on the thread that parses the line).
#[derive(Debug, Default)]
pub struct JsonlBlock {
    bytes: Vec<u8>,
    /// Each line's place in the file, and where its text starts in `bytes`.
    lines: Vec<(LinePlace, usize)>,
    /// Read again at places an earlier read found: a line that is no longer UTF-8 means the
    /// file changed.
    read_again: bool,
}

impl JsonlBlock {
    /// An empty block with room for `bytes` of lines read by [`JsonlBlock::read_line_at`].
    pub fn with_capacity(bytes: usize) -> Self {
        JsonlBlock {
            bytes: Vec::with_capacity(bytes),
            ..Default::default()
        }
    }

    /// The lines' places in the file, in file order.
    pub fn places(&self) -> impl ExactSizeIterator<Item = LinePlace> + '_ {
        self.lines.iter().map(|(place, _)| *place)
    }

    /// The place in the file of the block's `k`-th line.
    pub fn place(&self, k: usize) -> LinePlace {
        self.lines[k].0
    }

    /// Bytes of the block's lines.
    pub fn len_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The text of the block's `k`-th line; not UTF-8 is bad input naming `path:line`.
    pub fn text(&self, path: &Path, k: usize) -> Result<&str> {
        let (place, start) = self.lines[k];
        std::str::from_utf8(&self.bytes[start..start + place.len]).map_err(|e| {
            let at = e.valid_up_to() + 1;
            if self.read_again {
                crate::error::bad_input(format!(
                    "{}:{}: not valid UTF-8 when read again (byte {at} of the line; has the \
                     file changed?)",
                    path.display(),
                    place.line_no
                ))
            } else {
                bad_utf8(path, place.line_no, at).into_error()
            }
        })
    }

    /// Adds the line of the JSONL file `file` (opened from `path`) at `place`, as an earlier
    /// read found it, read alone. A file that has changed since so that the line is no longer
    /// all there is an error naming the line.
    pub fn read_line_at(
        &mut self,
        file: &mut std::fs::File,
        path: &Path,
        place: LinePlace,
    ) -> Result<()> {
        use std::io::Seek;
        self.read_again = true;
        let start = self.bytes.len();
        self.bytes.resize(start + place.len, 0);
        file.seek(std::io::SeekFrom::Start(place.offset))
            .and_then(|_| file.read_exact(&mut self.bytes[start..]))
            .with_context(|| {
                format!(
                    "{}:{}: cannot read again (has the file changed?)",
                    path.display(),
                    place.line_no
                )
            })?;
        self.lines.push((place, start));
        Ok(())
    }
}

/// The skip of a JSONL line that is not UTF-8 from byte `at` (1-based) of it.
fn bad_utf8(path: &Path, line_no: usize, at: usize) -> Skip {
    Skip {
        path: path.to_path_buf(),
        line: Some(line_no),
        column: Some(at),
        offset: None,
        reason: SkipReason::BadUtf8,
        detail: format!("not valid UTF-8 (byte {at} of the line)"),
    }
}

/// The skip of a JSONL line longer than `max_line_bytes`.
fn too_large(path: &Path, line_no: usize, max_line_bytes: u64) -> Skip {
    Skip {
        path: path.to_path_buf(),
        line: Some(line_no),
        column: None,
        offset: None,
        reason: SkipReason::TooLarge,
        detail: format!("line longer than {max_line_bytes} bytes"),
    }
}

/// [`for_each_jsonl_line_placed`] a block of whole lines at a time, each block about
/// `block_bytes` (more when a line is longer); the lines' UTF-8 is checked by
/// [`JsonlBlock::text`], not here.
pub fn for_each_jsonl_block(
    path: &Path,
    block_bytes: usize,
    mut f: impl FnMut(JsonlBlock) -> Result<()>,
) -> Result<()> {
    let (mut file, _) = open_regular(path).map_err(Skip::into_error)?;
    let max_line_bytes = DEFAULT_MAX_FILE_BYTES;
    // The start of a line the last read cut, and where it is in the file.
    let mut carry: Vec<u8> = Vec::new();
    let mut at = 0u64;
    let mut line_no = 0usize;
    loop {
        // A line longer than a block doubles the read, so it is copied a few times, not once
        // a block.
        let want = (carry.len() + block_bytes.max(1)).max(2 * carry.len());
        let mut bytes = Vec::with_capacity(want);
        bytes.append(&mut carry);
        let had = bytes.len();
        (&mut file)
            .take((want - had) as u64)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}:{}: cannot read", path.display(), line_no + 1))?;
        let end_of_file = bytes.len() < want;
        let whole = if end_of_file {
            bytes.len()
        } else {
            match memchr::memrchr(b'\n', &bytes[had..]) {
                Some(i) => had + i + 1,
                None if bytes.len() as u64 > max_line_bytes => {
                    return Err(too_large(path, line_no + 1, max_line_bytes).into_error())
                }
                None => {
                    carry = bytes;
                    continue;
                }
            }
        };
        carry = bytes.split_off(whole);
        let mut lines = Vec::new();
        let mut from = 0;
        while from < bytes.len() {
            let to = memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i);
            line_no += 1;
            let raw = &bytes[from..to];
            let start = from;
            from = to + 1;
            if raw.len() as u64 > max_line_bytes {
                return Err(too_large(path, line_no, max_line_bytes).into_error());
            }
            let Some((dropped, line)) = line_text(raw, line_no) else {
                continue;
            };
            let start = start + dropped;
            let place = LinePlace {
                line_no,
                offset: at + start as u64,
                len: line.len(),
            };
            lines.push((place, start));
        }
        at += whole as u64;
        if !lines.is_empty() {
            f(JsonlBlock {
                bytes,
                lines,
                read_again: false,
            })?;
        }
        if end_of_file {
            return Ok(());
        }
    }
}

/// Text files under `dir` with the given extensions, sorted by path so runs are repeatable;
/// entries the walk refuses (loops, links leaving `dir`, FIFOs and devices, …) go to `warn`.
pub fn list_files(dir: &Path, exts: &[&str], warn: &mut dyn FnMut(String)) -> Result<Vec<PathBuf>> {
    let w = walk(
        dir,
        &WalkOptions {
            exts,
            follow_links: false,
        },
    )?;
    for s in &w.skipped {
        warn(format!("{s} ({}); skipped", s.reason));
    }
    Ok(w.files)
}

/// A text file as read: its text, its size as stored on disk or decompressed, and what was
/// not quite right about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextFile {
    /// The text, decoded (invalid UTF-8 replaced), without a byte order mark.
    pub text: String,
    /// Bytes read (after decompression).
    pub raw_bytes: u64,
    /// Why the text is not exactly the file's bytes, when it is not.
    pub warning: Option<String>,
}

/// The bytes of a regular file of at most `max_bytes` (after gunzipping `.gz`), under the
/// same rules as [`read_file_capped`], for documents read as bytes.
pub fn read_bytes_capped(path: &Path, max_bytes: u64) -> std::result::Result<Vec<u8>, Skip> {
    let (file, len) = open_regular(path)?;
    let gz = has_ext(path, &[".gz"]);
    if !gz && len > max_bytes {
        return Err(Skip::file(
            path,
            SkipReason::TooLarge,
            format!("{len} bytes, more than the source's max_file_bytes ({max_bytes})"),
        ));
    }
    let mut bytes = Vec::new();
    let limited = max_bytes.saturating_add(1);
    if gz {
        flate2::read::GzDecoder::new(file)
            .take(limited)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                let reason = match e.kind() {
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => {
                        SkipReason::BadGzip
                    }
                    _ => SkipReason::Unreadable,
                };
                Skip::file(path, reason, format!("not a valid gzip file: {e}"))
            })?;
    } else {
        BufReader::new(file)
            .take(limited)
            .read_to_end(&mut bytes)
            .map_err(|e| Skip::file(path, SkipReason::Unreadable, format!("cannot read: {e}")))?;
    }
    if bytes.len() as u64 > max_bytes {
        let what = if gz { "decompresses to" } else { "grew to" };
        return Err(Skip::file(
            path,
            SkipReason::TooLarge,
            format!("{what} more than the source's max_file_bytes ({max_bytes})"),
        ));
    }
    Ok(bytes)
}

/// Reads a regular file of at most `max_bytes` (after gunzipping `.gz`), decoding UTF-8
/// (invalid bytes replaced, with a warning). A file that cannot be read safely is the `Skip`
/// that says why; nothing but a regular file is ever read, and never more than `max_bytes + 1`
/// bytes of it.
pub fn read_file_capped(path: &Path, max_bytes: u64) -> std::result::Result<TextFile, Skip> {
    let bytes = read_bytes_capped(path, max_bytes)?;
    let raw_bytes = bytes.len() as u64;
    let (text, warning) = match String::from_utf8(bytes) {
        Ok(s) => (s, None),
        Err(e) => {
            let w = format!(
                "{}: not valid UTF-8 at byte {}; invalid bytes replaced",
                path.display(),
                e.utf8_error().valid_up_to()
            );
            (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(w))
        }
    };
    let text = match text.strip_prefix('\u{FEFF}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    Ok(TextFile {
        text,
        raw_bytes,
        warning,
    })
}

/// Reads a file, gunzipping `.gz`, decoding UTF-8 (invalid bytes replaced, with a warning);
/// a file that cannot be read safely is bad input naming it.
pub fn read_text_file(path: &Path, warn: &mut dyn FnMut(String)) -> Result<(String, u64)> {
    let f = read_file_capped(path, DEFAULT_MAX_FILE_BYTES).map_err(Skip::into_error)?;
    if let Some(w) = f.warning {
        warn(w);
    }
    Ok((f.text, f.raw_bytes))
}

/// Extensions the directory form reads.
pub const LOCAL_EXTS: &[&str] = &[
    ".txt",
    ".html",
    ".htm",
    ".wikitext",
    ".txt.gz",
    ".html.gz",
    ".htm.gz",
    ".wikitext.gz",
    ".pdf",
    ".docx",
    ".odt",
    ".epub",
];

impl LocalReader {
    fn collect_dir(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()> {
        let p = &self.path;
        let walked = walk(
            p,
            &WalkOptions {
                exts: LOCAL_EXTS,
                follow_links: self.opts.follow_links,
            },
        )?;
        for s in walked.skipped {
            notice(Notice::Skipped(s))?;
        }
        for file in walked.files {
            let state = match self.known.check(&file) {
                Check::Unchanged(s) => {
                    notice(Notice::Unchanged(s))?;
                    continue;
                }
                Check::Read(s) => s,
            };
            let rel = file.strip_prefix(p).unwrap_or(&file);
            let locator = rel.to_string_lossy().replace('\\', "/");
            if let Some(format) = DocFormat::from_name(&locator) {
                let bytes = match read_bytes_capped(&file, self.opts.max_file_bytes) {
                    Ok(b) => b,
                    Err(skip) => {
                        notice(Notice::Skipped(skip))?;
                        continue;
                    }
                };
                let (body, defect, warning) =
                    document_body(format, &bytes, &file.display().to_string());
                if let Some(w) = warning {
                    notice(Notice::Warning(w))?;
                }
                sink(RawDoc {
                    source: self.name.clone(),
                    source_rank: self.rank,
                    locator,
                    url: None,
                    title: None,
                    body,
                    payload: Payload::PlainText,
                    lang: None,
                    raw_bytes: bytes.len() as u64,
                    date: None,
                    document: Some(format),
                    defect,
                })?;
                if let Some(s) = state {
                    notice(Notice::Read(FileRead::whole(s)))?;
                }
                continue;
            }
            let f = match read_file_capped(&file, self.opts.max_file_bytes) {
                Ok(f) => f,
                Err(skip) => {
                    notice(Notice::Skipped(skip))?;
                    continue;
                }
            };
            if let Some(w) = f.warning {
                notice(Notice::Warning(w))?;
            }
            let lower = locator.to_ascii_lowercase();
            let payload = if lower.contains(".htm") {
                Payload::Html
            } else if lower.contains(".wikitext") {
                Payload::Wikitext
            } else {
                Payload::PlainText
            };
            sink(RawDoc {
                source: self.name.clone(),
                source_rank: self.rank,
                locator,
                url: None,
                title: None,
                body: f.text,
                payload,
                lang: None,
                raw_bytes: f.raw_bytes,
                date: None,
                document: None,
                defect: None,
            })?;
            if let Some(s) = state {
                notice(Notice::Read(FileRead::whole(s)))?;
            }
        }
        Ok(())
    }

    fn collect_jsonl(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()> {
        let p = &self.path;
        let state = match self.known.check(p) {
            Check::Unchanged(s) => return notice(Notice::Unchanged(s)),
            Check::Read(s) => s,
        };
        // Lines appended to a file read whole before: read on from where that read ended, the
        // ids read then standing in for the duplicate-id check.
        let appended = match &state {
            Some(now) => self.appended_since(now)?,
            None => None,
        };
        let earlier_ids = appended
            .and(state.as_ref())
            .and_then(|s| self.known.ids.get(&s.path));
        let span = Span {
            end: state.as_ref().map(|s| s.size),
            ..appended.unwrap_or(WHOLE)
        };
        let mut seen = std::collections::HashSet::new();
        let mut skipped = 0;
        let lines = jsonl_records_from(p, self.opts.max_file_bytes, span, |place, line| {
            let line_no = place.line_no;
            let doc = match line.and_then(|l| parse_json_record(p, line_no, l).map(|d| (d, l))) {
                Ok(d) => d,
                Err(skip) => {
                    skipped += 1;
                    return notice(Notice::Skipped(skip));
                }
            };
            let (doc, line) = doc;
            let id = doc.id.clone().into_string();
            let read_before = match earlier_ids {
                Some(earlier) => earlier.contains(&id)?,
                None => false,
            };
            if read_before || !seen.insert(id.clone()) {
                skipped += 1;
                return notice(Notice::Skipped(duplicate_id_skip(p, line_no, &id)));
            }
            sink(json_raw_doc(&self.name, self.rank, &id, doc, line))
        })?;
        // A file with a bad line is read whole again next time: its skips stay on record.
        match state {
            Some(mut s) if skipped == 0 => {
                let (mut file, _) = open_regular(p).map_err(Skip::into_error)?;
                let (crc32, _) = prefix_sample(&mut file, s.size)
                    .with_context(|| format!("{}: cannot read", p.display()))?;
                s.jsonl = Some(JsonlState { crc32, lines });
                notice(Notice::Read(FileRead {
                    state: s,
                    ids: seen.into_iter().collect(),
                    appended: appended.is_some(),
                }))
            }
            _ => Ok(()),
        }
    }

    /// Where to read on in a JSONL file that only had lines appended since a read took it whole
    /// (the sample of its first bytes is the one taken then, and they end a line); None when
    /// it must be read whole.
    fn appended_since(&self, now: &FileState) -> Result<Option<Span>> {
        let Some(was) = self.known.grown(now) else {
            return Ok(None);
        };
        let (Some(j), true) = (was.jsonl, self.known.ids.contains_key(&now.path)) else {
            return Ok(None);
        };
        let (mut file, _) = open_regular(&self.path).map_err(Skip::into_error)?;
        let (crc32, last) = prefix_sample(&mut file, was.size)
            .with_context(|| format!("{}: cannot read", self.path.display()))?;
        let same = crc32 == j.crc32 && last == Some(b'\n');
        Ok(same.then_some(Span {
            from: was.size,
            lines_before: j.lines,
            end: None,
        }))
    }
}

impl Reader for LocalReader {
    fn name(&self) -> &str {
        &self.name
    }

    fn pass_unchanged(&mut self, known: KnownFiles) {
        self.known = known;
    }

    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()> {
        let p = &self.path;
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => self.collect_dir(sink, notice),
            Ok(m) if m.is_file() => self.collect_jsonl(sink, notice),
            Ok(m) => Err(crate::error::bad_input(format!(
                "{}: {}, not a directory or a JSONL file (local source `{}`)",
                p.display(),
                kind_of(&m.file_type()),
                self.name
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(crate::error::bad_input(format!(
                    "{}: no such file or directory (local source `{}`)",
                    p.display(),
                    self.name
                )))
            }
            Err(e) => Err(anyhow::Error::new(e).context(format!(
                "{}: cannot open (local source `{}`)",
                p.display(),
                self.name
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(p: &Path) -> LocalReader {
        LocalReader::new("local".into(), 0, p.into(), LocalOptions::default())
    }

    /// Every line of `path` with its place, as [`for_each_jsonl_block`] gives them in blocks
    /// of about `block_bytes`.
    fn lines_in_blocks(path: &Path, block_bytes: usize) -> Result<Vec<(LinePlace, String)>> {
        let mut got = Vec::new();
        for_each_jsonl_block(path, block_bytes, |block| {
            for k in 0..block.places().len() {
                got.push((block.place(k), block.text(path, k)?.to_string()));
            }
            Ok(())
        })?;
        Ok(got)
    }

    #[test]
    fn blocks_of_lines_give_the_lines_and_places_a_line_at_a_time_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        // A byte order mark, CRLF endings, blank lines, text beyond ASCII, lines longer than
        // the smallest blocks, and no line break at the end.
        let long = "ж".repeat(40);
        let text = format!(
            "\u{FEFF}{{\"id\":\"a\"}}\r\n\n  \r\n{{\"id\":\"{long}\"}}\n\
             {{\"id\":\"c\"}}\r\r\n\t\n{{\"id\":\"d\"}}"
        );
        std::fs::write(&path, &text).unwrap();
        let mut want = Vec::new();
        for_each_jsonl_line_placed(&path, |place, line| {
            want.push((place, line.to_string()));
            Ok(())
        })
        .unwrap();
        assert_eq!(want.len(), 4);
        for block_bytes in [1, 2, 7, 16, 50, 1 << 20] {
            assert_eq!(
                lines_in_blocks(&path, block_bytes).unwrap(),
                want,
                "{block_bytes}"
            );
        }
        // A line read again at its place is the line.
        let mut again = JsonlBlock::default();
        let (mut file, _) = open_regular(&path).unwrap();
        again.read_line_at(&mut file, &path, want[1].0).unwrap();
        assert_eq!(again.text(&path, 0).unwrap(), want[1].1);
        // An empty file has no lines.
        std::fs::write(&path, "").unwrap();
        assert!(lines_in_blocks(&path, 4).unwrap().is_empty());
    }

    #[test]
    fn a_line_of_a_block_that_is_not_utf8_is_named_when_its_text_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        std::fs::write(&path, b"{\"id\":\"a\"}\n{\"id\":\"\xFF\"}\n").unwrap();
        let err = lines_in_blocks(&path, 1 << 20).unwrap_err();
        assert!(format!("{err:#}").contains("in.jsonl:2"), "{err:#}");
        assert!(
            format!("{err:#}").contains("in.jsonl:2:8: not valid UTF-8 (byte 8 of the line)"),
            "{err:#}"
        );
        let mut again = JsonlBlock::default();
        let (mut file, _) = open_regular(&path).unwrap();
        let place = LinePlace {
            line_no: 2,
            offset: 12,
            len: 10,
        };
        again.read_line_at(&mut file, &path, place).unwrap();
        let err = again.text(&path, 0).unwrap_err();
        assert!(
            format!("{err:#}").contains("in.jsonl:2: not valid UTF-8 when read again"),
            "{err:#}"
        );
    }

    fn sample_of(bytes: &[u8], size: u64) -> (u32, Option<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        std::fs::write(&p, bytes).unwrap();
        prefix_sample(&mut std::fs::File::open(&p).unwrap(), size).unwrap()
    }

    #[test]
    fn the_sample_of_a_small_file_is_its_crc_and_a_large_one_is_seen_at_both_ends_only_grown() {
        // Up to 2 MiB, the sample is every byte: a state an older collect wrote still matches.
        let small = b"{\"id\": \"a\"}\n".repeat(100);
        assert_eq!(
            sample_of(&small, small.len() as u64),
            (crc32fast::hash(&small), Some(b'\n'))
        );
        let big: Vec<u8> = (0..5_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let size = 4_000_000;
        let at_size = sample_of(&big, size);
        assert_eq!(
            sample_of(&big[..size as usize], size),
            at_size,
            "appending keeps it"
        );
        for edited in [
            0,
            size as usize - 1,
            size as usize / 2 - SAMPLE_BLOCK as usize / 2,
        ] {
            let mut changed = big.clone();
            changed[edited] = b'#';
            assert_ne!(
                sample_of(&changed, size),
                at_size,
                "byte {edited} is sampled"
            );
        }
        assert_ne!(sample_of(&big, size + 1), at_size);
    }

    /// Reads a source, collecting documents and skips (strict: the first skip is the error).
    fn collect_all(src: &LocalReader, strict: bool) -> Result<(Vec<RawDoc>, Vec<Skip>)> {
        let mut docs = Vec::new();
        let mut skips = Vec::new();
        src.collect(
            &mut |d| {
                docs.push(d);
                Ok(())
            },
            &mut |n| match n {
                Notice::Skipped(s) if strict => Err(s.into_error()),
                Notice::Skipped(s) => {
                    skips.push(s);
                    Ok(())
                }
                Notice::Warning(_) | Notice::Read(_) | Notice::Unchanged(_) => Ok(()),
            },
        )?;
        Ok((docs, skips))
    }

    fn collect(src: &LocalReader) -> Result<Vec<RawDoc>> {
        collect_all(src, true).map(|(d, _)| d)
    }

    #[test]
    fn reads_a_directory_sorted_with_formats() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.txt"), "плain текст").unwrap();
        std::fs::write(dir.path().join("sub/a.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.path().join("skip.pdf"), "x").unwrap();
        let docs = collect(&reader(dir.path())).unwrap();
        let got: Vec<(&str, &str, Option<crate::clean::Defect>)> = docs
            .iter()
            .map(|d| (d.locator.as_str(), d.format(), d.defect))
            .collect();
        // A document that is not one is still read: kept out later as corrupt.
        assert_eq!(
            got,
            vec![
                ("b.txt", "text", None),
                ("skip.pdf", "pdf", Some(crate::clean::Defect::Corrupt)),
                ("sub/a.html", "html", None)
            ]
        );
    }

    #[test]
    fn jsonl_bad_lines_are_skipped_with_their_place_or_stop_a_strict_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        let mut bytes =
            b"\xEF\xBB\xBF{\"id\": 1, \"text\": \"a\", \"url\": \"http://x/\"}\n\n".to_vec();
        bytes.extend_from_slice(b"{\"id\": \"b\", \"text\": 5}\n");
        bytes.extend_from_slice(b"{\"id\": \"c\", \"text\": \"caf\xE9\"}\n");
        bytes.extend_from_slice(b"{\"id\": \"d\"}\n");
        bytes.extend_from_slice(b"{\"id\": \"e\", \"text\": \"e\"\n");
        bytes.extend_from_slice(b"{\"id\": 1, \"text\": \"again\"}\n");
        bytes.extend_from_slice(b"{\"id\": \"f\", \"text\": \"f\"}");
        std::fs::write(&p, &bytes).unwrap();
        let (docs, skips) = collect_all(&reader(&p), false).unwrap();
        let ids: Vec<&str> = docs.iter().map(|d| d.body.as_str()).collect();
        assert_eq!(ids, ["a", "f"]);
        assert_eq!(docs[0].url.as_deref(), Some("http://x/"));
        let got: Vec<(Option<usize>, &str)> =
            skips.iter().map(|s| (s.line, s.reason.as_str())).collect();
        assert_eq!(
            got,
            [
                (Some(3), "bad-json"),
                (Some(4), "bad-utf8"),
                (Some(5), "missing-field"),
                (Some(6), "bad-json"),
                (Some(7), "duplicate-id"),
            ]
        );
        let e = collect(&reader(&p)).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        assert!(
            e.to_string()
                .starts_with(&format!("{}:3:21: invalid type", p.display())),
            "{e}"
        );
    }

    #[test]
    fn repeated_jsonl_id_stops_a_strict_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"a\",\"text\":\"y\"}\n",
        )
        .unwrap();
        let e = collect(&reader(&p)).unwrap_err();
        assert!(e.to_string().contains(":2: id `a` appears twice"), "{e}");
    }

    #[test]
    fn a_jsonl_line_over_the_cap_is_skipped_and_the_next_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        let long = format!("{{\"id\":\"l\",\"text\":\"{}\"}}\n", "x".repeat(200));
        std::fs::write(&p, format!("{long}{{\"id\":\"s\",\"text\":\"short\"}}\n")).unwrap();
        let src = LocalReader::new(
            "local".into(),
            0,
            p,
            LocalOptions {
                max_file_bytes: 100,
                ..LocalOptions::default()
            },
        );
        let (docs, skips) = collect_all(&src, false).unwrap();
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].body, "short");
        assert_eq!(
            (skips[0].line, skips[0].reason),
            (Some(1), SkipReason::TooLarge)
        );
    }

    #[test]
    fn files_over_the_cap_and_broken_gzip_are_skipped_and_boms_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("big.txt"), "x".repeat(2000)).unwrap();
        std::fs::write(d.join("bom.txt"), "\u{FEFF}hello").unwrap();
        std::fs::write(d.join("bad.txt.gz"), "not gzip at all").unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &[b'a'; 5000]).unwrap();
        std::fs::write(d.join("bomb.txt.gz"), gz.finish().unwrap()).unwrap();
        let src = LocalReader::new(
            "local".into(),
            0,
            d.into(),
            LocalOptions {
                max_file_bytes: 1000,
                ..LocalOptions::default()
            },
        );
        let (docs, skips) = collect_all(&src, false).unwrap();
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].body, "hello");
        let got: Vec<(String, SkipReason)> = skips
            .iter()
            .map(|s| {
                (
                    s.locator().rsplit('/').next().unwrap().to_string(),
                    s.reason,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("bad.txt.gz".to_string(), SkipReason::BadGzip),
                ("big.txt".to_string(), SkipReason::TooLarge),
                ("bomb.txt.gz".to_string(), SkipReason::TooLarge),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_given_as_the_source_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        assert!(std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap()
            .success());
        let e = collect(&reader(&p)).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        assert!(e.to_string().contains("a FIFO"), "{e}");
        // The opener refuses it too, should it be handed one directly.
        let s = read_file_capped(&p, 10).unwrap_err();
        assert_eq!(s.reason, SkipReason::NotRegularFile);
    }
}
