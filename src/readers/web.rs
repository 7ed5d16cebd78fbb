//! Web sources as seen by the pipeline: the pages the acquisition stage left in the frontier.
//!
//! Acquisition (`crate::acquire`) talks to search engines, wikis and sites and records every
//! fetched page in the store's frontier; this source turns those pages into raw documents, so
//! the rest of the pipeline treats web pages and local files alike. A fetched document (PDF,
//! DOCX, ODT, EPUB) arrives as bytes and is turned into text here (`documents`).

use super::documents::DocFormat;
use super::{document_body, Notice, Payload, RawDoc, Reader};
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

    fn expected(&self) -> Result<Option<u64>> {
        self.frontier.fetched_count(&self.name).map(Some)
    }

    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        notice: &mut dyn FnMut(Notice) -> Result<()>,
    ) -> Result<()> {
        for rec in self.frontier.fetched(&self.name)? {
            let Some(page) = rec.fetched else { continue };
            let mut doc = RawDoc {
                source: self.name.clone(),
                source_rank: self.rank,
                locator: page.final_url.clone(),
                url: Some(page.final_url),
                title: page.title,
                raw_bytes: page.body.len() as u64,
                body: page.body,
                payload: page.payload,
                lang: self.lang.clone(),
                date: None,
                document: None,
                defect: None,
            };
            if page.payload == Payload::Document {
                let bytes = page.bytes.unwrap_or_default();
                let format = DocFormat::from_content_type(&page.content_type)
                    .or_else(|| DocFormat::sniff(&bytes))
                    .or_else(|| {
                        DocFormat::from_name(
                            doc.locator.split(['?', '#']).next().unwrap_or_default(),
                        )
                    });
                doc.raw_bytes = bytes.len() as u64;
                doc.payload = Payload::PlainText;
                match format {
                    Some(format) => {
                        let (body, defect, warning) = document_body(format, &bytes, &doc.locator);
                        if let Some(w) = warning {
                            notice(Notice::Warning(w))?;
                        }
                        doc.body = body;
                        doc.document = Some(format);
                        doc.defect = defect;
                    }
                    None => {
                        notice(Notice::Warning(format!(
                            "{}: {:?} is no document format read here; kept out as corrupt",
                            doc.locator, page.content_type
                        )))?;
                        doc.defect = Some(crate::clean::Defect::Corrupt);
                    }
                }
            }
            sink(doc)?;
        }
        Ok(())
    }
}
