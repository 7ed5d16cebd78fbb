//! Topic-file configuration of web sources and of the crawler.

use serde::{Deserialize, Serialize};

/// Default User-Agent; Wikimedia and polite crawling both require a contact.
pub const DEFAULT_USER_AGENT: &str =
    "collect/0.1 (+https://example.invalid/collect; collect@example.invalid)";

/// One web source of a topic file, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WebSourceConfig {
    /// Any MediaWiki Action API.
    Mediawiki(MediaWikiConfig),
    /// A SearXNG instance with the JSON format enabled.
    Searxng(SearxngConfig),
    /// Brave Web Search API.
    Brave(BraveConfig),
    /// Yandex Search API v2.
    Yandex(YandexConfig),
    /// DuckDuckGo's keyless HTML endpoint (best effort).
    Duckduckgo(DuckDuckGoConfig),
    /// An expert list of start URLs crawled same-site.
    Sites(SitesConfig),
}

impl WebSourceConfig {
    /// The `kind` tag as written in the topic file.
    pub fn kind(&self) -> &'static str {
        match self {
            WebSourceConfig::Mediawiki(_) => "mediawiki",
            WebSourceConfig::Searxng(_) => "searxng",
            WebSourceConfig::Brave(_) => "brave",
            WebSourceConfig::Yandex(_) => "yandex",
            WebSourceConfig::Duckduckgo(_) => "duckduckgo",
            WebSourceConfig::Sites(_) => "sites",
        }
    }

    /// Keyword tuples asked for by this source, if any.
    pub fn tuples(&self) -> Option<&TuplesConfig> {
        match self {
            WebSourceConfig::Mediawiki(c) => c.tuples.as_ref(),
            WebSourceConfig::Searxng(c) => c.tuples.as_ref(),
            WebSourceConfig::Brave(c) => c.tuples.as_ref(),
            WebSourceConfig::Yandex(c) => c.tuples.as_ref(),
            WebSourceConfig::Duckduckgo(c) => c.tuples.as_ref(),
            WebSourceConfig::Sites(_) => None,
        }
    }

    /// The same source under the report name `name`.
    pub fn with_name(mut self, name: String) -> Self {
        let slot = match &mut self {
            WebSourceConfig::Mediawiki(c) => &mut c.name,
            WebSourceConfig::Searxng(c) => &mut c.name,
            WebSourceConfig::Brave(c) => &mut c.name,
            WebSourceConfig::Yandex(c) => &mut c.name,
            WebSourceConfig::Duckduckgo(c) => &mut c.name,
            WebSourceConfig::Sites(c) => &mut c.name,
        };
        *slot = Some(name);
        self
    }

    /// Name used in reports: the explicit `name`, else kind plus host.
    pub fn display_name(&self) -> String {
        let (name, addr) = match self {
            WebSourceConfig::Mediawiki(c) => (&c.name, c.api.clone()),
            WebSourceConfig::Searxng(c) => (&c.name, c.url.clone()),
            WebSourceConfig::Brave(c) => (&c.name, Some(c.api.clone())),
            WebSourceConfig::Yandex(c) => (&c.name, Some(c.api.clone())),
            WebSourceConfig::Duckduckgo(c) => (&c.name, Some(c.url.clone())),
            WebSourceConfig::Sites(c) => (&c.name, c.urls.first().cloned()),
        };
        if let Some(n) = name {
            return n.clone();
        }
        let host = addr.and_then(|a| url::Url::parse(&a).ok()).and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            })
        });
        match host {
            Some(h) => format!("{}:{h}", self.kind()),
            None => self.kind().to_string(),
        }
    }
}

/// BootCaT-style random keyword tuples, deterministic for a seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuplesConfig {
    /// Keywords per tuple.
    #[serde(default = "d_tuple_size")]
    pub size: usize,
    /// Number of tuples.
    #[serde(default = "d_tuple_count")]
    pub count: usize,
    /// Random seed.
    #[serde(default = "d_one_u64")]
    pub seed: u64,
}

/// What text the MediaWiki source takes from each article.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WikiText {
    /// Raw wikitext of the current revision (`prop=revisions`).
    #[default]
    Wikitext,
    /// TextExtracts plain text (`prop=extracts&explaintext=1`).
    Extracts,
}

/// `kind: mediawiki`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaWikiConfig {
    /// Action API endpoint, e.g. `https://ru.wikipedia.org/w/api.php`.
    #[serde(default)]
    pub api: Option<String>,
    /// Articles per keyword.
    #[serde(default = "d_limit")]
    pub limit: usize,
    /// `wikitext` or `extracts`.
    #[serde(default)]
    pub text: WikiText,
    /// Article URL pattern with `$1` for the title; default: `/wiki/$1` on the API host.
    #[serde(default)]
    pub article_path: Option<String>,
    /// Search namespace.
    #[serde(default)]
    pub namespace: i64,
    /// `srwhat=` (`text`, `title`, `nearmatch`); unset lets the wiki choose.
    #[serde(default)]
    pub search_what: Option<String>,
    /// At most this many requests in flight to this wiki (Wikimedia asks for few).
    #[serde(default = "d_wiki_concurrency")]
    pub concurrency: usize,
    /// Optional keyword tuples.
    #[serde(default)]
    pub tuples: Option<TuplesConfig>,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// `kind: searxng`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearxngConfig {
    /// Instance base URL, e.g. `http://127.0.0.1:8888`.
    #[serde(default)]
    pub url: Option<String>,
    /// Result pages per query.
    #[serde(default = "d_one_usize")]
    pub pages: usize,
    /// Result URLs kept per query.
    #[serde(default = "d_limit")]
    pub limit: usize,
    /// `engines=` parameter.
    #[serde(default)]
    pub engines: Option<String>,
    /// `language=` parameter.
    #[serde(default)]
    pub language: Option<String>,
    /// Optional keyword tuples.
    #[serde(default)]
    pub tuples: Option<TuplesConfig>,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// `kind: brave`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BraveConfig {
    /// Web search endpoint.
    #[serde(default = "d_brave_api")]
    pub api: String,
    /// Environment variable holding the subscription token.
    #[serde(default = "d_brave_env")]
    pub key_env: String,
    /// Results per page (max 20).
    #[serde(default = "d_brave_count")]
    pub count: usize,
    /// Pages per query (offset 0..9).
    #[serde(default = "d_one_usize")]
    pub pages: usize,
    /// Result URLs kept per query.
    #[serde(default = "d_limit")]
    pub limit: usize,
    /// `country=` parameter.
    #[serde(default)]
    pub country: Option<String>,
    /// `search_lang=` parameter.
    #[serde(default)]
    pub search_lang: Option<String>,
    /// Optional keyword tuples.
    #[serde(default)]
    pub tuples: Option<TuplesConfig>,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// `kind: yandex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YandexConfig {
    /// Search API v2 synchronous endpoint.
    #[serde(default = "d_yandex_api")]
    pub api: String,
    /// Environment variable holding the API key.
    #[serde(default = "d_yandex_env")]
    pub key_env: String,
    /// Cloud folder id; else read from `folder_env`.
    #[serde(default)]
    pub folder_id: Option<String>,
    /// Environment variable holding the folder id.
    #[serde(default = "d_yandex_folder_env")]
    pub folder_env: String,
    /// `SEARCH_TYPE_RU`, `SEARCH_TYPE_COM`, ...
    #[serde(default = "d_yandex_type")]
    pub search_type: String,
    /// Pages per query.
    #[serde(default = "d_one_usize")]
    pub pages: usize,
    /// Result URLs kept per query.
    #[serde(default = "d_limit")]
    pub limit: usize,
    /// Optional keyword tuples.
    #[serde(default)]
    pub tuples: Option<TuplesConfig>,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// `kind: duckduckgo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuckDuckGoConfig {
    /// HTML endpoint.
    #[serde(default = "d_ddg_url")]
    pub url: String,
    /// Result URLs kept per query.
    #[serde(default = "d_limit")]
    pub limit: usize,
    /// Result pages per query (later pages POST the "Next" form).
    #[serde(default = "d_one_usize")]
    pub pages: usize,
    /// `kl=` region, e.g. `ru-ru`.
    #[serde(default)]
    pub region: Option<String>,
    /// Optional keyword tuples.
    #[serde(default)]
    pub tuples: Option<TuplesConfig>,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// `kind: sites`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SitesConfig {
    /// Start URLs.
    #[serde(default)]
    pub urls: Vec<String>,
    /// Link depth from a start URL (0 = start pages only).
    #[serde(default = "d_depth")]
    pub depth: usize,
    /// Pages per start site.
    #[serde(default = "d_max_pages")]
    pub max_pages: usize,
    /// Read robots.txt `Sitemap:` lines and `/sitemap.xml`.
    #[serde(default = "d_true")]
    pub sitemaps: bool,
    /// Name in reports.
    #[serde(default)]
    pub name: Option<String>,
}

/// Crawler politeness and safety settings (`crawl:` in the topic file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlConfig {
    /// Requests per second per host (host:port).
    #[serde(default = "d_rps")]
    pub per_host_rps: f64,
    /// Requests in flight overall.
    #[serde(default = "d_concurrency")]
    pub concurrency: usize,
    /// Page requests in flight per host.
    #[serde(default = "d_per_host_concurrency")]
    pub per_host_concurrency: usize,
    /// User-Agent header; its first token is the robots.txt product name.
    #[serde(default = "d_user_agent")]
    pub user_agent: String,
    /// TCP+TLS connect timeout, seconds.
    #[serde(default = "d_connect_timeout")]
    pub connect_timeout_secs: f64,
    /// Whole-request timeout including the body, seconds.
    #[serde(default = "d_timeout")]
    pub timeout_secs: f64,
    /// Cap on the decompressed body.
    #[serde(default = "d_max_body")]
    pub max_body_bytes: u64,
    /// Redirect hops followed per URL.
    #[serde(default = "d_max_redirects")]
    pub max_redirects: usize,
    /// Retries after timeouts, connection errors, 5xx and 429.
    #[serde(default = "d_retries")]
    pub retries: u32,
    /// First back-off step, milliseconds (doubles each retry, plus jitter).
    #[serde(default = "d_backoff")]
    pub backoff_ms: u64,
    /// A longer Retry-After than this fails the URL instead of waiting.
    #[serde(default = "d_max_retry_after")]
    pub max_retry_after_secs: f64,
    /// Allow loopback/private/link-local targets (tests, `collect demo`).
    #[serde(default)]
    pub allow_private: bool,
    /// Host names pinned to addresses instead of asking DNS, as `curl --resolve` does: a
    /// staging copy of a site, or the demo's web of named hosts on 127.0.0.1. Pinning to a
    /// private address needs `allow_private`.
    #[serde(default)]
    pub resolve: std::collections::BTreeMap<String, std::net::IpAddr>,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("all CrawlConfig fields have defaults")
    }
}

fn d_tuple_size() -> usize {
    3
}
fn d_tuple_count() -> usize {
    10
}
fn d_one_u64() -> u64 {
    1
}
fn d_one_usize() -> usize {
    1
}
fn d_limit() -> usize {
    20
}
fn d_wiki_concurrency() -> usize {
    3
}
fn d_brave_api() -> String {
    "https://api.search.brave.com/res/v1/web/search".into()
}
fn d_brave_env() -> String {
    "BRAVE_API_KEY".into()
}
fn d_brave_count() -> usize {
    20
}
fn d_yandex_api() -> String {
    "https://searchapi.api.cloud.yandex.net/v2/web/search".into()
}
fn d_yandex_env() -> String {
    "YANDEX_API_KEY".into()
}
fn d_yandex_folder_env() -> String {
    "YANDEX_FOLDER_ID".into()
}
fn d_yandex_type() -> String {
    "SEARCH_TYPE_RU".into()
}
fn d_ddg_url() -> String {
    "https://html.duckduckgo.com/html/".into()
}
fn d_depth() -> usize {
    2
}
fn d_max_pages() -> usize {
    500
}
fn d_true() -> bool {
    true
}
fn d_rps() -> f64 {
    1.0
}
fn d_concurrency() -> usize {
    8
}
fn d_per_host_concurrency() -> usize {
    2
}
fn d_user_agent() -> String {
    DEFAULT_USER_AGENT.into()
}
fn d_connect_timeout() -> f64 {
    10.0
}
fn d_timeout() -> f64 {
    30.0
}
fn d_max_body() -> u64 {
    10 * 1024 * 1024
}
fn d_max_redirects() -> usize {
    10
}
fn d_retries() -> u32 {
    3
}
fn d_backoff() -> u64 {
    500
}
fn d_max_retry_after() -> f64 {
    120.0
}
