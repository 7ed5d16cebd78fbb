//! Documents — PDF, DOCX, ODT, EPUB — turned into plain text: paragraphs kept (one per line,
//! separated by blank lines), page furniture left out. Pure: bytes in, text out, no IO, so any
//! reader can use it (`local` by extension, `web` by content type, a WARC reader per record).
//!
//! Document parsers meet hostile input (PDF crates panic on some), so every conversion runs
//! on a worker thread under `catch_unwind` with a wall-time budget: a panic is `corrupt`, a
//! conversion past its budget is `too-complex`, and the caller goes on either way.

mod docx;
mod epub;
mod odt;
mod pdf;
mod xml;

use crate::clean::Defect;
use std::fmt;
use std::io::Read;
use std::time::Duration;

/// The document formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocFormat {
    /// Portable Document Format.
    Pdf,
    /// Office Open XML word processing (Word 2007 and later).
    Docx,
    /// OpenDocument text.
    Odt,
    /// EPUB 2 or 3 e-book.
    Epub,
}

impl DocFormat {
    /// Every format, in report order.
    pub const ALL: [DocFormat; 4] = [
        DocFormat::Pdf,
        DocFormat::Docx,
        DocFormat::Odt,
        DocFormat::Epub,
    ];

    /// The name in manifests and exports (`pdf`, `docx`, `odt`, `epub`).
    pub fn as_str(self) -> &'static str {
        match self {
            DocFormat::Pdf => "pdf",
            DocFormat::Docx => "docx",
            DocFormat::Odt => "odt",
            DocFormat::Epub => "epub",
        }
    }

    /// The file extension, with its dot.
    pub fn extension(self) -> &'static str {
        match self {
            DocFormat::Pdf => ".pdf",
            DocFormat::Docx => ".docx",
            DocFormat::Odt => ".odt",
            DocFormat::Epub => ".epub",
        }
    }

    /// The format a `Content-Type` header names (parameters and case ignored).
    pub fn from_content_type(ct: &str) -> Option<DocFormat> {
        let mime = ct.split(';').next()?.trim().to_ascii_lowercase();
        match mime.as_str() {
            "application/pdf" | "application/x-pdf" => Some(DocFormat::Pdf),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
                Some(DocFormat::Docx)
            }
            "application/vnd.oasis.opendocument.text" => Some(DocFormat::Odt),
            "application/epub+zip" => Some(DocFormat::Epub),
            _ => None,
        }
    }

    /// The format a file name's extension names (case ignored).
    pub fn from_name(name: &str) -> Option<DocFormat> {
        let lower = name.to_ascii_lowercase();
        DocFormat::ALL
            .into_iter()
            .find(|f| lower.ends_with(f.extension()))
    }

    /// The format the bytes themselves announce: `%PDF-`, or a zip whose entries say which
    /// (EPUB and ODT store their MIME type first, uncompressed; DOCX has `word/document.xml`).
    pub fn sniff(bytes: &[u8]) -> Option<DocFormat> {
        let head = &bytes[..bytes.len().min(1024)];
        if head.windows(5).any(|w| w == b"%PDF-") {
            return Some(DocFormat::Pdf);
        }
        if !bytes.starts_with(b"PK\x03\x04") {
            return None;
        }
        let mime_at = 30 + b"mimetype".len();
        if bytes.get(30..mime_at) == Some(b"mimetype") {
            let rest = &bytes[mime_at..bytes.len().min(mime_at + 64)];
            if rest.starts_with(b"application/epub+zip") {
                return Some(DocFormat::Epub);
            }
            if rest.starts_with(b"application/vnd.oasis.opendocument.text") {
                return Some(DocFormat::Odt);
            }
        }
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
        let is_docx = zip.by_name("word/document.xml").is_ok();
        is_docx.then_some(DocFormat::Docx)
    }
}

impl fmt::Display for DocFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a document gave no text. Each is still a document: the build keeps it as `filtered`
/// with [`DocumentFailure::reason`] as its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentFailure {
    /// Read, but there is no text in it (a scan: pages of images).
    NoText,
    /// It needs a password.
    Encrypted,
    /// Not a well-formed document of its format; the detail says where it broke.
    Corrupt(String),
    /// Its conversion ran past its budget (time, or size once unpacked).
    TooComplex(String),
}

impl DocumentFailure {
    /// The reason's name in statuses and reports.
    pub fn reason(&self) -> &'static str {
        self.defect().as_str()
    }

    /// The cleaner's defect of the same name, which `filter::verdict` turns into a status.
    pub fn defect(&self) -> Defect {
        match self {
            DocumentFailure::NoText => Defect::NoText,
            DocumentFailure::Encrypted => Defect::Encrypted,
            DocumentFailure::Corrupt(_) => Defect::Corrupt,
            DocumentFailure::TooComplex(_) => Defect::TooComplex,
        }
    }
}

impl fmt::Display for DocumentFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentFailure::NoText => f.write_str("no-text: no text in it (images only?)"),
            DocumentFailure::Encrypted => f.write_str("encrypted: it needs a password"),
            DocumentFailure::Corrupt(d) | DocumentFailure::TooComplex(d) => {
                write!(f, "{}: {d}", self.reason())
            }
        }
    }
}

/// What one conversion may cost.
#[derive(Debug, Clone, Copy)]
pub struct DocLimits {
    /// Wall time; past it the document is `too-complex`.
    pub budget: Duration,
    /// Bytes one zip entry may unpack to (a zip bomb stops here as `too-complex`).
    pub max_unpacked: u64,
}

impl DocLimits {
    /// For documents of up to the usual body caps: a 300-page PDF takes about a second.
    pub const DEFAULT: DocLimits = DocLimits {
        budget: Duration::from_secs(30),
        max_unpacked: 64 << 20,
    };
}

/// The text of a document, paragraphs separated by blank lines, or why it has none.
pub fn document_text(format: DocFormat, bytes: &[u8]) -> Result<String, DocumentFailure> {
    document_text_within(format, bytes, &DocLimits::DEFAULT)
}

/// [`document_text`] within explicit limits.
pub fn document_text_within(
    format: DocFormat,
    bytes: &[u8],
    limits: &DocLimits,
) -> Result<String, DocumentFailure> {
    guarded(limits.budget, bytes.to_vec(), {
        let limits = *limits;
        move |b: &[u8]| convert(format, b, &limits)
    })
}

/// Runs `work` on a worker thread: its panic becomes `corrupt`, and past `budget` the caller
/// gets `too-complex` at once. A thread cannot be stopped from outside, so a runaway one is
/// left to finish on its own: it holds only its copy of the bytes and sends to nobody.
fn guarded(
    budget: Duration,
    bytes: Vec<u8>,
    work: impl FnOnce(&[u8]) -> Result<String, DocumentFailure> + Send + 'static,
) -> Result<String, DocumentFailure> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("document-text".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&bytes)));
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Err(DocumentFailure::TooComplex(format!(
            "no thread to convert it on: {e}"
        )));
    }
    match rx.recv_timeout(budget) {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            Err(DocumentFailure::Corrupt(format!(
                "its parser gave up: {msg}"
            )))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(DocumentFailure::TooComplex(
            format!("conversion ran past its {} s budget", budget.as_secs_f64()),
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(DocumentFailure::Corrupt(
            "its conversion stopped without an answer".into(),
        )),
    }
}

fn convert(format: DocFormat, bytes: &[u8], limits: &DocLimits) -> Result<String, DocumentFailure> {
    // An encrypted OOXML file is not a zip but an OLE compound file holding the encrypted
    // package: say so rather than "not a zip".
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])
        && format != DocFormat::Pdf
    {
        return Err(DocumentFailure::Encrypted);
    }
    let paragraphs = match format {
        DocFormat::Pdf => pdf::paragraphs(bytes)?,
        DocFormat::Docx => docx::paragraphs(&mut Zip::open(bytes, limits)?)?,
        DocFormat::Odt => odt::paragraphs(&mut Zip::open(bytes, limits)?)?,
        DocFormat::Epub => epub::paragraphs(&mut Zip::open(bytes, limits)?)?,
    };
    let text = join_paragraphs(paragraphs);
    if !text.chars().any(char::is_alphanumeric) {
        return Err(DocumentFailure::NoText);
    }
    Ok(text)
}

/// Paragraphs, each on one line with its whitespace collapsed, separated by blank lines.
fn join_paragraphs(paragraphs: Vec<String>) -> String {
    let mut out = String::new();
    for p in paragraphs {
        let mut para = String::with_capacity(p.len());
        for w in p.split_whitespace() {
            if !para.is_empty() {
                para.push(' ');
            }
            para.push_str(w);
        }
        if para.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&para);
    }
    out
}

/// A zip container (DOCX, ODT, EPUB) whose entries are read with the unpacked-size cap.
struct Zip<'a> {
    archive: zip::ZipArchive<std::io::Cursor<&'a [u8]>>,
    max_unpacked: u64,
}

impl<'a> Zip<'a> {
    fn open(bytes: &'a [u8], limits: &DocLimits) -> Result<Self, DocumentFailure> {
        let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| DocumentFailure::Corrupt(format!("not a readable zip: {e}")))?;
        Ok(Zip {
            archive,
            max_unpacked: limits.max_unpacked,
        })
    }

    fn has(&mut self, name: &str) -> bool {
        self.archive.index_for_name(name).is_some()
    }

    /// An entry as UTF-8 text; a missing entry is `corrupt` naming it.
    fn text(&mut self, name: &str) -> Result<String, DocumentFailure> {
        let mut entry = match self.archive.by_name(name) {
            Ok(e) => e,
            Err(zip::result::ZipError::FileNotFound) => {
                return Err(DocumentFailure::Corrupt(format!(
                    "no {name} in the package"
                )))
            }
            Err(zip::result::ZipError::UnsupportedArchive(m)) if m.contains("ncrypt") => {
                return Err(DocumentFailure::Encrypted)
            }
            Err(e) => return Err(DocumentFailure::Corrupt(format!("entry {name}: {e}"))),
        };
        if entry.encrypted() {
            return Err(DocumentFailure::Encrypted);
        }
        let mut buf = Vec::new();
        (&mut entry)
            .take(self.max_unpacked.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| DocumentFailure::Corrupt(format!("entry {name}: {e}")))?;
        if buf.len() as u64 > self.max_unpacked {
            return Err(DocumentFailure::TooComplex(format!(
                "entry {name} unpacks to more than {} bytes",
                self.max_unpacked
            )));
        }
        match String::from_utf8(buf) {
            Ok(s) => Ok(s),
            Err(e) => Ok(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        }
    }
}

#[cfg(test)]
mod tests;
