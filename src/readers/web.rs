//! Web sources as seen by the pipeline: the pages the acquisition stage left in the frontier.
//!
//! Acquisition (`crate::acquire`) talks to search engines, wikis and sites and records every
//! fetched page in the store's frontier; this source turns those pages into raw documents, so
//! the rest of the pipeline treats web pages and local files alike.

use super::{Notice, RawDoc, Reader};
use crate::acquire::WebSourceConfig;
use crate::store::StoreFrontier;
use anyhow::Result;
use std::sync::Arc;

/// The fetched pages of one web source.
pub struct WebReader {
    name: String,
    rank: u32,
    frontier: Arc<StoreFrontier>,
    lang: Option<String>,
}

impl WebReader {
    /// The pages of source `name` in `frontier`; `lang` is the wiki language for wikitext.
    pub fn new(
        name: String,
        rank: u32,
        frontier: Arc<StoreFrontier>,
        lang: Option<String>,
    ) -> Self {
        WebReader {
            name,
            rank,
            frontier,
            lang,
        }
    }
}

/// The content language a wiki source declares: the first label of a Wikipedia-style host
/// (`ru.wikipedia.org` → `ru`), else `fallback`.
pub fn wiki_language(cfg: &WebSourceConfig, fallback: Option<&str>) -> Option<String> {
    if let WebSourceConfig::Mediawiki(c) = cfg {
        let host = c
            .api
            .as_deref()
            .and_then(|a| url::Url::parse(a).ok())
            .and_then(|u| u.host_str().map(str::to_string));
        if let Some(label) = host.as_deref().and_then(|h| h.split('.').next()) {
            if (2..=3).contains(&label.len()) && label.chars().all(|c| c.is_ascii_lowercase()) {
                return Some(label.to_string());
            }
        }
    }
    fallback.map(str::to_string)
}

impl Reader for WebReader {
    fn name(&self) -> &str {
        &self.name
    }

    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        _notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()> {
        for rec in self.frontier.fetched(&self.name)? {
            let Some(page) = rec.fetched else { continue };
            let payload = page.payload;
            sink(RawDoc {
                source: self.name.clone(),
                source_rank: self.rank,
                locator: page.final_url.clone(),
                url: Some(page.final_url),
                title: page.title,
                raw_bytes: page.body.len() as u64,
                body: page.body,
                payload,
                lang: self.lang.clone(),
                date: None,
            })?;
        }
        Ok(())
    }
}
