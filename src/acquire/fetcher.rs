//! Polite HTTP fetching: per-host pacing, global concurrency, robots.txt,
//! address policy, retries, redirects, size caps and charset decoding.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use rand::Rng;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, ACCEPT_ENCODING, CONTENT_TYPE, LOCATION};
use reqwest::{Method, StatusCode};
use tokio::sync::{OnceCell, Semaphore};
use url::Url;

use super::charset;
use super::config::CrawlConfig;
use super::frontier::{lock, FetchedPage, Payload, SkipReason, DOCUMENT_TYPES};
use super::policy::{is_forbidden_ip, is_metadata_ip};
use super::urls::{host_key, normalize, origin_key};
use crate::markup;

/// Result of fetching one page.
#[derive(Debug, Clone)]
pub enum PageOutcome {
    /// A document.
    Fetched(FetchedPage),
    /// Deliberately not fetched; the message names the URL.
    Skipped(SkipReason, String),
    /// Failed after retries; the message starts with a short class and names the URL.
    Failed(String),
}

/// What a page fetch accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchKind {
    /// HTML, XHTML or plain text documents.
    Page,
    /// XML sitemaps (also gzipped).
    Sitemap,
}

/// Raw answer of an API call.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers.
    pub headers: HeaderMap,
    /// Decompressed body (capped).
    pub body: Vec<u8>,
}

impl ApiResponse {
    /// Body as UTF-8 text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a single HTTP exchange did not give a response.
#[derive(Debug)]
enum ExchangeError {
    Skip(SkipReason, String),
    Fail(String),
}

enum Robots {
    AllowAll,
    DisallowAll(String),
    Rules(Box<texting_robots::Robot>),
}

struct HostState {
    limiter: Mutex<Arc<DefaultDirectRateLimiter>>,
    interval: Mutex<Duration>,
    not_before: Mutex<Option<Instant>>,
    pages: Semaphore,
}

/// Shared HTTP machinery for all sources of one run.
pub struct Fetcher {
    client: reqwest::Client,
    cfg: CrawlConfig,
    agent_token: String,
    global: Semaphore,
    hosts: Mutex<HashMap<String, Arc<HostState>>>,
    robots: Mutex<HashMap<String, Arc<OnceCell<Arc<Robots>>>>>,
    sitemaps: Mutex<HashMap<String, Vec<String>>>,
    /// Pages fetched in this run, for a fetcher shared by several collections (none: off).
    pages: Option<Mutex<PageCache>>,
}

/// A run-wide cache of fetch outcomes (pages, and the answers that gave none: a 404 is a 404
/// for the whole run), keyed by kind and normalised URL, bounded in bytes: when full, the
/// oldest go first. A fetcher shared by several topics of one run
/// answers a page a second topic wants from here instead of asking the host again.
struct PageCache {
    cap: u64,
    bytes: u64,
    order: std::collections::VecDeque<String>,
    pages: HashMap<String, (PageOutcome, u64)>,
}

impl PageCache {
    fn get(&self, key: &str) -> Option<PageOutcome> {
        self.pages.get(key).map(|(p, _)| p.clone())
    }

    fn put(&mut self, key: String, outcome: &PageOutcome) {
        let size = key.len() as u64
            + match outcome {
                PageOutcome::Fetched(p) => {
                    (p.body.len() + p.bytes.as_ref().map_or(0, Vec::len)) as u64
                }
                PageOutcome::Skipped(_, m) | PageOutcome::Failed(m) => m.len() as u64,
            };
        if size > self.cap || self.pages.contains_key(&key) {
            return;
        }
        while self.bytes + size > self.cap {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((_, n)) = self.pages.remove(&old) {
                self.bytes -= n;
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.pages.insert(key, (outcome.clone(), size));
    }
}

/// DNS resolver that drops forbidden addresses, so a hostname cannot be
/// re-resolved to a private address between our check and the connect.
struct PolicyResolver;

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| !is_forbidden_ip(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(
                    format!("{host} resolves only to private or reserved addresses").into(),
                );
            }
            let it: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(it)
        })
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn secs(f: f64) -> Duration {
    Duration::from_secs_f64(if f.is_finite() && f > 0.0 { f } else { 0.0 })
}

fn limiter_for(interval: Duration) -> DefaultDirectRateLimiter {
    let quota = Quota::with_period(interval.max(Duration::from_millis(1)))
        .expect("non-zero period")
        .allow_burst(NonZeroU32::MIN);
    RateLimiter::direct(quota)
}

impl Fetcher {
    /// Builds the HTTP client; redirects and decompression are handled here, not by reqwest.
    pub fn new(cfg: &CrawlConfig) -> anyhow::Result<Self> {
        let mut b = reqwest::Client::builder()
            .user_agent(cfg.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(secs(cfg.connect_timeout_secs))
            .timeout(secs(cfg.timeout_secs))
            .pool_max_idle_per_host(2);
        if !cfg.allow_private {
            b = b.dns_resolver(Arc::new(PolicyResolver));
        }
        for (host, ip) in &cfg.resolve {
            // Pinned names skip the resolver, so its address check is made here.
            if !cfg.allow_private && is_forbidden_ip(*ip) {
                anyhow::bail!(
                    "crawl.resolve: {host} is pinned to {ip}, a private or reserved address; \
                     set crawl.allow_private: true (or --allow-private) to allow it"
                );
            }
            // The port is the URL's own: reqwest ignores the one given here.
            b = b.resolve(host, SocketAddr::new(*ip, 0));
        }
        let client = b.build()?;
        let agent_token = cfg
            .user_agent
            .split(|c: char| c == '/' || c.is_whitespace())
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("collect")
            .to_string();
        Ok(Fetcher {
            client,
            cfg: cfg.clone(),
            agent_token,
            global: Semaphore::new(cfg.concurrency.max(1)),
            hosts: Mutex::new(HashMap::new()),
            robots: Mutex::new(HashMap::new()),
            sitemaps: Mutex::new(HashMap::new()),
            pages: None,
        })
    }

    /// Keeps the pages this fetcher fetches (up to `cap` bytes of bodies) and answers a
    /// later fetch of the same URL from them: for a fetcher shared by several collections.
    pub fn with_page_cache(mut self, cap: u64) -> Self {
        self.pages = Some(Mutex::new(PageCache {
            cap,
            bytes: 0,
            order: Default::default(),
            pages: HashMap::new(),
        }));
        self
    }

    /// The crawl settings in force.
    pub fn config(&self) -> &CrawlConfig {
        &self.cfg
    }

    fn host(&self, key: &str) -> Arc<HostState> {
        let mut hosts = lock(&self.hosts);
        hosts
            .entry(key.to_string())
            .or_insert_with(|| {
                let interval = secs(1.0 / self.cfg.per_host_rps.max(0.001));
                Arc::new(HostState {
                    limiter: Mutex::new(Arc::new(limiter_for(interval))),
                    interval: Mutex::new(interval),
                    not_before: Mutex::new(None),
                    pages: Semaphore::new(self.cfg.per_host_concurrency.max(1)),
                })
            })
            .clone()
    }

    /// Waits for this host's next request slot (rate limit, Crawl-delay, Retry-After).
    async fn pace(&self, host: &HostState) {
        loop {
            let limiter = lock(&host.limiter).clone();
            limiter.until_ready().await;
            let wait =
                lock(&host.not_before).and_then(|t| t.checked_duration_since(Instant::now()));
            match wait {
                Some(d) if !d.is_zero() => tokio::time::sleep(d).await,
                _ => return,
            }
        }
    }

    /// A longer interval for one host (Crawl-delay); also spaces the next request.
    fn slow_host(&self, key: &str, interval: Duration) {
        let host = self.host(key);
        let mut cur = lock(&host.interval);
        if interval > *cur {
            *cur = interval;
            *lock(&host.limiter) = Arc::new(limiter_for(interval));
            // The fresh limiter would allow one request at once; the previous
            // request (robots.txt) was just now, so keep the spacing.
            let mut nb = lock(&host.not_before);
            let t = Instant::now() + interval;
            *nb = Some(nb.map_or(t, |o| o.max(t)));
        }
    }

    fn hold_host(&self, key: &str, d: Duration) {
        let host = self.host(key);
        let mut nb = lock(&host.not_before);
        let t = Instant::now() + d;
        *nb = Some(nb.map_or(t, |o| o.max(t)));
    }

    /// Checks scheme and (after resolution) address of a URL.
    async fn check_address(&self, u: &Url) -> Result<(), ExchangeError> {
        if u.scheme() != "http" && u.scheme() != "https" {
            return Err(ExchangeError::Skip(
                SkipReason::Scheme,
                format!("scheme {} not allowed: {u}", u.scheme()),
            ));
        }
        let host = match u.host() {
            Some(h) => h,
            None => {
                return Err(ExchangeError::Skip(
                    SkipReason::BadUrl,
                    format!("no host in {u}"),
                ))
            }
        };
        let ips: Vec<IpAddr> = match host {
            url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
            url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
            url::Host::Domain(d) if self.cfg.resolve.contains_key(d) => vec![self.cfg.resolve[d]],
            url::Host::Domain(d) => {
                let port = u.port_or_known_default().unwrap_or(80);
                match tokio::net::lookup_host((d, port)).await {
                    Ok(a) => a.map(|a| a.ip()).collect(),
                    Err(e) => {
                        return Err(ExchangeError::Fail(format!("dns: cannot resolve {u}: {e}")))
                    }
                }
            }
        };
        if let Some(ip) = ips.iter().find(|ip| is_metadata_ip(**ip)) {
            return Err(ExchangeError::Skip(
                SkipReason::PrivateAddress,
                format!("{u} resolves to cloud metadata address {ip}, never allowed"),
            ));
        }
        if self.cfg.allow_private {
            return Ok(());
        }
        if let Some(ip) = ips.iter().find(|ip| is_forbidden_ip(**ip)) {
            return Err(ExchangeError::Skip(
                SkipReason::PrivateAddress,
                format!(
                    "{u} resolves to non-public address {ip} (set crawl.allow_private or pass --allow-private to permit)"
                ),
            ));
        }
        Ok(())
    }

    /// One HTTP exchange with retries; the body is read with the size cap.
    async fn exchange(
        &self,
        method: Method,
        u: &Url,
        headers: &HeaderMap,
        body: Option<&[u8]>,
        page_slot: bool,
    ) -> Result<ApiResponse, ExchangeError> {
        self.check_address(u).await?;
        let key = host_key(u);
        let host = self.host(&key);
        let mut attempt = 0u32;
        loop {
            let resp = {
                // Per-host slot first, then the global one, then pacing: a busy
                // host holds at most `per_host_concurrency` global slots, and
                // the pacing wait happens right before sending so server-side
                // spacing matches the limit.
                let _hp = if page_slot {
                    Some(host.pages.acquire().await.map_err(closed)?)
                } else {
                    None
                };
                let _gp = self.global.acquire().await.map_err(closed)?;
                self.pace(&host).await;
                let mut req = self
                    .client
                    .request(method.clone(), u.clone())
                    .headers(headers.clone());
                if !headers.contains_key(ACCEPT_ENCODING) {
                    req = req.header(ACCEPT_ENCODING, "gzip, deflate");
                }
                if let Some(b) = body {
                    req = req.body(b.to_vec());
                }
                match req.send().await {
                    Ok(r) => {
                        let status = r.status();
                        let hdrs = r.headers().clone();
                        match self.read_body(r, u).await {
                            Ok(b) => Ok(ApiResponse {
                                status,
                                headers: hdrs,
                                body: b,
                            }),
                            Err(e) => Err(e),
                        }
                    }
                    Err(e) => Err(ExchangeError::Fail(describe_reqwest(&e, u))),
                }
            };
            let retry_after = match &resp {
                Ok(r)
                    if r.status == StatusCode::TOO_MANY_REQUESTS || r.status.is_server_error() =>
                {
                    retry_after(&r.headers)
                }
                Ok(_) => return resp,
                Err(ExchangeError::Skip(..)) => return resp,
                Err(ExchangeError::Fail(_)) => None,
            };
            if attempt >= self.cfg.retries {
                return match resp {
                    Ok(r) => Ok(r),
                    Err(e) => Err(e),
                };
            }
            let backoff = self.cfg.backoff_ms.saturating_mul(1 << attempt.min(10));
            let jitter = rand::thread_rng().gen_range(0..=backoff / 2 + 1);
            let mut wait = Duration::from_millis(backoff + jitter);
            if let Some(ra) = retry_after {
                if ra > secs(self.cfg.max_retry_after_secs) {
                    return Err(ExchangeError::Fail(format!(
                        "retry-after: {u} asks to wait {} s, more than max_retry_after_secs",
                        ra.as_secs()
                    )));
                }
                wait = wait.max(ra);
                // Retry-After speaks for the whole host, not just this URL.
                self.hold_host(&key, ra);
            }
            attempt += 1;
            tokio::time::sleep(wait).await;
        }
    }

    /// Reads a body with the compressed and decompressed size capped.
    async fn read_body(&self, mut r: reqwest::Response, u: &Url) -> Result<Vec<u8>, ExchangeError> {
        let cap = self.cfg.max_body_bytes;
        if let Some(len) = r.content_length() {
            if len > cap {
                return Err(ExchangeError::Skip(
                    SkipReason::TooLarge,
                    format!("{u}: Content-Length {len} above max_body_bytes {cap}"),
                ));
            }
        }
        let enc = r
            .headers()
            .get(reqwest::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let mut sink = CappedSink::new(&enc, cap, u)?;
        loop {
            match r.chunk().await {
                Ok(Some(c)) => sink.write(&c)?,
                Ok(None) => break,
                Err(e) => return Err(ExchangeError::Fail(describe_reqwest(&e, u))),
            }
        }
        sink.finish()
    }

    /// An API request (no robots.txt: APIs are meant for programs), paced per host.
    pub async fn api(
        &self,
        method: Method,
        u: &Url,
        headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<ApiResponse, String> {
        self.exchange(method, u, &headers, body.as_deref(), false)
            .await
            .map_err(|e| match e {
                ExchangeError::Skip(r, m) => format!("{r}: {m}"),
                ExchangeError::Fail(m) => m,
            })
    }

    /// GET for an API with a JSON answer.
    pub async fn api_get(&self, u: &Url, headers: HeaderMap) -> Result<ApiResponse, String> {
        self.api(Method::GET, u, headers, None).await
    }

    async fn robots_for(&self, u: &Url) -> Arc<Robots> {
        let origin = origin_key(u);
        let cell = lock(&self.robots)
            .entry(origin.clone())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        cell.get_or_init(|| async { Arc::new(self.load_robots(u, &origin).await) })
            .await
            .clone()
    }

    /// Fetches robots.txt with RFC 9309 semantics for errors.
    async fn load_robots(&self, u: &Url, origin: &str) -> Robots {
        let mut target = match u.join("/robots.txt") {
            Ok(t) => t,
            Err(_) => return Robots::AllowAll,
        };
        // RFC 9309 §2.3.1.2: follow at least five redirects.
        for _ in 0..5 {
            let resp = match self
                .exchange(Method::GET, &target, &HeaderMap::new(), None, true)
                .await
            {
                Ok(r) => r,
                Err(ExchangeError::Skip(SkipReason::TooLarge, _)) => return Robots::AllowAll,
                Err(ExchangeError::Skip(_, m)) | Err(ExchangeError::Fail(m)) => {
                    return Robots::DisallowAll(format!("robots.txt of {origin} unreachable ({m})"))
                }
            };
            let s = resp.status.as_u16();
            if resp.status.is_redirection() {
                match resp
                    .headers
                    .get(LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| target.join(l).ok())
                {
                    Some(next) => {
                        target = next;
                        continue;
                    }
                    None => return Robots::AllowAll,
                }
            }
            if (400..500).contains(&s) {
                return Robots::AllowAll;
            }
            if s >= 500 || !resp.status.is_success() {
                return Robots::DisallowAll(format!("robots.txt of {origin} answered HTTP {s}"));
            }
            let body = &resp.body[..resp.body.len().min(500 * 1024)];
            return match texting_robots::Robot::new(&self.agent_token, body) {
                Ok(r) => {
                    if let Some(d) = r.delay {
                        let want = Duration::from_secs_f32(d.clamp(0.0, 60.0));
                        self.slow_host(&host_key(u), want);
                    }
                    if !r.sitemaps.is_empty() {
                        lock(&self.sitemaps).insert(origin.to_string(), r.sitemaps.clone());
                    }
                    Robots::Rules(Box::new(r))
                }
                // An unparseable file is treated as no rules: RFC 9309 says parse what you can.
                Err(_) => Robots::AllowAll,
            };
        }
        Robots::AllowAll
    }

    /// `Sitemap:` lines of an origin's robots.txt (after it was read).
    pub async fn robots_sitemaps(&self, u: &Url) -> Vec<String> {
        let _ = self.robots_for(u).await;
        lock(&self.sitemaps)
            .get(&origin_key(u))
            .cloned()
            .unwrap_or_default()
    }

    /// Checks robots.txt for one URL; `Err` names the URL and the rule.
    pub async fn robots_allowed(&self, u: &Url) -> Result<(), String> {
        match &*self.robots_for(u).await {
            Robots::AllowAll => Ok(()),
            Robots::DisallowAll(why) => Err(format!("{u}: {why}, so disallowed")),
            Robots::Rules(r) => {
                if u.path() == "/robots.txt" || r.allowed(u.as_str()) {
                    Ok(())
                } else {
                    Err(format!("{u}: disallowed by robots.txt"))
                }
            }
        }
    }

    /// Fetches a document, following redirects hop by hop so that every hop
    /// passes robots.txt and the address policy.
    pub async fn fetch(&self, start: &Url, kind: FetchKind) -> PageOutcome {
        let Some(cache) = &self.pages else {
            return self.fetch_uncached(start, kind).await;
        };
        let key = format!("{kind:?} {}", normalize(start.clone()));
        if let Some(known) = lock(cache).get(&key) {
            return known;
        }
        let got = self.fetch_uncached(start, kind).await;
        // A shutdown is this run's state, not the URL's answer.
        if !matches!(&got, PageOutcome::Failed(m) if m.starts_with("shutdown")) {
            lock(cache).put(key, &got);
        }
        got
    }

    async fn fetch_uncached(&self, start: &Url, kind: FetchKind) -> PageOutcome {
        let mut u = normalize(start.clone());
        let mut seen: HashSet<String> = HashSet::new();
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(match kind {
                FetchKind::Page => {
                    "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,\
                     application/vnd.openxmlformats-officedocument.wordprocessingml.document;q=0.8,\
                     application/vnd.oasis.opendocument.text;q=0.8,application/epub+zip;q=0.8,\
                     */*;q=0.1"
                }
                FetchKind::Sitemap => "application/xml,text/xml;q=0.9,*/*;q=0.1",
            }),
        );
        let mut hops = 0usize;
        loop {
            if !seen.insert(u.as_str().to_string()) {
                return PageOutcome::Skipped(
                    SkipReason::RedirectLoop,
                    format!("{start}: redirect loop at {u}"),
                );
            }
            if let Err(e) = self.check_address(&u).await {
                return match e {
                    ExchangeError::Skip(r, m) => PageOutcome::Skipped(r, m),
                    ExchangeError::Fail(m) => PageOutcome::Failed(m),
                };
            }
            if let Err(m) = self.robots_allowed(&u).await {
                return PageOutcome::Skipped(SkipReason::Robots, m);
            }
            let resp = match self.exchange(Method::GET, &u, &headers, None, true).await {
                Ok(r) => r,
                Err(ExchangeError::Skip(r, m)) => return PageOutcome::Skipped(r, m),
                Err(ExchangeError::Fail(m)) => return PageOutcome::Failed(m),
            };
            if resp.status.is_redirection() && resp.status != StatusCode::NOT_MODIFIED {
                hops += 1;
                if hops > self.cfg.max_redirects {
                    return PageOutcome::Skipped(
                        SkipReason::TooManyRedirects,
                        format!("{start}: more than {} redirects", self.cfg.max_redirects),
                    );
                }
                let loc = resp.headers.get(LOCATION).and_then(|l| l.to_str().ok());
                match loc.and_then(|l| u.join(l).ok()) {
                    Some(next) => {
                        u = normalize(next);
                        continue;
                    }
                    None => {
                        return PageOutcome::Failed(format!(
                            "redirect: {u} answered {} without a usable Location",
                            resp.status
                        ))
                    }
                }
            }
            if !resp.status.is_success() {
                let class = if resp.status.as_u16() == 429 {
                    "http-429"
                } else {
                    "http"
                };
                return PageOutcome::Failed(format!(
                    "{class}: {u} answered HTTP {}",
                    resp.status.as_u16()
                ));
            }
            // Decompressing, charset detection and the title scan are CPU work on up to
            // `max_body_bytes`: off the runtime, so a hostile page delays only itself.
            let cap = self.cfg.max_body_bytes;
            let at = u.clone();
            return tokio::task::spawn_blocking(move || page_from(&at, resp, kind, cap))
                .await
                .unwrap_or_else(|e| PageOutcome::Failed(format!("internal: {u}: {e}")));
        }
    }
}

/// The fetched document in a successful answer, or why there is none.
fn page_from(u: &Url, resp: ApiResponse, kind: FetchKind, max_body_bytes: u64) -> PageOutcome {
    let ct = resp
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let payload = match (kind, mime.as_str()) {
        (FetchKind::Page, "text/html" | "application/xhtml+xml") => Payload::Html,
        (FetchKind::Page, "text/plain") => Payload::PlainText,
        (FetchKind::Page, m) if DOCUMENT_TYPES.contains(&m) => Payload::Document,
        (FetchKind::Page, "") if looks_like_html(&resp.body) => Payload::Html,
        (FetchKind::Sitemap, _) => Payload::PlainText,
        _ => {
            return PageOutcome::Skipped(
                SkipReason::ContentType,
                format!(
                    "{u}: content type {:?} is not HTML, plain text or a document",
                    if ct.is_empty() { "none" } else { &ct }
                ),
            )
        }
    };
    if payload == Payload::Document {
        // The bytes go to the store as they came (within `max_body_bytes`, checked while
        // reading); the web reader turns them into text.
        return PageOutcome::Fetched(FetchedPage {
            final_url: u.to_string(),
            title: None,
            body: String::new(),
            bytes: Some(resp.body),
            payload,
            content_type: ct,
            charset_note: None,
            fetched_at: now_secs(),
        });
    }
    let tld = u
        .host_str()
        .and_then(|h| h.rsplit('.').next())
        .map(|s| s.to_string());
    let body = if kind == FetchKind::Sitemap && resp.body.starts_with(&[0x1f, 0x8b]) {
        // sitemap.xml.gz arrives gzipped without Content-Encoding.
        let mut sink = match CappedSink::new("gzip", max_body_bytes, u) {
            Ok(s) => s,
            Err(_) => return PageOutcome::Failed(format!("gzip: {u}")),
        };
        match sink.write(&resp.body).and_then(|_| sink.finish()) {
            Ok(b) => b,
            Err(ExchangeError::Skip(r, m)) => return PageOutcome::Skipped(r, m),
            Err(ExchangeError::Fail(m)) => return PageOutcome::Failed(m),
        }
    } else {
        resp.body
    };
    let decoded = charset::decode(&body, &ct, payload == Payload::Html, tld.as_deref());
    if kind == FetchKind::Page && markup::looks_binary(&decoded.text) {
        return PageOutcome::Skipped(
            SkipReason::NotText,
            format!("{u}: binary content served as {ct:?}"),
        );
    }
    let title = if payload == Payload::Html {
        html_title(&decoded.text)
    } else {
        None
    };
    PageOutcome::Fetched(FetchedPage {
        final_url: u.to_string(),
        title,
        body: decoded.text,
        bytes: None,
        charset_note: decoded.note,
        payload,
        content_type: if ct.is_empty() {
            "text/html".into()
        } else {
            ct
        },
        fetched_at: now_secs(),
    })
}

fn closed<E>(_: E) -> ExchangeError {
    ExchangeError::Fail("shutdown: fetcher closed".into())
}

fn looks_like_html(b: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&b[..b.len().min(512)]).to_ascii_lowercase();
    let t = head.trim_start();
    t.starts_with("<!doctype html") || t.starts_with("<html") || t.contains("<head")
}

/// `<title>` text, whitespace collapsed. A title is raw text (no child elements), so it is
/// found by a scan for its tags, and only that slice is parsed (for its character
/// references): the page itself is never parsed here, so its size and nesting cost nothing.
pub fn html_title(html: &str) -> Option<String> {
    let lower_at = |i: usize, tag: &str| {
        html.as_bytes()
            .get(i..i + tag.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(tag.as_bytes()))
    };
    let mut from = 0;
    let open = loop {
        let i = from + html.get(from..)?.find('<')?;
        if lower_at(i, "<title")
            && matches!(
                html.as_bytes().get(i + 6),
                Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
            )
        {
            break i;
        }
        if lower_at(i, "<body") {
            return None;
        }
        from = i + 1;
    };
    let start = open + html[open..].find('>')? + 1;
    let len = html[start..]
        .char_indices()
        .find(|&(i, c)| c == '<' && lower_at(start + i, "</title"))
        .map_or(html.len() - start, |(i, _)| i)
        .min(4096);
    let raw = markup::truncate_at_char_boundary(&html[start..], len);
    let doc = markup::parse_html(&format!("<title>{raw}</title>"), &markup::Limits::PAGE).ok()?;
    let sel = scraper::Selector::parse("title").ok()?;
    let t = doc.select(&sel).next()?.text().collect::<String>();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// Parses Retry-After as seconds or an HTTP date.
pub fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(s) = v.parse::<f64>() {
        return Some(secs(s));
    }
    let t = httpdate::parse_http_date(v).ok()?;
    Some(t.duration_since(SystemTime::now()).unwrap_or_default())
}

fn describe_reqwest(e: &reqwest::Error, u: &Url) -> String {
    let class = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() || e.is_decode() {
        "body"
    } else {
        "network"
    };
    // The source chain carries the useful part ("connection reset by peer").
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    format!("{class}: {u}: {msg}")
}

/// Collects a body, decompressing on the fly, failing once the output passes the cap.
struct CappedSink<'a> {
    cap: u64,
    u: &'a Url,
    inner: Sink,
    raw: u64,
}

enum Sink {
    Plain(Vec<u8>),
    Gzip(flate2::write::MultiGzDecoder<Limited>),
    Deflate(flate2::write::ZlibDecoder<Limited>),
    RawDeflate(flate2::write::DeflateDecoder<Limited>),
}

/// A Vec writer that refuses to grow beyond its cap.
struct Limited {
    buf: Vec<u8>,
    cap: u64,
}

impl Write for Limited {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() as u64 + data.len() as u64 > self.cap {
            return Err(std::io::Error::other("too-large"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> CappedSink<'a> {
    fn new(encoding: &str, cap: u64, u: &'a Url) -> Result<Self, ExchangeError> {
        let lim = || Limited {
            buf: Vec::new(),
            cap,
        };
        let inner = match encoding {
            "" | "identity" => Sink::Plain(Vec::new()),
            "gzip" | "x-gzip" => Sink::Gzip(flate2::write::MultiGzDecoder::new(lim())),
            "deflate" => Sink::Deflate(flate2::write::ZlibDecoder::new(lim())),
            other => {
                return Err(ExchangeError::Fail(format!(
                    "encoding: {u}: unsupported Content-Encoding {other:?}"
                )))
            }
        };
        Ok(CappedSink {
            cap,
            u,
            inner,
            raw: 0,
        })
    }

    fn too_large(&self) -> ExchangeError {
        ExchangeError::Skip(
            SkipReason::TooLarge,
            format!("{}: body above max_body_bytes {}", self.u, self.cap),
        )
    }

    fn write(&mut self, data: &[u8]) -> Result<(), ExchangeError> {
        self.raw += data.len() as u64;
        if self.raw > self.cap {
            return Err(self.too_large());
        }
        let r = match &mut self.inner {
            Sink::Plain(v) => {
                v.extend_from_slice(data);
                Ok(())
            }
            Sink::Gzip(d) => d.write_all(data),
            Sink::Deflate(d) => {
                let r = d.write_all(data);
                // Some servers send raw deflate despite the RFC; switch once.
                if r.is_err() && d.total_out() == 0 {
                    let mut raw = flate2::write::DeflateDecoder::new(Limited {
                        buf: Vec::new(),
                        cap: self.cap,
                    });
                    let r2 = raw.write_all(data);
                    self.inner = Sink::RawDeflate(raw);
                    r2
                } else {
                    r
                }
            }
            Sink::RawDeflate(d) => d.write_all(data),
        };
        self.map_io(r)
    }

    fn map_io(&self, r: std::io::Result<()>) -> Result<(), ExchangeError> {
        match r {
            Ok(()) => Ok(()),
            Err(e) if e.to_string().contains("too-large") => Err(self.too_large()),
            Err(e) => Err(ExchangeError::Fail(format!(
                "decode: {}: bad compressed body: {e}",
                self.u
            ))),
        }
    }

    fn finish(self) -> Result<Vec<u8>, ExchangeError> {
        let u = self.u;
        let cap = self.cap;
        let fin = |r: std::io::Result<Limited>| match r {
            Ok(l) => Ok(l.buf),
            Err(e) if e.to_string().contains("too-large") => Err(ExchangeError::Skip(
                SkipReason::TooLarge,
                format!("{u}: body above max_body_bytes {cap}"),
            )),
            Err(e) => Err(ExchangeError::Fail(format!(
                "decode: {u}: bad compressed body: {e}"
            ))),
        };
        match self.inner {
            Sink::Plain(v) => Ok(v),
            Sink::Gzip(d) => fin(d.finish()),
            Sink::Deflate(d) => fin(d.finish()),
            Sink::RawDeflate(d) => fin(d.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_pinned_to_a_private_address_needs_allow_private() {
        let pinned = |allow_private| CrawlConfig {
            allow_private,
            resolve: [("site.example".to_string(), "10.0.0.7".parse().unwrap())].into(),
            ..CrawlConfig::default()
        };
        let refused = Fetcher::new(&pinned(false)).err().unwrap().to_string();
        assert!(
            refused.contains("site.example") && refused.contains("allow_private"),
            "{refused}"
        );
        assert!(Fetcher::new(&pinned(true)).is_ok());
        let public = CrawlConfig {
            resolve: [("site.example".to_string(), "93.184.215.14".parse().unwrap())].into(),
            ..CrawlConfig::default()
        };
        assert!(Fetcher::new(&public).is_ok());
    }

    #[test]
    fn titles_are_scanned_not_parsed() {
        assert_eq!(
            html_title(
                "<html><head><TITLE lang=en>\n Dogs &amp; cats &#8212; a\tguide </TITLE></head>"
            ),
            Some("Dogs & cats \u{2014} a guide".into())
        );
        assert_eq!(html_title("<html><body><title>late</title>"), None);
        assert_eq!(html_title("<titles>x</titles><title></title>"), None);
        assert_eq!(
            html_title("<title>unclosed, до конца"),
            Some("unclosed, до конца".into())
        );
        // The page that stalled a crawl: 200k unclosed <div>s after the title, and 2 MiB of
        // '<' that each start no tag. The scan reads each byte once.
        let hostile = format!(
            "<title>deep</title>{}{}",
            "<div>".repeat(200_000),
            "<".repeat(2 << 20)
        );
        let started = Instant::now();
        assert_eq!(html_title(&hostile), Some("deep".into()));
        assert_eq!(html_title(&hostile[19..]), None);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn binary_under_a_text_type_is_not_text() {
        let mut seed = 7u32;
        let noise: Vec<u8> = (0..50_000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as u8
            })
            .collect();
        let u = Url::parse("http://a.example/x").unwrap();
        for ct in [
            "text/html",
            "text/html; charset=utf-8",
            "text/plain; charset=iso-8859-1",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
            let resp = ApiResponse {
                status: StatusCode::OK,
                headers,
                body: noise.clone(),
            };
            match page_from(&u, resp, FetchKind::Page, 1 << 20) {
                PageOutcome::Skipped(SkipReason::NotText, m) => {
                    assert!(m.contains("binary"), "{m}")
                }
                other => panic!("{ct}: {other:?}"),
            }
        }
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert(reqwest::header::RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let later = SystemTime::now() + Duration::from_secs(30);
        h.insert(
            reqwest::header::RETRY_AFTER,
            HeaderValue::from_str(&httpdate::fmt_http_date(later)).unwrap(),
        );
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        h.insert(
            reqwest::header::RETRY_AFTER,
            HeaderValue::from_static("soon"),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn capped_sink_stops_bombs_and_bad_gzip() {
        let u = Url::parse("http://example.invalid/x").unwrap();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![0u8; 1 << 20]).unwrap();
        let gz = e.finish().unwrap();
        let mut s = CappedSink::new("gzip", 1000, &u).unwrap();
        let r = s.write(&gz).and_then(|_| s.finish());
        assert!(matches!(
            r,
            Err(ExchangeError::Skip(SkipReason::TooLarge, _))
        ));
        let mut s = CappedSink::new("gzip", 1 << 21, &u).unwrap();
        assert_eq!(
            s.write(&gz).and_then(|_| s.finish()).unwrap().len(),
            1 << 20
        );
        let mut s = CappedSink::new("gzip", 1000, &u).unwrap();
        let r = s.write(b"not gzip at all").and_then(|_| s.finish());
        assert!(matches!(r, Err(ExchangeError::Fail(m)) if m.contains("example.invalid")));
        assert!(CappedSink::new("br", 10, &u).is_err());
    }
}
