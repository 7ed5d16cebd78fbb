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
