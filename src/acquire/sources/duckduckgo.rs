//! DuckDuckGo's keyless HTML endpoint (best effort; it blocks bots quickly).

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use reqwest::Method;
use scraper::{Html, Selector};
use url::Url;

use super::{endpoint, paged_plan, RunCtx, Source};
use crate::acquire::config::DuckDuckGoConfig;
use crate::acquire::report::PlannedQuery;
use crate::markup::{self, Limits};

/// The `duckduckgo` source.
pub struct DuckDuckGo {
    name: String,
    cfg: DuckDuckGoConfig,
    base: Url,
}

/// What a DuckDuckGo HTML page held.
#[derive(Debug, PartialEq)]
pub enum DdgPage {
    /// Result URLs (redirect links decoded, ads dropped) and the next-page form.
    Results(Vec<String>, Option<NextPage>),
    /// The bot-challenge / rate-limit page.
    Blocked,
}

/// The "Next" form: POST these fields to `action`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NextPage {
    /// Absolute form action URL.
    pub action: String,
    /// Hidden fields (q, s, vqd, ...).
    pub fields: Vec<(String, String)>,
}

/// Parses a result page; `base` resolves protocol-relative links.
pub fn parse_page(html: &str, base: &Url) -> DdgPage {
    if html.contains("anomaly-modal")
        || html.contains("challenge-form")
        || html.contains("bots use DuckDuckGo too")
    {
        return DdgPage::Blocked;
    }
    // A results page over its parse budget has no results to give.
    let Ok(doc) = markup::parse_html(html, &Limits::PAGE) else {
        return DdgPage::Results(Vec::new(), None);
    };
    let (Ok(result), Ok(link)) = (
        Selector::parse("div.result"),
        Selector::parse("a.result__a"),
    ) else {
        return DdgPage::Results(Vec::new(), None);
    };
    let mut out = Vec::new();
    for r in doc.select(&result) {
        if r.value().classes().any(|c| c == "result--ad") {
            continue;
        }
        let Some(href) = r.select(&link).next().and_then(|a| a.value().attr("href")) else {
            continue;
        };
        if let Some(u) = decode_link(href, base) {
            if !out.contains(&u) {
                out.push(u);
            }
        }
    }
    DdgPage::Results(out, next_form(&doc, base))
}

fn next_form(doc: &Html, base: &Url) -> Option<NextPage> {
    let form_sel = Selector::parse("div.nav-link form").ok()?;
    let input_sel = Selector::parse("input[name]").ok()?;
    // The last nav form is "Next" (page 2+ also has "Previous" first).
    let form = doc.select(&form_sel).next_back()?;
    let action = base
        .join(form.value().attr("action").unwrap_or("/html/"))
        .ok()?;
    let fields: Vec<(String, String)> = form
        .select(&input_sel)
        .filter_map(|i| {
            Some((
                i.value().attr("name")?.to_string(),
                i.value().attr("value").unwrap_or("").to_string(),
            ))
        })
        .collect();
    fields.iter().any(|(k, _)| k == "s").then(|| NextPage {
        action: action.to_string(),
        fields,
    })
}

/// Turns `//duckduckgo.com/l/?uddg=<target>&rut=…` into the target URL.
pub fn decode_link(href: &str, base: &Url) -> Option<String> {
    let u = base.join(href).ok()?;
    if u.path() == "/l/" || u.path() == "/l" {
        let target = u
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned())?;
        return Url::parse(&target).ok().map(|t| t.to_string());
    }
    if u.host_str().is_some_and(|h| h.ends_with("duckduckgo.com")) && u.path().starts_with("/y.js")
    {
        return None; // ad click tracker
    }
    Some(u.to_string())
}

impl DuckDuckGo {
    /// One result page; `Ok(None)` when DuckDuckGo blocked us (warned, source stops).
    async fn fetch_page(
        &self,
        ctx: &RunCtx<'_>,
        u: &Url,
        form: Option<&NextPage>,
    ) -> Result<Option<(Vec<String>, Option<NextPage>)>, String> {
        let r = match form {
            None => ctx.fetcher.api_get(u, HeaderMap::new()).await?,
            Some(n) => {
                let action = Url::parse(&n.action)
                    .map_err(|e| format!("bad next-page action {}: {e}", n.action))?;
                let body: String = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(&n.fields)
                    .finish();
                let mut h = HeaderMap::new();
                h.insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                ctx.fetcher
                    .api(Method::POST, &action, h, Some(body.into_bytes()))
                    .await?
            }
        };
        // 202 is DuckDuckGo's usual "slow down" answer, with or without the challenge markup.
        let page = if r.status.as_u16() == 202 {
            DdgPage::Blocked
        } else {
            let (text, base) = (r.text(), u.clone());
            tokio::task::spawn_blocking(move || parse_page(&text, &base))
                .await
                .map_err(|e| format!("internal: {u}: {e}"))?
        };
        match page {
            DdgPage::Blocked => {
                ctx.warn(format!(
                    "{u}: DuckDuckGo answered with its bot/rate-limit page (HTTP {}); \
                     stopping this source for the rest of the run",
                    r.status.as_u16()
                ));
                Ok(None)
            }
            DdgPage::Results(..) if !r.status.is_success() => {
                Err(format!("http: {u} answered HTTP {}", r.status.as_u16()))
            }
            DdgPage::Results(items, next) => Ok(Some((items, next))),
        }
    }

    /// Checks the config; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: DuckDuckGoConfig) -> Result<Self, String> {
        let base = endpoint("url", Some(&cfg.url))?;
        Ok(DuckDuckGo { name, cfg, base })
    }

    fn page_url(&self, q: &str) -> Url {
        let mut u = self.base.clone();
        u.query_pairs_mut().append_pair("q", q);
        if let Some(kl) = &self.cfg.region {
            u.query_pairs_mut().append_pair("kl", kl);
        }
        u
    }
}

#[async_trait]
impl Source for DuckDuckGo {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery> {
        paged_plan(&self.name, "duckduckgo", queries, self.cfg.pages)
    }

    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()> {
        for q in queries {
            let mut urls: Vec<String> = Vec::new();
            let mut next: Option<NextPage> = None;
            for page in 0..self.cfg.pages.max(1) {
                // Page 1 is a GET; later pages POST the "Next" form (with its vqd token).
                let (key, form) = match (page, &next) {
                    (0, _) => (self.page_url(q), None),
                    (_, Some(n)) => {
                        let mut k = Url::parse(&n.action)?;
                        k.query_pairs_mut()
                            .extend_pairs(n.fields.iter().filter(|(f, _)| f == "q" || f == "s"));
                        (k, Some(n.clone()))
                    }
                    (_, None) => break,
                };
                let (items, more) = match ctx.listing(key.as_str()) {
                    Some((items, more)) => {
                        (items, more.and_then(|m| serde_json::from_str(&m).ok()))
                    }
                    None => match self.fetch_page(ctx, &key, form.as_ref()).await {
                        Ok(Some((items, more))) => {
                            let m = more.as_ref().and_then(|m| serde_json::to_string(m).ok());
                            ctx.store_listing(key.as_str(), q, &items, m)?;
                            (items, more)
                        }
                        Ok(None) => return Ok(()),
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
                next = more;
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
