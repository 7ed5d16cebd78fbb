//! Yandex Search API v2 (synchronous `web/search`, XML answer in `rawData`).

use async_trait::async_trait;
use base64::Engine;
use quick_xml::events::Event;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::Method;
use serde_json::{json, Value};
use url::Url;

use super::{endpoint, env_key, paged_plan, RunCtx, Source};
use crate::acquire::config::YandexConfig;
use crate::acquire::report::PlannedQuery;

/// The `yandex` source.
pub struct Yandex {
    name: String,
    cfg: YandexConfig,
    api: Url,
    key: String,
    folder: String,
}

/// Result URLs of a Yandex XML answer, or its `<error>` text when it has no results.
pub fn parse_xml(xml: &str) -> Result<Vec<String>, String> {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut urls = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut error: Option<String> = None;
    let mut text = String::new();
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                path.push(String::from_utf8_lossy(e.name().as_ref()).into_owned());
                text.clear();
            }
            Ok(Event::Text(t)) => {
                if let Ok(s) = t.decode() {
                    text.push_str(&s);
                }
            }
            Ok(Event::GeneralRef(g)) => {
                if let Ok(Some(c)) = g.resolve_char_ref() {
                    text.push(c);
                } else if let Ok(name) = g.decode() {
                    text.push_str(match name.as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Ok(Event::End(_)) => {
                let p = path.join("/");
                if p.ends_with("group/doc/url") {
                    urls.push(text.trim().to_string());
                } else if p.ends_with("response/error") {
                    error = Some(text.trim().to_string());
                }
                path.pop();
                text.clear();
            }
            Ok(Event::Eof) => break,
            Err(e) => {
                return Err(format!(
                    "xml: bad Yandex XML at byte {}: {e}",
                    r.buffer_position()
                ))
            }
            _ => {}
        }
    }
    match (urls.is_empty(), error) {
        (true, Some(e)) => Err(format!("api: Yandex error: {e}")),
        _ => Ok(urls),
    }
}

impl Yandex {
    /// Checks the config, key and folder; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: YandexConfig) -> Result<Self, String> {
        let api = endpoint("api", Some(&cfg.api))?;
        let key = env_key(&cfg.key_env)?;
        let folder = match &cfg.folder_id {
            Some(f) if !f.trim().is_empty() => f.trim().to_string(),
            _ => env_key(&cfg.folder_env)?,
        };
        Ok(Yandex {
            name,
            cfg,
            api,
            key,
            folder,
        })
    }

    async fn page(&self, ctx: &RunCtx<'_>, q: &str, page: usize) -> Result<Vec<String>, String> {
        let u = &self.api;
        let body = json!({
            "query": {"searchType": self.cfg.search_type, "queryText": q, "page": page.to_string()},
            "folderId": self.folder,
            "responseFormat": "FORMAT_XML",
        });
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let auth = HeaderValue::from_str(&format!("Api-Key {}", self.key))
            .map_err(|_| format!("{}: key has bad characters", self.cfg.key_env))?;
        h.insert(AUTHORIZATION, auth);
        let r = ctx
            .fetcher
            .api(Method::POST, u, h, Some(body.to_string().into_bytes()))
            .await?;
        let v: Option<Value> = serde_json::from_slice(&r.body).ok();
        if !r.status.is_success() {
            let msg = v
                .as_ref()
                .and_then(|v| v.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(format!(
                "http: {u} answered HTTP {} {msg}",
                r.status.as_u16()
            ));
        }
        let raw = v
            .as_ref()
            .and_then(|v| v.get("rawData"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("json: {u}: no rawData in the answer"))?;
        let xml = base64::engine::general_purpose::STANDARD
            .decode(raw.trim())
            .map_err(|e| format!("base64: {u}: {e}"))?;
        parse_xml(&String::from_utf8_lossy(&xml)).map_err(|e| format!("{e} ({u})"))
    }
}

#[async_trait]
impl Source for Yandex {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery> {
        paged_plan(&self.name, "yandex", queries, self.cfg.pages)
    }

    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()> {
        for q in queries {
            let mut urls: Vec<String> = Vec::new();
            for page in 0..self.cfg.pages.max(1) {
                // POST body is not in the URL: the listing key spells out query and page.
                let mut key = self.api.clone();
                key.query_pairs_mut()
                    .append_pair("queryText", q)
                    .append_pair("page", &page.to_string());
                let items = match ctx.listing(key.as_str()) {
                    Some((items, _)) => items,
                    None => match self.page(ctx, q, page).await {
                        Ok(items) => {
                            ctx.store_listing(key.as_str(), q, &items, None)?;
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
