//! Readers: what turns a topic's sources into raw documents for the pipeline. Each kind is one
//! file implementing [`Reader`]: `local` reads files and JSONL, `warc` web archives, `web` reads the pages the
//! acquisition stage left in the store's frontier. (The web sources themselves, search engines,
//! wikis and crawls, are `crate::acquire::sources`.)

pub mod local;
pub mod walk;
pub mod warc;
pub mod web;

pub use crate::acquire::Payload;
pub use crate::error::{Skip, SkipReason};
use anyhow::Result;

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
}

/// What a reader tells besides documents.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Read, but not quite as given (invalid bytes replaced): worth a line on stderr.
    Warning(String),
    /// Not read: the build records it, counts it in the report and goes on, unless it runs
    /// strict, in which case the callback returns the error and the reader stops with it.
    Skipped(Skip),
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
}
