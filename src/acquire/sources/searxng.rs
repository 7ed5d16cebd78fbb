//! A self-hosted SearXNG instance through its JSON API.

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use serde_json::Value;
use url::Url;

use super::{endpoint, paged_plan, RunCtx, Source};
use crate::acquire::config::SearxngConfig;
use crate::acquire::report::PlannedQuery;

/// The `searxng` source.
pub struct Searxng {
    name: String,
    cfg: SearxngConfig,
    base: Url,
}

impl Searxng {
    /// Checks the config; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: SearxngConfig) -> Result<Self, String> {
        let base = endpoint("url", cfg.url.as_deref())?;
        Ok(Searxng { name, cfg, base })
    }

    fn page_url(&self, q: &str, page: usize) -> Result<Url, String> {
        let mut u = self
            .base
            .join("search")
            .map_err(|e| format!("bad url {}: {e}", self.base))?;
        if self.base.path().ends_with("/search") {
            u = self.base.clone();
        }
        {
            let mut p = u.query_pairs_mut();
            p.append_pair("q", q)
                .append_pair("format", "json")
                .append_pair("pageno", &page.to_string());
            if let Some(e) = &self.cfg.engines {
                p.append_pair("engines", e);
            }
            if let Some(l) = &self.cfg.language {
                p.append_pair("language", l);
            }
        }
        Ok(u)
    }

    /// Result URLs of one page, plus warnings about unresponsive engines.
    async fn page(&self, ctx: &RunCtx<'_>, u: &Url) -> Result<Vec<String>, String> {
        let r = ctx.fetcher.api_get(u, HeaderMap::new()).await?;
        if r.status.as_u16() == 403 {
            return Err(format!(
                "http: {u} answered 403: is `json` in the instance's search.formats?"
            ));
        }
        if !r.status.is_success() {
            return Err(format!("http: {u} answered HTTP {}", r.status.as_u16()));
        }
        let v: Value = serde_json::from_slice(&r.body).map_err(|e| format!("json: {u}: {e}"))?;
        if let Some(e) = v.get("error") {
            return Err(format!("api: {u}: {e}"));
        }
        for e in v
            .get("unresponsive_engines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let parts: Vec<&str> = e
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            ctx.warn(format!("{u}: engine unresponsive: {}", parts.join(": ")));
        }
        Ok(v.get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("url").and_then(Value::as_str).map(str::to_string))
            .collect())
    }
}

#[async_trait]
impl Source for Searxng {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery> {
        paged_plan(&self.name, "searxng", queries, self.cfg.pages)
    }

    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()> {
        for q in queries {
            let mut urls: Vec<String> = Vec::new();
            for page in 1..=self.cfg.pages.max(1) {
                let u = match self.page_url(q, page) {
                    Ok(u) => u,
                    Err(e) => {
                        ctx.warn(e);
                        break;
                    }
                };
                let items = match ctx.listing(u.as_str()) {
                    Some((items, _)) => items,
                    None => match self.page(ctx, &u).await {
                        Ok(items) => {
                            ctx.store_listing(u.as_str(), q, &items, None)?;
                            items
                        }
                        Err(e) => {
                            ctx.warn(format!("query {q:?}: {e}"));
                            break;
                        }
                    },
                };
                let empty = items.is_empty();
                for i in items {
                    if !urls.contains(&i) {
                        urls.push(i);
                    }
                }
                if empty || urls.len() >= self.cfg.limit {
                    break;
                }
            }
            urls.truncate(self.cfg.limit);
            ctx.query_done(q, urls.len());
            ctx.fetch_results(urls.into_iter().map(|u| (u, Some(q.clone()))).collect())
                .await?;
        }
        Ok(())
    }
}
