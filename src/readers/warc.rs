//! `warc`: web archives (WARC and WET files, plain or gzipped a record per member as Common
//! Crawl publishes them). `response` records whose HTTP payload is HTML or text, `resource`
//! records of those types and WET `conversion` records become documents with their
//! `WARC-Target-URI` and `WARC-Date`; `request`, `metadata`, `warcinfo`, `revisit` records and
//! payloads that are not text (images, scripts) are passed over and only counted.
//!
//! A hand parser rather than the `warc` crate: that crate decompresses a whole `.warc.gz` as
//! one stream (libflate's multi-member decoder), so it can name no record's compressed offset
//! and one corrupt member ends the file; it reads a header with an unbounded `read_until`, so a
//! header without its blank line takes the rest of the file into memory; and it has no resync.
//! The framing that is needed (a version line, `Name: value` lines, `Content-Length` bytes, a
//! blank line) is small.
//!
//! Memory stays bounded whatever the archive's size: records are read one at a time from a
//! `BufRead`, a block over `max_record_bytes` is read over without being kept, and a header is
//! capped. A record that does not parse is a [`SkipReason::BadRecord`] at the byte offset of its
//! gzip member (or record, uncompressed) and the reader resyncs at the next member (or the next
//! `WARC/1.` line).

use super::documents::DocFormat;
use super::local::open_regular;
use super::walk::{walk, WalkOptions};
use super::{
    document_body, Check, FileRead, KnownFiles, Notice, Payload, RawDoc, Reader, Skip, SkipReason,
};
use crate::acquire::charset;
use anyhow::Result;
use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Records whose block is larger than this are skipped unless the source sets
/// `max_record_bytes` (Common Crawl itself truncates payloads at 1 MiB).
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 16 << 20;

/// Largest WARC or HTTP header read: real ones are a few hundred bytes.
const MAX_HEADER_BYTES: u64 = 64 << 10;

/// File-name endings a directory of archives is walked for.
pub const WARC_EXTS: &[&str] = &[".warc", ".warc.gz", ".wet", ".wet.gz"];

/// How a warc source reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarcOptions {
    /// Follow symbolic links whose target lies outside a walked directory.
    pub follow_links: bool,
    /// Largest record block read; larger records are read over and skipped as too large.
    pub max_record_bytes: u64,
}

impl Default for WarcOptions {
    fn default() -> Self {
        WarcOptions {
            follow_links: false,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
        }
    }
}

/// A document record as an archive gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveDoc {
    /// Byte offset of its gzip member, or of the record in an uncompressed file.
    pub offset: u64,
    /// Position of the record inside its gzip member (0 but for archives that gzip several
    /// records per member).
    pub index: usize,
    /// `WARC-Target-URI`.
    pub url: Option<String>,
    /// `WARC-Date`, as written.
    pub date: Option<String>,
    /// What the body is.
    pub payload: Payload,
    /// The payload, decoded to text.
    pub body: String,
    /// Size of the payload as stored.
    pub raw_bytes: u64,
    /// A document record (PDF, DOCX, ODT, EPUB): its format and bytes, which the reader turns
    /// into `body` the way local documents are (`readers::document_body`).
    pub document: Option<(DocFormat, Vec<u8>)>,
}

/// Why a well-formed record is not a document. Not a loss: counted, never reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passed {
    /// A `request`, `metadata`, `warcinfo`, `revisit` (or other non-content) record.
    NotContent,
    /// A payload that is not text: an image, a script, a style sheet.
    NotText,
    /// An HTTP response other than 2xx (redirects, errors).
    NotOk,
}

/// What reading an archive meets, record by record.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A document.
    Doc(ArchiveDoc),
    /// A record (or file) that could not be read.
    Skipped(Skip),
    /// A record that is not a document.
    Passed(Passed),
}

/// Records read by a warc source, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WarcCounts {
    /// Documents delivered.
    pub documents: u64,
    /// `request`, `metadata`, `warcinfo`, `revisit` and other non-content records.
    pub not_content: u64,
    /// Payloads that are not text.
    pub not_text: u64,
    /// Responses other than 2xx.
    pub not_ok: u64,
    /// Records and files skipped.
    pub skipped: u64,
}

/// A `warc` source: archive files, directories of them, or a list of either.
pub struct WarcReader {
    name: String,
    rank: u32,
    /// Each path resolved, with the path as the topic wrote it (the stable base of locators).
    paths: Vec<(PathBuf, String)>,
    opts: WarcOptions,
    counts: Cell<WarcCounts>,
    known: KnownFiles,
}

impl WarcReader {
    /// A warc source over `paths` (resolved, each with its spelling in the topic).
    pub fn new(name: String, rank: u32, paths: Vec<(PathBuf, String)>, opts: WarcOptions) -> Self {
        WarcReader {
            name,
            rank,
            paths,
            opts,
            counts: Cell::new(WarcCounts::default()),
            known: KnownFiles::default(),
        }
    }

    /// Every archive file of the source with its label (the base of its documents' locators),
    /// as `collect` reads them; what the walk refuses goes to `notice`.
    pub fn archive_files(
        &self,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<Vec<(PathBuf, String)>> {
        let mut out = Vec::new();
        for (path, label) in &self.paths {
            out.extend(self.files_of(path, label, notice)?);
        }
        Ok(out)
    }

    /// What the last `collect` read, by outcome.
    pub fn counts(&self) -> WarcCounts {
        self.counts.get()
    }

    /// The archive files of one configured path: itself, or a directory's archives by the
    /// safe walk (its refusals reported).
    fn files_of(
        &self,
        path: &Path,
        label: &str,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<Vec<(PathBuf, String)>> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                let walked = walk(
                    path,
                    &WalkOptions {
                        exts: WARC_EXTS,
                        follow_links: self.opts.follow_links,
                    },
                )?;
                for s in walked.skipped {
                    notice(Notice::Skipped(s))?;
                }
                let base = label.trim_end_matches('/');
                Ok(walked
                    .files
                    .into_iter()
                    .map(|f| {
                        let rel = f.strip_prefix(path).unwrap_or(&f);
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        (f.clone(), format!("{base}/{rel}"))
                    })
                    .collect())
            }
            Ok(_) => Ok(vec![(path.to_path_buf(), label.to_string())]),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(crate::error::bad_input(format!(
                "{}: no such file or directory (warc source `{}`)",
                path.display(),
                self.name
            ))),
            Err(e) => Err(anyhow::Error::new(e).context(format!(
                "{}: cannot open (warc source `{}`)",
                path.display(),
                self.name
            ))),
        }
    }
}

impl Reader for WarcReader {
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
        let mut counts = WarcCounts::default();
        for (path, label) in &self.paths {
            for (file, label) in self.files_of(path, label, notice)? {
                let state = match self.known.check(&file) {
                    Check::Unchanged(s) => {
                        notice(Notice::Unchanged(s))?;
                        continue;
                    }
                    Check::Read(s) => s,
                };
                let skipped_before = counts.skipped;
                read_archive(&file, self.opts.max_record_bytes, &mut |ev| match ev {
                    Event::Doc(d) => {
                        counts.documents += 1;
                        sink(archive_raw_doc(d, &self.name, self.rank, &label, notice)?)
                    }
                    Event::Skipped(s) => {
                        counts.skipped += 1;
                        notice(Notice::Skipped(s))
                    }
                    Event::Passed(p) => {
                        match p {
                            Passed::NotContent => counts.not_content += 1,
                            Passed::NotText => counts.not_text += 1,
                            Passed::NotOk => counts.not_ok += 1,
                        }
                        Ok(())
                    }
                })?;
                self.counts.set(counts);
                // An archive with a bad record is read again next time, so its skips stay on
                // record.
                if let Some(s) = state.filter(|_| counts.skipped == skipped_before) {
                    notice(Notice::Read(FileRead::whole(s)))?;
                }
            }
        }
        self.counts.set(counts);
        Ok(())
    }
}

/// The document a record of the archive labelled `label` gives, as the source `name` of rank
/// `rank` delivers it (its locator: the label and the record's offset).
pub fn archive_raw_doc(
    d: ArchiveDoc,
    name: &str,
    rank: u32,
    label: &str,
    notice: &mut dyn FnMut(Notice) -> Result<()>,
) -> Result<RawDoc> {
    let locator = match d.index {
        0 => format!("{label}@{}", d.offset),
        k => format!("{label}@{}#{k}", d.offset),
    };
    let (body, document, defect) = match d.document {
        Some((format, bytes)) => {
            let (body, defect, warning) = document_body(format, &bytes, &locator);
            if let Some(w) = warning {
                notice(Notice::Warning(w))?;
            }
            (body, Some(format), defect)
        }
        None => (d.body, None, None),
    };
    Ok(RawDoc {
        source: name.to_string(),
        source_rank: rank,
        locator,
        url: d.url,
        title: None,
        body,
        payload: d.payload,
        lang: None,
        raw_bytes: d.raw_bytes,
        date: d.date,
        document,
        defect,
    })
}

/// A `BufRead` that knows how many bytes were consumed from it: the offsets of records.
struct Counted<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.inner.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.pos += n as u64;
    }
}

impl<R: BufRead + Seek> Counted<R> {
    fn seek_to(&mut self, pos: u64) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(pos))?;
        self.pos = pos;
        Ok(())
    }

    /// Refills the buffer from the current place; false (the rest consumed) when fewer than
    /// `need` bytes are left in the file.
    fn refill(&mut self, need: usize) -> io::Result<bool> {
        let p = self.pos;
        self.seek_to(p)?;
        let n = self.inner.fill_buf()?.len();
        if n < need {
            self.consume(n);
            return Ok(false);
        }
        Ok(true)
    }

    /// Moves to the first place at or after the current one where `starts(bytes)` holds for
    /// the `need` bytes there (the first of which is `first`); false at the end of the file.
    fn scan_to(
        &mut self,
        first: u8,
        need: usize,
        starts: impl Fn(&[u8]) -> bool,
    ) -> io::Result<bool> {
        loop {
            let (found, partial, n) = {
                let buf = self.inner.fill_buf()?;
                if buf.len() < need {
                    // Too few bytes buffered to judge: either the end of the file is near, or
                    // the buffer happens to end here; a seek refills it from this place.
                    if !self.refill(need)? {
                        return Ok(false);
                    }
                    continue;
                }
                let mut i = 0;
                let mut found = None;
                let mut partial = None;
                while let Some(j) = buf[i..].iter().position(|&b| b == first) {
                    let at = i + j;
                    if at + need > buf.len() {
                        partial = Some(at);
                        break;
                    }
                    if starts(&buf[at..at + need]) {
                        found = Some(at);
                        break;
                    }
                    i = at + 1;
                }
                (found, partial, buf.len())
            };
            match (found, partial) {
                (Some(at), _) => {
                    self.consume(at);
                    return Ok(true);
                }
                (None, Some(at)) => {
                    self.consume(at);
                    if !self.refill(need)? {
                        return Ok(false);
                    }
                    if starts(&self.inner.fill_buf()?[..need]) {
                        return Ok(true);
                    }
                    self.consume(1);
                }
                (None, None) => self.consume(n),
            }
        }
    }
}

/// A gzip member header: magic, deflate, no reserved flag bits.
fn gzip_start(b: &[u8]) -> bool {
    b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 && b[3] & 0xE0 == 0
}

/// Reads one archive file, handing each record's outcome to `event`; an error `event` returns
/// (a strict run's first skip) ends the reading with it.
pub fn read_archive(
    path: &Path,
    max_record_bytes: u64,
    event: &mut dyn FnMut(Event) -> Result<()>,
) -> Result<()> {
    let file = match open_regular(path) {
        Ok((f, _)) => f,
        Err(s) => return event(Event::Skipped(s)),
    };
    read_archive_from(
        BufReader::with_capacity(256 << 10, file),
        path,
        max_record_bytes,
        event,
    )
}

/// [`read_archive`] over an archive's bytes from any seekable reader (a distributed run's
/// worker gets the archive on stdin); `path` names it in skips.
pub fn read_archive_from(
    inner: impl BufRead + Seek,
    path: &Path,
    max_record_bytes: u64,
    event: &mut dyn FnMut(Event) -> Result<()>,
) -> Result<()> {
    let mut src = Counted { inner, pos: 0 };
    let gz = match src.fill_buf() {
        Ok(b) => b.starts_with(&[0x1f, 0x8b]),
        Err(e) => {
            return event(Event::Skipped(Skip::file(
                path,
                SkipReason::Unreadable,
                format!("cannot read: {e}"),
            )))
        }
    };
    let unreadable = |e: io::Error, at: u64| {
        Event::Skipped(Skip::at_offset(
            path,
            at,
            SkipReason::Unreadable,
            format!("cannot read: {e}"),
        ))
    };
    let mut ctx = Ctx {
        path,
        cap: max_record_bytes,
        event,
    };
    loop {
        let off = src.pos;
        match src.fill_buf() {
            Ok([]) => return Ok(()),
            Ok(_) => {}
            Err(e) => return (ctx.event)(unreadable(e, off)),
        }
        let outcome = if gz {
            read_member(&mut src, off, &mut ctx)?
        } else {
            match skip_blank(&mut src) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return (ctx.event)(unreadable(e, off)),
            }
            let off = src.pos;
            read_one(&mut src, off, 0, &mut ctx)?.map_err(|d| (off, d))
        };
        if let Err((at, detail)) = outcome {
            (ctx.event)(Event::Skipped(Skip::at_offset(
                path,
                at,
                SkipReason::BadRecord,
                detail,
            )))?;
            let found = src.seek_to(at + 1).and_then(|()| {
                if gz {
                    src.scan_to(0x1f, 4, gzip_start)
                } else {
                    src.scan_to(b'\n', 8, |b| b == b"\nWARC/1.")
                        .inspect(|&found| {
                            if found {
                                // Past the line end, onto `WARC/1.`.
                                src.consume(1);
                            }
                        })
                }
            });
            match found {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => return (ctx.event)(unreadable(e, at)),
            }
        }
    }
}

/// What reading an archive file carries along.
struct Ctx<'a> {
    path: &'a Path,
    cap: u64,
    event: &'a mut dyn FnMut(Event) -> Result<()>,
}

/// Reads the records of the gzip member at `off`. The outer error is the callback's; the inner
/// one says why the member is bad (its records not yet delivered are lost with it).
fn read_member<R: BufRead>(
    src: &mut Counted<R>,
    off: u64,
    ctx: &mut Ctx<'_>,
) -> Result<std::result::Result<(), (u64, String)>> {
    let mut rec = BufReader::with_capacity(64 << 10, flate2::bufread::GzDecoder::new(src));
    let bad = |e: io::Error| Err((off, format!("corrupt or truncated gzip member: {e}")));
    match skip_blank(&mut rec) {
        Ok(true) => return Ok(Ok(())),
        Ok(false) => {}
        Err(e) => return Ok(bad(e)),
    }
    let mut index = 0;
    loop {
        let ready = match read_record(&mut rec, ctx.cap) {
            Ok(r) => r,
            Err(RecordError::Io(e)) => return Ok(bad(e)),
            Err(RecordError::Bad(d)) => return Ok(Err((off, d))),
        };
        // The member must end cleanly (its CRC checked) before its record counts: a record
        // whose member is cut or corrupt is not delivered, even if its bytes decoded.
        let end = match skip_blank(&mut rec) {
            Ok(end) => end,
            Err(e) => return Ok(bad(e)),
        };
        (ctx.event)(into_event(ready, ctx.path, off, index, ctx.cap))?;
        if end {
            return Ok(Ok(()));
        }
        index += 1;
    }
}

/// Reads the uncompressed record at `off` (its `index` in a member).
fn read_one<R: BufRead>(
    src: &mut R,
    off: u64,
    index: usize,
    ctx: &mut Ctx<'_>,
) -> Result<std::result::Result<(), String>> {
    match read_record(src, ctx.cap) {
        Ok(r) => {
            (ctx.event)(into_event(r, ctx.path, off, index, ctx.cap))?;
            Ok(Ok(()))
        }
        Err(RecordError::Io(e)) => Ok(Err(format!("cannot read the record: {e}"))),
        Err(RecordError::Bad(d)) => Ok(Err(d)),
    }
}

/// Consumes blank lines between records; true at the end of the stream.
fn skip_blank(r: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let n = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if n == 0 {
            return Ok(false);
        }
        r.consume(n);
    }
}

enum RecordError {
    /// The stream failed (a gzip member that does not decompress, an IO error).
    Io(io::Error),
    /// The record's framing is wrong.
    Bad(String),
}

impl From<io::Error> for RecordError {
    fn from(e: io::Error) -> Self {
        RecordError::Io(e)
    }
}

/// A record read whole, or how it was passed over.
enum Ready {
    Record(Record),
    Passed(Passed),
    TooLarge(u64),
}

/// A content record: the WARC fields a document needs and its block.
struct Record {
    kind: String,
    uri: Option<String>,
    date: Option<String>,
    content_type: Option<String>,
    identified_type: Option<String>,
    block: Vec<u8>,
}

/// Reads one line of at most `limit` bytes (without its line end); None at the end of the
/// stream.
fn read_line(
    r: &mut impl BufRead,
    limit: u64,
) -> std::result::Result<Option<Vec<u8>>, RecordError> {
    let mut line = Vec::new();
    let n = r.take(limit).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if !line.ends_with(b"\n") {
        if n as u64 >= limit {
            return Err(RecordError::Bad(format!(
                "header longer than {MAX_HEADER_BYTES} bytes"
            )));
        }
        return Err(RecordError::Bad("header cut by the end of the data".into()));
    }
    line.pop();
    if line.ends_with(b"\r") {
        line.pop();
    }
    Ok(Some(line))
}

/// Reads `len` bytes without keeping them; how many there were.
fn read_over(r: &mut impl BufRead, len: u64) -> io::Result<u64> {
    io::copy(&mut r.take(len), &mut io::sink())
}

/// Reads the record starting here (after any blank lines): header, block, the blank lines
/// that end it.
fn read_record(r: &mut impl BufRead, cap: u64) -> std::result::Result<Ready, RecordError> {
    let bad = |s: String| Err(RecordError::Bad(s));
    let mut budget = MAX_HEADER_BYTES;
    let Some(version) = read_line(r, budget)? else {
        return bad("empty record".into());
    };
    if !version.starts_with(b"WARC/") {
        let shown: String = String::from_utf8_lossy(&version[..version.len().min(40)]).into();
        return bad(format!("not a WARC record: starts with {shown:?}"));
    }
    budget -= version.len() as u64;
    let mut fields: Vec<(String, String)> = Vec::new();
    loop {
        let Some(line) = read_line(r, budget.max(1))? else {
            return bad("header cut by the end of the data".into());
        };
        budget = budget.saturating_sub(line.len() as u64 + 2);
        if line.is_empty() {
            break;
        }
        if budget == 0 {
            return bad(format!("header longer than {MAX_HEADER_BYTES} bytes"));
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        if line.starts_with([' ', '\t']) {
            match fields.last_mut() {
                Some((_, v)) => {
                    v.push(' ');
                    v.push_str(line.trim());
                }
                None => return bad("header starts with a continuation line".into()),
            }
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            return bad(format!(
                "header line without a colon: {:?}",
                truncate(&line)
            ));
        };
        fields.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let Some(len) = field("content-length") else {
        return bad("no Content-Length".into());
    };
    let Ok(len) = len.parse::<u64>() else {
        return bad(format!(
            "Content-Length {:?} is not a number",
            truncate(&len)
        ));
    };
    let kind = field("warc-type").unwrap_or_default().to_ascii_lowercase();
    let content = matches!(kind.as_str(), "response" | "resource" | "conversion");
    let ready = if !content || len > cap {
        let got = read_over(r, len)?;
        if got < len {
            return bad(format!("block cut after {got} of its {len} bytes"));
        }
        if content {
            Ready::TooLarge(len)
        } else {
            Ready::Passed(Passed::NotContent)
        }
    } else {
        let mut block = Vec::with_capacity(len.min(1 << 20) as usize);
        r.take(len).read_to_end(&mut block)?;
        if (block.len() as u64) < len {
            return bad(format!(
                "block cut after {} of its {len} bytes",
                block.len()
            ));
        }
        Ready::Record(Record {
            kind,
            uri: field("warc-target-uri").map(|u| u.trim_matches(['<', '>']).to_string()),
            date: field("warc-date"),
            content_type: field("content-type"),
            identified_type: field("warc-identified-payload-type"),
            block,
        })
    };
    end_of_record(r, len)?;
    Ok(ready)
}

/// Consumes the blank lines after a block; a record followed by anything else did not end
/// where its Content-Length says.
fn end_of_record(r: &mut impl BufRead, len: u64) -> std::result::Result<(), RecordError> {
    let mut newlines = 0;
    for _ in 0..4 {
        let buf = r.fill_buf()?;
        match buf.first() {
            None => return Ok(()),
            Some(b'\n') => newlines += 1,
            Some(b'\r') => {}
            Some(_) => break,
        }
        r.consume(1);
    }
    if newlines >= 2 || r.fill_buf()?.is_empty() {
        Ok(())
    } else {
        Err(RecordError::Bad(format!(
            "the record does not end where its Content-Length ({len}) says"
        )))
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Media types of documents another reader will turn into text (PDF, office formats).
fn document_format(media: &str) -> bool {
    media == "application/pdf"
        || media == "application/msword"
        || media == "application/rtf"
        || media == "text/rtf"
        || media == "application/epub+zip"
        || media.starts_with("application/vnd.openxmlformats-officedocument.")
        || media.starts_with("application/vnd.oasis.opendocument.")
        || media.starts_with("application/vnd.ms-")
}

/// The outcome of a record read whole.
fn into_event(ready: Ready, path: &Path, off: u64, index: usize, cap: u64) -> Event {
    let skip = |reason, detail: String| Event::Skipped(Skip::at_offset(path, off, reason, detail));
    let rec = match ready {
        Ready::Passed(p) => return Event::Passed(p),
        Ready::TooLarge(len) => {
            return skip(
                SkipReason::TooLarge,
                format!("record of {len} bytes, more than the source's max_record_bytes ({cap})"),
            )
        }
        Ready::Record(r) => r,
    };
    let record_type = rec.content_type.clone().unwrap_or_default();
    let http = rec.kind == "response"
        && record_type
            .to_ascii_lowercase()
            .starts_with("application/http");
    let (content_type, body) = if http {
        match http_payload(&rec.block, cap) {
            Ok(HttpPayload::Body { content_type, body }) => (content_type, body),
            Ok(HttpPayload::NotOk) => return Event::Passed(Passed::NotOk),
            Err((reason, detail)) => return skip(reason, detail),
        }
    } else if rec.kind == "response" {
        // dns: and other non-HTTP responses.
        return Event::Passed(Passed::NotText);
    } else {
        (record_type, rec.block)
    };
    let declared = if content_type.is_empty() {
        rec.identified_type.clone().unwrap_or_default()
    } else {
        content_type
    };
    let media = declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let payload = match media.as_str() {
        "text/html" | "application/xhtml+xml" => Payload::Html,
        "text/plain" => Payload::PlainText,
        "" => {
            let head: Vec<u8> = body
                .iter()
                .skip_while(|b| b.is_ascii_whitespace())
                .take(14)
                .map(u8::to_ascii_lowercase)
                .collect();
            if head.starts_with(b"<!doctype html") || head.starts_with(b"<html") {
                Payload::Html
            } else {
                Payload::PlainText
            }
        }
        m if document_format(m) => {
            let Some(format) = DocFormat::from_content_type(m).or_else(|| DocFormat::sniff(&body))
            else {
                return skip(
                    SkipReason::UnsupportedFormat,
                    format!("{m} record: no reader turns this format into text"),
                );
            };
            return Event::Doc(ArchiveDoc {
                offset: off,
                index,
                url: rec.uri,
                date: rec.date,
                payload: Payload::PlainText,
                raw_bytes: body.len() as u64,
                body: String::new(),
                document: Some((format, body)),
            });
        }
        _ => return Event::Passed(Passed::NotText),
    };
    let tld = rec
        .uri
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_string))
        .and_then(|h| h.rsplit('.').next().map(str::to_string));
    let decoded = charset::decode(&body, &declared, payload == Payload::Html, tld.as_deref());
    Event::Doc(ArchiveDoc {
        offset: off,
        index,
        url: rec.uri,
        date: rec.date,
        payload,
        raw_bytes: body.len() as u64,
        body: decoded.text,
        document: None,
    })
}

enum HttpPayload {
    Body { content_type: String, body: Vec<u8> },
    NotOk,
}

/// The body of an HTTP response block, de-chunked and decompressed, with its Content-Type.
fn http_payload(block: &[u8], cap: u64) -> std::result::Result<HttpPayload, (SkipReason, String)> {
    let bad = |d: String| (SkipReason::BadRecord, format!("HTTP payload: {d}"));
    let head_end = find(block, b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| find(block, b"\n\n").map(|i| (i, i + 2)))
        .ok_or_else(|| bad("no end of the HTTP header".into()))?;
    let head = String::from_utf8_lossy(&block[..head_end.0]);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.split_whitespace();
    let proto = parts.next().unwrap_or_default();
    let status = parts.next().and_then(|s| s.parse::<u16>().ok());
    let Some(status) = status.filter(|_| proto.starts_with("HTTP/")) else {
        return Err(bad(format!("status line {:?}", truncate(status_line))));
    };
    if !(200..300).contains(&status) {
        return Ok(HttpPayload::NotOk);
    }
    let mut content_type = String::new();
    let mut chunked = false;
    let mut encoding = String::new();
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            return Err(bad(format!("header line {:?}", truncate(line))));
        };
        let v = v.trim();
        match k.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = v.to_string(),
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "content-encoding" => encoding = v.to_ascii_lowercase(),
            _ => {}
        }
    }
    let raw = &block[head_end.1..];
    let body = if chunked {
        dechunk(raw).map_err(bad)?
    } else {
        raw.to_vec()
    };
    let body = match encoding.as_str() {
        "" | "identity" => body,
        "gzip" | "x-gzip" | "deflate" => {
            let mut out = Vec::new();
            let limited = cap.saturating_add(1);
            let r = if encoding == "deflate" {
                flate2::read::ZlibDecoder::new(&body[..])
                    .take(limited)
                    .read_to_end(&mut out)
            } else {
                flate2::read::GzDecoder::new(&body[..])
                    .take(limited)
                    .read_to_end(&mut out)
            };
            r.map_err(|e| bad(format!("{encoding} body does not decompress: {e}")))?;
            if out.len() as u64 > cap {
                return Err((
                    SkipReason::TooLarge,
                    format!("{encoding} body decompresses to more than the source's max_record_bytes ({cap})"),
                ));
            }
            out
        }
        other => {
            return Err((
                SkipReason::UnsupportedFormat,
                format!("content encoding {other:?}"),
            ))
        }
    };
    Ok(HttpPayload::Body { content_type, body })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Joins the chunks of a chunked body.
fn dechunk(mut b: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let nl = find(b, b"\n").ok_or("chunk size line without an end")?;
        let line = String::from_utf8_lossy(&b[..nl]);
        let hex = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(hex, 16)
            .map_err(|_| format!("chunk size {:?} is not hexadecimal", truncate(hex)))?;
        b = &b[nl + 1..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size {
            return Err(format!("a chunk of {size} bytes runs past the body"));
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size..];
        b = b
            .strip_prefix(b"\r\n")
            .or_else(|| b.strip_prefix(b"\n"))
            .unwrap_or(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/warc")
            .join(name)
    }

    /// Members of `pages.warc.gz`: the offsets `scripts/make_warc_fixtures.py` printed.
    const RESPONSES: [u64; 4] = [622, 13657, 67862, 76656];
    const PDF: u64 = 90151;

    /// Text documents, skips and passed records (document records: [`document_records`]).
    fn events(path: &Path, cap: u64) -> (Vec<ArchiveDoc>, Vec<Skip>, Vec<Passed>) {
        let (mut docs, mut skips, mut passed) = (Vec::new(), Vec::new(), Vec::new());
        read_archive(path, cap, &mut |e| {
            match e {
                Event::Doc(d) if d.document.is_some() => {}
                Event::Doc(d) => docs.push(d),
                Event::Skipped(s) => skips.push(s),
                Event::Passed(p) => passed.push(p),
            }
            Ok(())
        })
        .unwrap();
        (docs, skips, passed)
    }

    fn document_records(path: &Path) -> Vec<ArchiveDoc> {
        let mut docs = Vec::new();
        read_archive(path, DEFAULT_MAX_RECORD_BYTES, &mut |e| {
            if let Event::Doc(d) = e {
                if d.document.is_some() {
                    docs.push(d);
                }
            }
            Ok(())
        })
        .unwrap();
        docs
    }

    fn skip_places(skips: &[Skip]) -> Vec<(Option<u64>, SkipReason)> {
        skips.iter().map(|s| (s.offset, s.reason)).collect()
    }

    #[test]
    fn a_per_record_gzip_warc_gives_its_responses_with_member_offsets() {
        let (docs, skips, passed) = events(&fixture("pages.warc.gz"), DEFAULT_MAX_RECORD_BYTES);
        let offs: Vec<u64> = docs.iter().map(|d| d.offset).collect();
        assert_eq!(offs, RESPONSES);
        assert_eq!(
            docs[0].url.as_deref(),
            Some("https://docs.python.org/3/library/os.path.html")
        );
        assert_eq!(docs[0].date.as_deref(), Some("2024-03-01T10:00:00Z"));
        let kinds: Vec<Payload> = docs.iter().map(|d| d.payload).collect();
        assert_eq!(
            kinds,
            [
                Payload::Html,
                Payload::Html,
                Payload::PlainText,
                Payload::PlainText
            ]
        );
        assert!(docs[0].body.contains("os.path"), "HTTP header stripped");
        assert!(!docs[0].body.starts_with("HTTP/"));
        assert!(docs[3].body.contains("Литва"), "UTF-8 decoded");
        assert!(skips.is_empty(), "{skips:?}");
        // The PDF response goes to the document reader with its bytes.
        let pdfs = document_records(&fixture("pages.warc.gz"));
        assert_eq!(pdfs.len(), 1);
        assert_eq!(pdfs[0].offset, PDF);
        let (format, bytes) = pdfs[0].document.as_ref().unwrap();
        assert_eq!(*format, DocFormat::Pdf);
        assert!(bytes.starts_with(b"%PDF-"));
        // warcinfo, four requests; the redirect.
        assert_eq!(
            passed.iter().filter(|p| **p == Passed::NotContent).count(),
            5
        );
        assert_eq!(passed.iter().filter(|p| **p == Passed::NotOk).count(), 1);
    }

    #[test]
    fn an_uncompressed_warc_reads_the_same_documents_at_record_offsets() {
        let (gz, _, _) = events(&fixture("pages.warc.gz"), DEFAULT_MAX_RECORD_BYTES);
        let (plain, skips, _) = events(&fixture("pages.warc"), DEFAULT_MAX_RECORD_BYTES);
        let bodies = |d: &[ArchiveDoc]| d.iter().map(|d| d.body.clone()).collect::<Vec<_>>();
        assert_eq!(bodies(&plain), bodies(&gz));
        let bytes = std::fs::read(fixture("pages.warc")).unwrap();
        for d in &plain {
            assert!(bytes[d.offset as usize..].starts_with(b"WARC/1.0\r\n"));
        }
        assert!(skips.is_empty(), "{skips:?}");
        assert_eq!(document_records(&fixture("pages.warc")).len(), 1);
    }

    #[test]
    fn wet_conversion_records_are_plain_text_documents() {
        let (docs, skips, passed) = events(&fixture("articles.wet.gz"), DEFAULT_MAX_RECORD_BYTES);
        assert!(skips.is_empty());
        assert_eq!(passed, [Passed::NotContent]);
        assert_eq!(docs.len(), 2);
        assert!(docs.iter().all(|d| d.payload == Payload::PlainText));
        assert_eq!(
            docs[0].url.as_deref(),
            Some("https://en.wikipedia.org/wiki/Aardvark")
        );
        assert!(docs[0].body.contains("aardvark"));
    }

    #[test]
    fn bad_records_are_skipped_at_their_offset_and_the_reader_resyncs() {
        let cap = DEFAULT_MAX_RECORD_BYTES;
        let bad = |name: &str| events(&fixture(&format!("corrupt/{name}")), cap);
        let offsets = |docs: &[ArchiveDoc]| docs.iter().map(|d| d.offset).collect::<Vec<_>>();

        let (docs, skips, _) = bad("truncated-member.warc.gz");
        assert_eq!(docs.len(), 3);
        assert_eq!(
            skip_places(&skips)[0],
            (Some(RESPONSES[1]), SkipReason::BadRecord)
        );
        assert!(skips[0].detail.contains("gzip"), "{}", skips[0].detail);

        let (docs, skips, _) = bad("garbage-between.warc.gz");
        assert_eq!(docs.len(), 4);
        assert_eq!(offsets(&docs)[..2], RESPONSES[..2]);
        // The garbage sits where the Aardvark response member was: it moved by the junk's size.
        assert_eq!(
            skip_places(&skips)[0],
            (Some(RESPONSES[2]), SkipReason::BadRecord)
        );
        assert_eq!(docs[2].offset, RESPONSES[2] + 20 * 28);

        let (docs, skips, _) = bad("wrong-length.warc.gz");
        assert_eq!(docs.len(), 3);
        assert_eq!(
            skip_places(&skips)[0],
            (Some(RESPONSES[0]), SkipReason::BadRecord)
        );
        assert!(
            skips[0].detail.contains("Content-Length"),
            "{}",
            skips[0].detail
        );

        let (docs, skips, _) = bad("bad-header.warc");
        assert_eq!(docs.len(), 3);
        assert_eq!(skips[0].reason, SkipReason::BadRecord);
        assert!(skips[0].detail.contains("colon"), "{}", skips[0].detail);
    }

    fn record(kind: &str, ctype: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: http://x.test/\r\nWARC-Date: 2020-01-01T00:00:00Z\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_record_over_the_cap_is_read_over_and_the_next_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = record("conversion", "text/plain", &vec![b'a'; 3 << 20]);
        let small = record("conversion", "text/plain", b"small text");
        let mut plain = big.clone();
        plain.extend_from_slice(&small);
        let mut packed = gz(&big);
        let second = packed.len() as u64;
        packed.extend_from_slice(&gz(&small));
        for (name, bytes, at) in [
            ("a.wet", plain, big.len() as u64),
            ("a.wet.gz", packed, second),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let (docs, skips, _) = events(&p, 1 << 20);
            assert_eq!(
                skip_places(&skips),
                [(Some(0), SkipReason::TooLarge)],
                "{name}"
            );
            assert_eq!(docs.len(), 1, "{name}");
            assert_eq!((docs[0].offset, docs[0].body.as_str()), (at, "small text"));
        }
    }

    #[test]
    fn http_payloads_chunked_or_gzipped_are_decoded_and_broken_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let chunked = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        let mut zipped =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
                .to_vec();
        zipped.extend_from_slice(&gz(b"<p>zipped</p>"));
        let broken = b"not http at all\r\n\r\nbody";
        let image = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG";
        let mut bytes = Vec::new();
        for block in [&chunked[..], &zipped, broken, image] {
            bytes.extend(gz(&record(
                "response",
                "application/http; msgtype=response",
                block,
            )));
        }
        let p = dir.path().join("h.warc.gz");
        std::fs::write(&p, bytes).unwrap();
        let (docs, skips, passed) = events(&p, DEFAULT_MAX_RECORD_BYTES);
        let bodies: Vec<&str> = docs.iter().map(|d| d.body.as_str()).collect();
        assert_eq!(bodies, ["hello world", "<p>zipped</p>"]);
        assert_eq!(skips.len(), 1);
        assert_eq!(skips[0].reason, SkipReason::BadRecord);
        assert!(
            skips[0].detail.starts_with("HTTP payload"),
            "{}",
            skips[0].detail
        );
        assert_eq!(passed, [Passed::NotText]);
    }

    #[test]
    fn hostile_bytes_end_the_file_without_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.warc");
        let cases: Vec<Vec<u8>> = vec![
            b"WARC/1.0\r\nContent-Length: 99999999999999999999\r\n\r\n".to_vec(),
            b"WARC/1.0\r\nWARC-Type: response\r\n".to_vec(),
            b"WARC/1.0\r\n"
                .iter()
                .chain(&vec![b'x'; 200_000])
                .copied()
                .collect(),
            vec![0x1f, 0x8b, 8, 0, 1, 2, 3],
            vec![0x1f, 0x8b],
            b"\n\n\r\n".to_vec(),
            Vec::new(),
        ];
        for bytes in cases {
            std::fs::write(&p, &bytes).unwrap();
            let (docs, skips, _) = events(&p, DEFAULT_MAX_RECORD_BYTES);
            assert!(docs.is_empty());
            assert!(skips.len() <= 1, "{skips:?}");
        }
    }

    #[test]
    fn the_reader_names_documents_path_at_offset_and_counts_what_it_passed_over() {
        let dir = fixture("");
        let r = WarcReader::new(
            "warc".into(),
            1,
            vec![(dir.clone(), "arch".into())],
            WarcOptions::default(),
        );
        let mut docs = Vec::new();
        let mut skips = Vec::new();
        r.collect(
            &mut |d| {
                docs.push(d);
                Ok(())
            },
            &mut |n| {
                if let Notice::Skipped(s) = n {
                    skips.push(s);
                }
                Ok(())
            },
        )
        .unwrap();
        let locs: Vec<&str> = docs.iter().map(|d| d.locator.as_str()).collect();
        assert!(locs.contains(&"arch/pages.warc.gz@622"), "{locs:?}");
        assert!(
            locs.contains(&"arch/corrupt/wrong-length.warc.gz@13659"),
            "{locs:?}"
        );
        assert_eq!(docs[0].date.as_deref(), Some("2024-03-02T11:30:00Z"));
        let c = r.counts();
        assert_eq!(c.documents as usize, docs.len());
        assert_eq!(c.skipped as usize, skips.len());
        assert!(c.not_content > 0 && c.not_ok > 0);
        // Strict: the first skip's error ends the reading.
        let e = r
            .collect(&mut |_| Ok(()), &mut |n| match n {
                Notice::Skipped(s) => Err(s.into_error()),
                _ => Ok(()),
            })
            .unwrap_err();
        assert!(e.to_string().contains("@"), "{e}");
    }
}
