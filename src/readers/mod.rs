//! Readers: what turns a topic's sources into raw documents for the pipeline. Each kind is one
//! file implementing [`Reader`]: `local` reads files and JSONL, `warc` web archives, `web` reads the pages the
//! acquisition stage left in the store's frontier. (The web sources themselves, search engines,
//! wikis and crawls, are `crate::acquire::sources`.)

pub mod documents;
mod json_line;
pub mod local;
pub mod walk;
pub mod warc;
pub mod web;

pub use crate::acquire::Payload;
use crate::clean::Defect;
pub use crate::error::{Skip, SkipReason};
use anyhow::Result;
use documents::{DocFormat, DocumentFailure};

/// A document as a reader delivers it, before cleaning.
#[derive(Debug, Clone)]
pub struct RawDoc {
    /// Report name of the source.
    pub source: String,
    /// Position of the source in the topic.
    pub source_rank: u32,
    /// Where it came from (URL, or file path with line for JSONL): the base of its stable id.
    pub locator: String,
    /// Web address, when known.
    pub url: Option<String>,
    /// Title, when the source gives one.
    pub title: Option<String>,
    /// The body, decoded to text.
    pub body: String,
    /// What the body is.
    pub payload: Payload,
    /// Language the source declares (a wiki's content language), when known.
    pub lang: Option<String>,
    /// Size of the body as received.
    pub raw_bytes: u64,
    /// When the source says it was captured or published (a WARC record's `WARC-Date`).
    pub date: Option<String>,
    /// The document format the body was converted from (then `payload` is plain text).
    pub document: Option<DocFormat>,
    /// Why the body holds no text, when a reader could not read it (a document that is
    /// encrypted, corrupt, a scan, or over its budget): the filter keeps it out with this.
    pub defect: Option<Defect>,
}

impl RawDoc {
    /// The format's name in manifests and exports: `html`, `text`, `wikitext`, `pdf`,
    /// `docx`, `odt`, `epub`.
    pub fn format(&self) -> &'static str {
        match (self.document, self.payload) {
            (Some(f), _) => f.as_str(),
            (None, Payload::Html) => "html",
            (None, Payload::Wikitext) => "wikitext",
            (None, Payload::PlainText) => "text",
            (None, Payload::Document) => "document",
        }
    }
}

/// A document's bytes read for a `RawDoc`: its text, or no text, the defect the filter keeps it
/// out with, and the line for stderr naming `locator` and what went wrong.
pub fn document_body(
    format: DocFormat,
    bytes: &[u8],
    locator: &str,
) -> (String, Option<Defect>, Option<String>) {
    match documents::document_text(format, bytes) {
        Ok(text) => (text, None, None),
        Err(f) => (
            String::new(),
            Some(f.defect()),
            Some(document_warning(locator, &f)),
        ),
    }
}

fn document_warning(locator: &str, f: &DocumentFailure) -> String {
    format!("{locator}: {f}; kept out as {}", f.reason())
}

/// What a reader tells besides documents.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Read, but not quite as given (invalid bytes replaced): worth a line on stderr.
    Warning(String),
    /// Not read: the build records it, counts it in the report and goes on, unless it runs
    /// strict, in which case the callback returns the error and the reader stops with it.
    Skipped(Skip),
    /// A file (or archive) delivered whole, with nothing skipped: once the source's read is
    /// complete and stored, the store remembers it, and the next read passes it by while it
    /// stays as it was.
    Read(FileRead),
    /// A file passed by unread: as it was when a complete read took it whole.
    Unchanged(FileState),
}

pub use crate::store::files::{EarlierIds, FileRead, FileState, JsonlState};

/// The files a source's earlier complete reads took whole, by absolute path, and the ids of the
/// records of the JSONL files among them that grew since (asked only of those).
#[derive(Debug, Clone, Default)]
pub struct KnownFiles {
    /// Remembered states.
    pub files: std::collections::HashMap<String, FileState>,
    /// Ids of the records already read, for each JSONL file that grew.
    pub ids: std::collections::HashMap<String, std::rc::Rc<dyn EarlierIds>>,
}

/// Whether a file needs reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// As a complete read left it: pass it by.
    Unchanged(FileState),
    /// New or changed (its state now, when it has one to remember): read it.
    Read(Option<FileState>),
}

impl KnownFiles {
    /// Whether the file at `path` needs reading.
    pub fn check(&self, path: &std::path::Path) -> Check {
        match FileState::of(path) {
            Some(now)
                if self
                    .files
                    .get(&now.path)
                    .is_some_and(|was| was.same_as(&now)) =>
            {
                Check::Unchanged(now)
            }
            now => Check::Read(now),
        }
    }

    /// The remembered state of a JSONL file that is now larger, the same file (inode): lines
    /// may have been appended, which the reader checks on the bytes.
    pub fn grown(&self, now: &FileState) -> Option<&FileState> {
        self.files
            .get(&now.path)
            .filter(|was| was.jsonl.is_some() && was.inode == now.inode && now.size > was.size)
    }

    /// Paths of the remembered JSONL files that grew, whose ids a reader of the new lines needs.
    pub fn grown_paths(&self) -> Vec<String> {
        // Only JSONL files can grow by lines: the others are not looked at here (a directory
        // source's files are each checked once, when the reader reaches them).
        self.files
            .values()
            .filter(|was| was.jsonl.is_some())
            .filter(|was| {
                FileState::of(std::path::Path::new(&was.path))
                    .is_some_and(|now| self.grown(&now).is_some())
            })
            .map(|was| was.path.clone())
            .collect()
    }
}

/// A reader of one source's raw documents.
pub trait Reader {
    /// Report name.
    fn name(&self) -> &str;
    /// Delivers every document to `sink`; problems with single inputs go to `notice`, and an
    /// error it returns (strict runs) ends the reading.
    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()>;
    /// How many documents `collect` will deliver, when that is known before reading.
    fn expected(&self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// The files earlier reads took whole: a reader of files passes by those unchanged
    /// ([`Notice::Unchanged`]); other readers read as before.
    fn pass_unchanged(&mut self, _known: KnownFiles) {}
}

#[cfg(test)]
mod file_memory_tests {
    use super::*;

    #[test]
    fn a_file_is_passed_by_only_while_size_time_and_inode_match() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "one").unwrap();
        let state = FileState::of(&p).unwrap();
        assert!(std::path::Path::new(&state.path).is_absolute());
        let known = KnownFiles {
            files: [(state.path.clone(), state.clone())].into(),
            ..KnownFiles::default()
        };
        assert_eq!(known.check(&p), Check::Unchanged(state.clone()));
        // Same size, another time.
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(9))
            .unwrap();
        assert!(matches!(known.check(&p), Check::Read(Some(_))));
        // Another file of that name (a new inode), even with the old size and time.
        std::fs::remove_file(&p).unwrap();
        std::fs::write(dir.path().join("other"), "xyz").unwrap();
        std::fs::write(&p, "one").unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(state.mtime_ns as u64),
        )
        .unwrap();
        let now = FileState::of(&p).unwrap();
        assert_eq!((now.size, now.mtime_ns), (state.size, state.mtime_ns));
        assert_eq!(
            known.check(&p) == Check::Unchanged(now.clone()),
            now.inode == state.inode
        );
        assert_eq!(known.check(&dir.path().join("gone")), Check::Read(None));
    }
}
