//! URL states and the persistence trait the main crate implements.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// What kind of text a fetched document holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Payload {
    /// An HTML or XHTML page.
    Html,
    /// MediaWiki wikitext.
    Wikitext,
    /// Plain text (text/plain pages, TextExtracts).
    PlainText,
    /// A document (PDF, DOCX, ODT, EPUB): its bytes are in `FetchedPage::bytes`, its kind in
    /// `content_type`; the web reader turns it into text.
    Document,
}

/// Content types fetched as [`Payload::Document`]: PDF, DOCX, ODT, EPUB (each is a
/// `crate::readers::documents::DocFormat`).
pub const DOCUMENT_TYPES: &[&str] = &[
    "application/pdf",
    "application/x-pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.oasis.opendocument.text",
    "application/epub+zip",
];

/// A document obtained from the web, decoded to UTF-8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FetchedPage {
    /// URL after redirects (for wiki articles: the article URL).
    pub final_url: String,
    /// `<title>` or article title.
    pub title: Option<String>,
    /// Decoded text (empty for a document).
    pub body: String,
    /// The body as received, for a document (base64 in the stored JSON; absent in stores
    /// written before documents were fetched, which decode as before).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "base64_bytes"
    )]
    pub bytes: Option<Vec<u8>>,
    /// Kind of text in `body`.
    pub payload: Payload,
    /// Content type as received, e.g. `text/html; charset=windows-1251`.
    pub content_type: String,
    /// Set when the declared charset was overruled by detection (`charset::Decoded::note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset_note: Option<String>,
    /// Seconds since the Unix epoch.
    pub fetched_at: u64,
}

/// `Option<Vec<u8>>` as a base64 string: the frontier's records are JSON, and a number array
/// would take four times the space.
mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(t) => base64::engine::general_purpose::STANDARD
                .decode(t.as_bytes())
                .map(Some)
                .map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Why a URL was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// robots.txt disallows it (or robots.txt was unreachable).
    Robots,
    /// Not HTML/XHTML/plain text, nor a document type (`DOCUMENT_TYPES`).
    ContentType,
    /// Body above `max_body_bytes`.
    TooLarge,
    /// Resolves to a loopback/private/link-local/CGNAT/metadata address.
    PrivateAddress,
    /// Not http(s).
    Scheme,
    /// Redirect chain loops.
    RedirectLoop,
    /// More redirects than `max_redirects`.
    TooManyRedirects,
    /// Unparseable URL.
    BadUrl,
    /// Beyond the sites crawl's `max_pages`.
    PageLimit,
    /// Wiki page does not exist.
    Missing,
    /// Binary bytes under a text content type.
    NotText,
}

impl SkipReason {
    /// Kebab-case name used in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::Robots => "robots",
            SkipReason::ContentType => "content-type",
            SkipReason::TooLarge => "too-large",
            SkipReason::PrivateAddress => "private-address",
            SkipReason::Scheme => "scheme",
            SkipReason::RedirectLoop => "redirect-loop",
            SkipReason::TooManyRedirects => "too-many-redirects",
            SkipReason::BadUrl => "bad-url",
            SkipReason::PageLimit => "page-limit",
            SkipReason::Missing => "missing",
            SkipReason::NotText => "not-text",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// State of one URL in the frontier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlState {
    /// Found, not fetched yet (or interrupted): fetched on resume.
    Discovered,
    /// Fetched; the document is in `UrlRecord::fetched`.
    Fetched,
    /// Finally failed (after retries); the message names the URL and the cause.
    Failed(String),
    /// Deliberately not fetched.
    Skipped(SkipReason),
    /// A search/API request already answered: the result items it listed and
    /// its continuation, so that a resumed run does not ask (or pay) again.
    Listed {
        /// Result URLs or titles.
        items: Vec<String>,
        /// Continuation token for the next page, if any.
        next: Option<String>,
    },
}

impl UrlState {
    /// True when a resumed run must not request this URL again.
    pub fn is_final(&self) -> bool {
        !matches!(self, UrlState::Discovered)
    }
}

/// One URL and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlRecord {
    /// Normalised URL (the key).
    pub url: String,
    /// Source name that found it.
    pub source: String,
    /// Query that found it, if any.
    pub query: Option<String>,
    /// Current state.
    pub state: UrlState,
    /// The document, when `state` is `Fetched`.
    pub fetched: Option<FetchedPage>,
}

/// Durable URL state, implemented by the main crate on its SQLite store.
pub trait Frontier: Send + Sync {
    /// State from an earlier (maybe interrupted) run.
    fn seen(&self, url: &str) -> Option<UrlRecord>;
    /// Called as each URL changes state; must be durable when it returns.
    fn record(&self, rec: &UrlRecord) -> anyhow::Result<()>;
}

/// In-memory frontier for tests and `collect demo`.
#[derive(Debug, Default)]
pub struct MemoryFrontier {
    records: Mutex<HashMap<String, UrlRecord>>,
    history: Mutex<Vec<UrlRecord>>,
}

impl MemoryFrontier {
    /// Empty frontier.
    pub fn new() -> Self {
        Self::default()
    }

    /// Current record of every URL.
    pub fn records(&self) -> Vec<UrlRecord> {
        let mut v: Vec<_> = lock(&self.records).values().cloned().collect();
        v.sort_by(|a, b| a.url.cmp(&b.url));
        v
    }

    /// Every `record` call in order.
    pub fn history(&self) -> Vec<UrlRecord> {
        lock(&self.history).clone()
    }

    /// Fetched documents.
    pub fn documents(&self) -> Vec<(UrlRecord, FetchedPage)> {
        self.records()
            .into_iter()
            .filter_map(|r| r.fetched.clone().map(|p| (r, p)))
            .collect()
    }
}

impl Frontier for MemoryFrontier {
    fn seen(&self, url: &str) -> Option<UrlRecord> {
        lock(&self.records).get(url).cloned()
    }

    fn record(&self, rec: &UrlRecord) -> anyhow::Result<()> {
        lock(&self.records).insert(rec.url.clone(), rec.clone());
        lock(&self.history).push(rec.clone());
        Ok(())
    }
}

/// A poisoned lock only means another thread panicked; the map is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
