//! Errors that are the user's input's fault (exit code 2) as opposed to failures (exit code 1).

use std::fmt;

/// A bad input: the message names the input and the place.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Shorthand for an `anyhow` error marked as bad input.
pub fn bad_input(msg: impl Into<String>) -> anyhow::Error {
    BadInput(msg.into()).into()
}

/// Whether an error chain is the input's fault.
pub fn is_bad_input(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<BadInput>()
            || c.is::<TopicError>()
            || c.is::<CollectionExists>()
            || c.is::<StoreCorrupt>()
            || c.is::<KeptTextLost>()
    })
}

/// A store that cannot be trusted: empty, truncated, not SQLite, or with rows that do not
/// decode. A bad input rather than a failure, so that scripts stop instead of taking an
/// empty answer for a real one; the message sends the user to `collect doctor`.
#[derive(Debug)]
pub struct StoreCorrupt {
    /// The store file.
    pub path: std::path::PathBuf,
    /// What was found wrong.
    pub what: String,
}

impl fmt::Display for StoreCorrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| std::path::Path::new("."));
        write!(
            f,
            "{}: the store is corrupt ({}); it was left as it is; run `collect doctor {}` to see what can be recovered",
            self.path.display(),
            self.what,
            dir.display()
        )
    }
}

impl std::error::Error for StoreCorrupt {}

/// The file in `docs/` that holds a kept text, the only copy the collection has, is gone or
/// no longer the text recorded with the document.
#[derive(Debug)]
pub struct KeptTextLost {
    /// The file.
    pub file: std::path::PathBuf,
    /// Whether it is there with other content (else it is missing).
    pub changed: bool,
}

impl fmt::Display for KeptTextLost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.changed {
            "has changed since collect wrote it (its SHA-256 is not the one the store recorded)"
        } else {
            "is missing"
        };
        let dir = self
            .file
            .parent()
            .and_then(|docs| docs.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| std::path::Path::new("."));
        write!(
            f,
            "{}: {what}; it holds the only copy of a kept text; put the original back, or run `collect doctor {} --rebuild --topic TOPIC.yaml`, which leaves the document out",
            self.file.display(),
            dir.display()
        )
    }
}

impl std::error::Error for KeptTextLost {}

/// The collection a build was refused over: it exists and `update` is the way to grow it.
#[derive(Debug)]
pub struct CollectionExists(pub std::path::PathBuf);

impl fmt::Display for CollectionExists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} already holds a built collection; use `collect update` to add to it, or `collect build --force` to rebuild it from scratch",
            self.0.display()
        )
    }
}

impl std::error::Error for CollectionExists {}

/// A topic file that could not be used, with the place of the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicError {
    /// The topic file.
    pub path: std::path::PathBuf,
    /// 1-based line, when known.
    pub line: usize,
    /// 1-based column, when known.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TopicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for TopicError {}

/// Why an input was skipped instead of read: the one closed set of names, stored in the
/// collection and shown in reports and listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// A FIFO, socket or device: opening one can block forever or never end.
    NotRegularFile,
    /// A symbolic link whose target does not exist.
    DanglingLink,
    /// The file cannot be opened or read (permissions, IO error).
    Unreadable,
    /// Larger than the source's `max_file_bytes` (or, in JSONL, a line longer than that).
    TooLarge,
    /// A symbolic link leaving the source's root, and the source does not say `follow_links`.
    LinkOutsideRoot,
    /// A link to a directory that holds the link: following it would never end.
    Loop,
    /// A link to a file or directory the walk reads anyway under its own path.
    AlreadyRead,
    /// A JSONL line that is not a JSON object of the documented shape.
    BadJson,
    /// Bytes that are not UTF-8 where UTF-8 is required (a JSONL line).
    BadUtf8,
    /// A JSONL object without `id` or `text`.
    MissingField,
    /// A `.gz` file that does not decompress.
    BadGzip,
    /// A JSONL id seen on an earlier line of the same file.
    DuplicateId,
    /// A web-archive record that does not parse (bad header, wrong Content-Length, truncated
    /// or corrupt gzip member, HTTP payload that does not parse); the reader resyncs after it.
    BadRecord,
    /// A document in a format no reader turns into text yet (PDF, office formats).
    UnsupportedFormat,
}

impl SkipReason {
    /// Every reason, in the order listings group them.
    pub const ALL: [SkipReason; 14] = [
        SkipReason::NotRegularFile,
        SkipReason::DanglingLink,
        SkipReason::Unreadable,
        SkipReason::TooLarge,
        SkipReason::LinkOutsideRoot,
        SkipReason::Loop,
        SkipReason::AlreadyRead,
        SkipReason::BadJson,
        SkipReason::BadUtf8,
        SkipReason::MissingField,
        SkipReason::BadGzip,
        SkipReason::DuplicateId,
        SkipReason::BadRecord,
        SkipReason::UnsupportedFormat,
    ];

    /// Whether an input stays unread. A link into a loop or to something read under its own
    /// path loses nothing: it is recorded and shown, but neither stops a strict run nor makes
    /// the run end with "skipped inputs" (so a folder with `latest -> v2` builds cleanly).
    pub fn loses_input(self) -> bool {
        !matches!(self, SkipReason::Loop | SkipReason::AlreadyRead)
    }

    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::NotRegularFile => "not-regular-file",
            SkipReason::DanglingLink => "dangling-link",
            SkipReason::Unreadable => "unreadable",
            SkipReason::TooLarge => "too-large",
            SkipReason::LinkOutsideRoot => "link-outside-root",
            SkipReason::Loop => "loop",
            SkipReason::AlreadyRead => "already-read",
            SkipReason::BadJson => "bad-json",
            SkipReason::BadUtf8 => "bad-utf8",
            SkipReason::MissingField => "missing-field",
            SkipReason::BadGzip => "bad-gzip",
            SkipReason::DuplicateId => "duplicate-id",
            SkipReason::BadRecord => "bad-record",
            SkipReason::UnsupportedFormat => "unsupported-format",
        }
    }

    /// Parses a name written by [`SkipReason::as_str`].
    pub fn parse(s: &str) -> Option<SkipReason> {
        SkipReason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One input skipped by a reader: where (file, and line and column inside it when known), why,
/// and the message a stop-on-first-error run would have given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The file (or directory entry).
    pub path: std::path::PathBuf,
    /// 1-based line, for records inside a file.
    pub line: Option<usize>,
    /// 1-based column (JSON errors) or byte in the line (UTF-8 errors), when known.
    pub column: Option<usize>,
    /// Byte offset in the file, for records of binary containers (a web archive's gzip
    /// member or record), where lines mean nothing.
    pub offset: Option<u64>,
    /// Why.
    pub reason: SkipReason,
    /// What exactly is wrong, without the place.
    pub detail: String,
}

impl Skip {
    /// A skipped file or directory entry.
    pub fn file(path: &std::path::Path, reason: SkipReason, detail: impl Into<String>) -> Skip {
        Skip {
            path: path.to_path_buf(),
            line: None,
            column: None,
            offset: None,
            reason,
            detail: detail.into(),
        }
    }

    /// A skipped record of a container file, at byte `offset`.
    pub fn at_offset(
        path: &std::path::Path,
        offset: u64,
        reason: SkipReason,
        detail: impl Into<String>,
    ) -> Skip {
        Skip {
            offset: Some(offset),
            ..Skip::file(path, reason, detail)
        }
    }

    /// Where, as stored and listed: `path`, `path:line` or `path@offset`.
    pub fn locator(&self) -> String {
        match (self.line, self.offset) {
            (Some(l), _) => format!("{}:{l}", self.path.display()),
            (None, Some(o)) => format!("{}@{o}", self.path.display()),
            (None, None) => self.path.display().to_string(),
        }
    }

    /// The bad-input error `--strict` stops with: `path:line:col: detail`.
    pub fn into_error(self) -> anyhow::Error {
        bad_input(self.to_string())
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.locator())?;
        if let (Some(_), Some(c)) = (self.line, self.column) {
            write!(f, ":{c}")?;
        }
        write!(f, ": {}", self.detail)
    }
}
