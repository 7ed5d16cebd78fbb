//! Brave Web Search API.

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT};
use serde_json::Value;
use url::Url;

use super::{endpoint, env_key, paged_plan, RunCtx, Source};
use crate::acquire::config::BraveConfig;
use crate::acquire::report::PlannedQuery;

/// The `brave` source.
pub struct Brave {
    name: String,
    cfg: BraveConfig,
    api: Url,
    key: String,
}

impl Brave {
    /// Checks the config and the key; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: BraveConfig) -> Result<Self, String> {
        let api = endpoint("api", Some(&cfg.api))?;
        let key = env_key(&cfg.key_env)?;
        Ok(Brave {
            name,
            cfg,
            api,
            key,
        })
    }

    fn page_url(&self, q: &str, page: usize) -> Url {
        let mut u = self.api.clone();
        {
            let mut p = u.query_pairs_mut();
            p.append_pair("q", q)
                .append_pair("count", &self.cfg.count.clamp(1, 20).to_string())
                .append_pair("offset", &page.to_string());
            if let Some(c) = &self.cfg.country {
                p.append_pair("country", c);
            }
            if let Some(l) = &self.cfg.search_lang {
                p.append_pair("search_lang", l);
            }
        }
        u
    }

    async fn page(&self, ctx: &RunCtx<'_>, u: &Url) -> Result<(Vec<String>, bool), String> {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let key = HeaderValue::from_str(&self.key)
            .map_err(|_| format!("{}: key has bad characters", self.cfg.key_env))?;
        h.insert("x-subscription-token", key);
        let r = ctx.fetcher.api_get(u, h).await?;
        let v: Option<Value> = serde_json::from_slice(&r.body).ok();
        if !r.status.is_success() {
            let detail = v
                .as_ref()
                .and_then(|v| {
                    v.pointer("/error/detail")
                        .or_else(|| v.pointer("/error/code"))
                })
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(format!(
                "http: {u} answered HTTP {} {detail}",
                r.status.as_u16()
            ));
        }
        let v = v.ok_or_else(|| format!("json: {u}: answer is not JSON"))?;
        let urls = v
            .pointer("/web/results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("url").and_then(Value::as_str).map(str::to_string))
            .collect();
        let more = v
            .pointer("/query/more_results_available")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok((urls, more))
    }
}

#[async_trait]
impl Source for Brave {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery> {
        paged_plan(&self.name, "brave", queries, self.cfg.pages.min(10))
    }

    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()> {
        for q in queries {
            let mut urls: Vec<String> = Vec::new();
            // Brave allows offsets 0..=9.
            for page in 0..self.cfg.pages.clamp(1, 10) {
                let u = self.page_url(q, page);
                let (items, more) = match ctx.listing(u.as_str()) {
                    Some((items, next)) => (items, next.is_some()),
                    None => match self.page(ctx, &u).await {
                        Ok((items, more)) => {
                            ctx.store_listing(
                                u.as_str(),
                                q,
                                &items,
                                more.then(|| "more".to_string()),
                            )?;
                            (items, more)
                        }
                        Err(e) => {
                            ctx.warn(format!("query {q:?}: {e}"));
                            break;
                        }
                    },
                };
                for i in items {
                    if !urls.contains(&i) {
                        urls.push(i);
                    }
                }
                if !more || urls.len() >= self.cfg.limit {
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
