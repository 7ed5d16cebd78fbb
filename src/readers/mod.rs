//! Sources of raw documents. Each kind is one file implementing [`Source`].

pub mod local;
pub mod web;

use anyhow::Result;

/// What a raw document's body is, which decides the cleaner it goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// An HTML page.
    Html,
    /// MediaWiki markup.
    Wikitext,
    /// Plain text, already clean.
    Text,
}

/// A document as a source delivers it, before cleaning.
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
}

/// A source of raw documents.
pub trait Source {
    /// Report name.
    fn name(&self) -> &str;
    /// Delivers every document to `sink`; problems with single inputs go to `warn`.
    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        warn: &mut dyn FnMut(String),
    ) -> Result<()>;
}
