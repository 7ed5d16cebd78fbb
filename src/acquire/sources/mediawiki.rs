//! MediaWiki Action API: `list=search`, then wikitext or TextExtracts text.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde_json::Value;
use url::Url;

use super::{endpoint, Claim, RunCtx, Source};
use crate::acquire::config::{MediaWikiConfig, WikiText};
use crate::acquire::fetcher::retry_after;
use crate::acquire::frontier::{FetchedPage, Payload, SkipReason, UrlRecord, UrlState};
use crate::acquire::report::PlannedQuery;

/// Titles per content request (the API maximum for normal users).
const BATCH: usize = 50;
/// Search hits per request (the API maximum for normal users).
const SEARCH_PAGE: usize = 50;
/// Continuation rounds per batch; guards against an API that never finishes.
const MAX_CONTINUE: usize = 100;

/// The `mediawiki` source.
#[derive(Debug)]
pub struct MediaWiki {
    name: String,
    cfg: MediaWikiConfig,
    api: Url,
    article_path: String,
}

impl MediaWiki {
    /// Checks the config; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: MediaWikiConfig) -> Result<Self, String> {
        let api = endpoint("api", cfg.api.as_deref())?;
        let article_path = match &cfg.article_path {
            Some(p) if p.contains("$1") => api
                .join(p)
                .map_err(|e| format!("bad article_path {p}: {e}"))?
                .to_string(),
            Some(p) => return Err(format!("article_path {p} has no $1; source skipped")),
            // Wikimedia: /w/api.php -> /wiki/$1; Fandom: /ru/api.php -> /ru/wiki/$1.
            None => {
                let dir = api.join("./").map_err(|e| e.to_string())?;
                let dir = if dir.path().ends_with("/w/") {
                    dir.join("../").map_err(|e| e.to_string())?
                } else {
                    dir
                };
                format!("{dir}wiki/$1")
            }
        }
        // Url::join percent-encodes `$`; put the placeholder back.
        .replace("%241", "$1");
        Ok(MediaWiki {
            name,
            cfg,
            api,
            article_path,
        })
    }

    /// The article URL of a title (spaces as underscores, like MediaWiki's links).
    pub fn article_url(&self, title: &str) -> String {
        let t = title.replace(' ', "_");
        let enc: String = url::form_urlencoded::byte_serialize(t.as_bytes()).collect();
        // Keep the characters MediaWiki itself leaves readable in paths.
        let enc = enc
            .replace("%2F", "/")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%28", "(")
            .replace("%29", ")");
        self.article_path.replace("$1", &enc)
    }

    fn url_for(&self, params: &[(&str, String)]) -> Url {
        let mut u = self.api.clone();
        {
            let mut q = u.query_pairs_mut();
            for (k, v) in params {
                q.append_pair(k, v);
            }
            q.append_pair("format", "json");
            q.append_pair("formatversion", "2");
            q.append_pair("maxlag", "5");
        }
        u
    }

    /// One API call, waiting out maxlag answers as Wikimedia asks.
    async fn call(&self, ctx: &RunCtx<'_>, u: &Url) -> Result<Value, String> {
        let cfg = ctx.fetcher.config();
        let mut lag_waits = 0;
        loop {
            let r = ctx.fetcher.api_get(u, HeaderMap::new()).await?;
            let lagged = r
                .headers
                .get("mediawiki-api-error")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim() == "maxlag");
            let v: Option<Value> = serde_json::from_slice(&r.body).ok();
            let code = v
                .as_ref()
                .and_then(|v| v.pointer("/error/code"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if lagged || code == "maxlag" {
                lag_waits += 1;
                if lag_waits > cfg.retries.max(1) {
                    return Err(format!(
                        "maxlag: {u}: wiki still lagged after {} waits",
                        lag_waits - 1
                    ));
                }
                let wait = retry_after(&r.headers).unwrap_or(Duration::from_secs(5));
                let wait = wait.min(Duration::from_secs_f64(cfg.max_retry_after_secs.max(0.0)));
                ctx.warn(format!(
                    "{u}: database lag, waiting {} s as asked",
                    wait.as_secs_f32()
                ));
                tokio::time::sleep(wait).await;
                continue;
            }
            if !r.status.is_success() {
                return Err(format!("http: {u} answered HTTP {}", r.status.as_u16()));
            }
            let v = v.ok_or_else(|| format!("json: {u}: answer is not JSON"))?;
            if let Some(e) = v.get("error") {
                let info = e.get("info").and_then(Value::as_str).unwrap_or("");
                return Err(format!("api: {u}: error {code}: {info}"));
            }
            return Ok(v);
        }
    }

    /// Titles found for one query, following `continue` up to the limit.
    async fn search(&self, ctx: &RunCtx<'_>, query: &str) -> Result<Vec<String>, String> {
        let mut titles: Vec<String> = Vec::new();
        let mut offset: Option<String> = None;
        let per_page = self.cfg.limit.clamp(1, SEARCH_PAGE);
        while titles.len() < self.cfg.limit {
            let mut params = vec![
                ("action", "query".to_string()),
                ("list", "search".to_string()),
                ("srsearch", query.to_string()),
                ("srnamespace", self.cfg.namespace.to_string()),
                ("srlimit", per_page.to_string()),
                ("srprop", String::new()),
            ];
            if let Some(w) = &self.cfg.search_what {
                params.push(("srwhat", w.clone()));
            }
            if let Some(o) = &offset {
                params.push(("sroffset", o.clone()));
                params.push(("continue", "-||".to_string()));
            }
            let u = self.url_for(&params);
            let (items, next) = match ctx.listing(u.as_str()) {
                Some(cached) => cached,
                None => {
                    let v = self.call(ctx, &u).await?;
                    let items: Vec<String> = v
                        .pointer("/query/search")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|h| {
                                    h.get("title").and_then(Value::as_str).map(str::to_string)
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let next = v.pointer("/continue/sroffset").map(|o| match o {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    ctx.store_listing(u.as_str(), query, &items, next.clone())
                        .map_err(|e| e.to_string())?;
                    (items, next)
                }
            };
            let empty = items.is_empty();
            titles.extend(items);
            match next {
                Some(n) if !empty => offset = Some(n),
                _ => break,
            }
        }
        titles.truncate(self.cfg.limit);
        Ok(titles)
    }

    /// Content for a batch of titles: requested title -> (final title, text or None if missing).
    async fn contents(
        &self,
        ctx: &RunCtx<'_>,
        titles: &[String],
    ) -> Result<HashMap<String, (String, Option<String>)>, String> {
        let mut base = vec![
            ("action", "query".to_string()),
            ("titles", titles.join("|")),
            ("redirects", "1".to_string()),
        ];
        match self.cfg.text {
            WikiText::Wikitext => {
                base.push(("prop", "revisions".into()));
                base.push(("rvprop", "content".into()));
                base.push(("rvslots", "main".into()));
            }
            WikiText::Extracts => {
                base.push(("prop", "extracts".into()));
                base.push(("explaintext", "1".into()));
                base.push(("exsectionformat", "plain".into()));
                base.push(("exlimit", "max".into()));
            }
        }
        let mut rename: HashMap<String, String> = HashMap::new();
        let mut texts: HashMap<String, Option<String>> = HashMap::new();
        let mut cont: Vec<(String, String)> = Vec::new();
        for _ in 0..MAX_CONTINUE {
            let mut params: Vec<(&str, String)> = base.clone();
            let owned: Vec<(String, String)> = cont.clone();
            for (k, v) in &owned {
                params.push((k.as_str(), v.clone()));
            }
            let u = self.url_for(&params);
            let v = self.call(ctx, &u).await?;
            for key in ["/query/normalized", "/query/redirects"] {
                for m in v
                    .pointer(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let (Some(f), Some(t)) = (
                        m.get("from").and_then(Value::as_str),
                        m.get("to").and_then(Value::as_str),
                    ) {
                        rename.insert(f.to_string(), t.to_string());
                    }
                }
            }
            for p in v
                .pointer("/query/pages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(title) = p.get("title").and_then(Value::as_str) else {
                    continue;
                };
                if p.get("missing").is_some() || p.get("invalid").is_some() {
                    texts.insert(title.to_string(), None);
                    continue;
                }
                let text = match self.cfg.text {
                    WikiText::Wikitext => p
                        .pointer("/revisions/0/slots/main/content")
                        .and_then(Value::as_str),
                    WikiText::Extracts => p.get("extract").and_then(Value::as_str),
                };
                if let Some(t) = text {
                    texts.insert(title.to_string(), Some(t.to_string()));
                }
            }
            cont = match v.get("continue").and_then(Value::as_object) {
                Some(c) => c
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string()),
                        )
                    })
                    .collect(),
                None => break,
            };
        }
        let mut out = HashMap::new();
        for t in titles {
            let mut fin = t.clone();
            // normalized then redirect: at most two renames, guard against cycles.
            for _ in 0..4 {
                match rename.get(&fin) {
                    Some(n) if *n != fin => fin = n.clone(),
                    _ => break,
                }
            }
            let text = texts.get(&fin).cloned().flatten();
            out.insert(t.clone(), (fin, text));
        }
        Ok(out)
    }

    async fn run_batch(
        &self,
        ctx: &RunCtx<'_>,
        query: &str,
        batch: Vec<String>,
    ) -> anyhow::Result<()> {
        let res = self.contents(ctx, &batch).await;
        for t in &batch {
            let url = self.article_url(t);
            let (state, page) = match &res {
                Err(e) => (UrlState::Failed(format!("{e} (article {url})")), None),
                Ok(m) => match m.get(t) {
                    Some((fin, Some(text))) => {
                        let (payload, ct) = match self.cfg.text {
                            WikiText::Wikitext => (Payload::Wikitext, "text/x-wiki; charset=utf-8"),
                            WikiText::Extracts => (Payload::PlainText, "text/plain; charset=utf-8"),
                        };
                        let page = FetchedPage {
                            final_url: self.article_url(fin),
                            title: Some(fin.clone()),
                            body: text.clone(),
                            bytes: None,
                            payload,
                            content_type: ct.to_string(),
                            charset_note: None,
                            fetched_at: std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map(|d| d.as_secs())
                                .unwrap_or(0),
                        };
                        (UrlState::Fetched, Some(page))
                    }
                    Some((_, None)) => (UrlState::Skipped(SkipReason::Missing), None),
                    None => (
                        UrlState::Failed(format!(
                            "api: no page for {t} in the answer (article {url})"
                        )),
                        None,
                    ),
                },
            };
            ctx.record(&UrlRecord {
                url,
                source: self.name.clone(),
                query: Some(query.to_string()),
                state,
                fetched: page,
            })?;
        }
        if let Err(e) = res {
            ctx.warn(e);
        }
        Ok(())
    }
}

#[async_trait]
impl Source for MediaWiki {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery> {
        let searches = self.cfg.limit.div_ceil(SEARCH_PAGE).max(1);
        let batches = self.cfg.limit.div_ceil(BATCH);
        queries
            .iter()
            .map(|q| PlannedQuery {
                source: self.name.clone(),
                kind: "mediawiki".into(),
                query: q.clone(),
                requests: searches + batches,
                skipped: None,
            })
            .collect()
    }

    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()> {
        let conc = self.cfg.concurrency.max(1);
        for q in queries {
            let titles = match self.search(ctx, q).await {
                Ok(t) => t,
                Err(e) => {
                    ctx.warn(format!("query {q:?}: {e}"));
                    continue;
                }
            };
            ctx.query_done(q, titles.len());
            let mut todo = Vec::new();
            for t in titles {
                if let Claim::New = ctx.claim(&self.article_url(&t), Some(q))? {
                    todo.push(t);
                }
            }
            let batch = match self.cfg.text {
                WikiText::Wikitext => BATCH,
                // Full-text extracts come one page per request anyway (`excontinue`).
                WikiText::Extracts => 20,
            };
            let batches: Vec<Vec<String>> = todo.chunks(batch).map(|c| c.to_vec()).collect();
            let mut s = futures::stream::iter(batches)
                .map(|b| self.run_batch(ctx, q, b))
                .buffer_unordered(conc);
            while let Some(r) = s.next().await {
                r?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mw(api: &str, path: Option<&str>) -> MediaWiki {
        let cfg: MediaWikiConfig =
            serde_json::from_value(serde_json::json!({"api": api, "article_path": path})).unwrap();
        MediaWiki::new("t".into(), cfg).unwrap()
    }

    #[test]
    fn article_urls() {
        assert_eq!(
            mw("https://ru.wikipedia.org/w/api.php", None).article_url("Литва"),
            "https://ru.wikipedia.org/wiki/%D0%9B%D0%B8%D1%82%D0%B2%D0%B0"
        );
        assert_eq!(
            mw("https://dogs.fandom.com/ru/api.php", None).article_url("Abraham Lincoln"),
            "https://dogs.fandom.com/ru/wiki/Abraham_Lincoln"
        );
        assert_eq!(
            mw(
                "http://127.0.0.1:8080/mw/api.php",
                Some("/mw/index.php?title=$1")
            )
            .article_url("A/B: C"),
            "http://127.0.0.1:8080/mw/index.php?title=A/B:_C"
        );
        let bad: MediaWikiConfig = serde_json::from_value(
            serde_json::json!({"api": "https://x/w/api.php", "article_path": "/wiki/"}),
        )
        .unwrap();
        assert!(MediaWiki::new("t".into(), bad).is_err());
        let none: MediaWikiConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(MediaWiki::new("t".into(), none)
            .unwrap_err()
            .contains("api"));
    }
}
