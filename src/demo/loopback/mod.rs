//! A loopback web on 127.0.0.1 for tests and `collect demo`: search engines
//! and wikis answering from captured responses, plus sites with robots.txt,
//! sitemaps, redirects, odd charsets and faults.

pub mod search;
pub mod server;
pub mod wiki;

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use server::{Handler, LogEntry, Reply, Request, Response, Server};
pub use wiki::WikiLang;

use crate::acquire::config::{
    BraveConfig, DuckDuckGoConfig, MediaWikiConfig, SearxngConfig, SitesConfig, WebSourceConfig,
    WikiText, YandexConfig,
};

/// Crawl-delay announced by the main site's robots.txt, seconds.
pub const MAIN_CRAWL_DELAY: f64 = 0.4;
/// Size of `/big` on the main site (tests set a smaller `max_body_bytes`).
pub const BIG_BYTES: usize = 2 * 1024 * 1024;
/// Decompressed size of `/bomb` on the main site.
pub const BOMB_BYTES: usize = 64 * 1024 * 1024;
/// API key the Brave and Yandex stand-ins accept.
pub const LOOPBACK_KEY: &str = "loopback-key";

/// Keywords that hit captured answers of every stand-in.
pub const CAPTURED_KEYWORDS: &[&str] = &["species", "Литва", "hello world", "foo"];

/// Russian text used on the charset pages.
pub const RU_TEXT: &str =
    "Лайка - охотничья порода собак. Съешь же ещё этих мягких французских булок, да выпей чаю.";

/// The whole loopback web; servers stop when it is dropped.
pub struct LoopbackWeb {
    /// Main site: robots.txt with Disallow + Crawl-delay + Sitemap, charsets, faults.
    pub main: Server,
    /// robots.txt answers 500: nothing else may be requested.
    pub closed: Server,
    /// robots.txt answers 404 (allow all); also serves `/ext/...` pages for search results.
    pub open: Server,
    /// SearXNG stand-in.
    pub searxng: Server,
    /// Brave stand-in.
    pub brave: Server,
    /// Yandex stand-in.
    pub yandex: Server,
    /// DuckDuckGo stand-in.
    pub duckduckgo: Server,
    /// English MediaWiki stand-in.
    pub wiki_en: Server,
    /// Russian MediaWiki stand-in.
    pub wiki_ru: Server,
}

fn page(title: &str, body: &str) -> String {
    format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>")
}

fn links(paths: &[&str]) -> String {
    paths
        .iter()
        .map(|p| format!("<a href=\"{p}\">{p}</a> "))
        .collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

fn gzip_zeros(n: usize) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.len());
        let _ = e.write_all(&chunk[..k]);
        left -= k;
    }
    e.finish().unwrap_or_default()
}

/// Paths linked from the main site's home page.
pub const MAIN_LINKS: &[&str] = &[
    "/gz",
    "/a",
    "/b",
    "/private/secret",
    "/cp1251",
    "/koi8r",
    "/detect1251",
    "/redirect",
    "/loop1",
    "/big",
    "/bomb",
    "/pdf",
    "/slow",
    "/flaky",
    "/limited",
    "/reset",
    "/always500",
    "/to-metadata",
    "/deep-redirect",
    "/utf8?utm_source=news&fbclid=abc#section",
    "/utf8",
    "http://example.invalid/offsite",
];

/// The site of faults: robots.txt with Disallow, Crawl-delay and a sitemap at `base`, odd
/// charsets, redirects and loops, oversized and compressed bodies, slow, flaky and failing pages;
/// the home page links `home_links` (a subset of [`MAIN_LINKS`], or all of them).
pub fn main_site(
    base: Arc<std::sync::OnceLock<String>>,
    home_links: &'static [&'static str],
) -> Handler {
    let flaky = Arc::new(AtomicUsize::new(0));
    let limited = Arc::new(AtomicUsize::new(0));
    let bomb = Arc::new(gzip_zeros(BOMB_BYTES));
    Arc::new(move |req: &Request| -> Reply {
        let me = base.get().cloned().unwrap_or_default();
        let p = req.path.as_str();
        let r = match p {
            "/robots.txt" => Response::new(
                200,
                "text/plain",
                format!(
                    "User-agent: *\nDisallow: /private/\nCrawl-delay: {MAIN_CRAWL_DELAY}\n\nUser-agent: BadBot\nDisallow: /\n\nSitemap: {me}/sitemap.xml\n"
                ),
            ),
            "/sitemap.xml" => Response::new(
                200,
                "application/xml",
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <url><loc>{me}/from-sitemap</loc></url><url><loc>{me}/private/in-sitemap</loc></url>\
                     <url><loc>{me}/a</loc></url></urlset>"
                ),
            ),
            "/" => Response::html(page("Главная", &links(home_links))),
            "/a" => Response::html(page("Page A", &format!("<p>Alpha.</p>{}", links(&["/c", "/", "/a#x"])))),
            "/b" => Response::html(page("Page B", "<p>Bravo.</p>")),
            "/c" => Response::html(page("Page C", &format!("<p>Depth two.</p>{}", links(&["/d"])))),
            "/d" => Response::html(page("Page D", "<p>Depth three: beyond depth 2.</p>")),
            "/utf8" => Response::html(page("UTF-8", &format!("<p>{RU_TEXT}</p>"))),
            "/from-sitemap" => Response::html(page("From sitemap", "<p>Only the sitemap links here.</p>")),
            "/redirected" => Response::html(page("Redirect target", "<p>Arrived.</p>")),
            "/cp1251" => {
                let html = format!("<html><head><title>Windows-1251</title></head><body><p>{RU_TEXT}</p></body></html>");
                Response::new(200, "text/html; charset=windows-1251", encoding_rs::WINDOWS_1251.encode(&html).0.into_owned())
            }
            "/koi8r" => {
                let html = format!(
                    "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\"><title>КОИ-8</title></head><body><p>{RU_TEXT}</p></body></html>"
                );
                Response::new(200, "text/html", encoding_rs::KOI8_R.encode(&html).0.into_owned())
            }
            "/detect1251" => {
                let html = format!("<html><head><title>Без объявления</title></head><body><p>{RU_TEXT} {RU_TEXT}</p></body></html>");
                Response::new(200, "text/html", encoding_rs::WINDOWS_1251.encode(&html).0.into_owned())
            }
            "/redirect" => Response::redirect(301, "/redirected"),
            "/deep-redirect" => Response::redirect(302, "/private/secret"),
            "/loop1" => Response::redirect(302, "/loop2"),
            "/loop2" => Response::redirect(302, "/loop1"),
            "/to-metadata" => Response::redirect(302, "http://169.254.169.254/latest/meta-data/"),
            "/big" => Response::new(200, "text/html", vec![b'a'; BIG_BYTES]),
            "/bomb" => Response::new(200, "text/html", bomb.as_ref().clone()).with_header("Content-Encoding", "gzip"),
            "/gz" => Response::new(200, "text/html; charset=utf-8", gzip(page("Gzipped", "<p>Compressed fine.</p>").as_bytes()))
                .with_header("Content-Encoding", "gzip"),
            "/pdf" => Response::new(200, "application/pdf", b"%PDF-1.4 not a page".to_vec()),
            "/slow" => Response::html(page("Slow", "<p>Too late.</p>")).delayed(Duration::from_secs(3)),
            "/flaky" => {
                if flaky.fetch_add(1, Ordering::SeqCst) == 0 {
                    Response::new(503, "text/html", "busy")
                } else {
                    Response::html(page("Flaky", "<p>Second try works.</p>"))
                }
            }
            "/limited" => {
                if limited.fetch_add(1, Ordering::SeqCst) == 0 {
                    Response::new(429, "text/html", "slow down").with_header("Retry-After", "1")
                } else {
                    Response::html(page("Limited", "<p>After Retry-After.</p>"))
                }
            }
            "/reset" => return Reply::Reset,
            "/always500" => Response::new(500, "text/html", "broken"),
            _ if p.starts_with("/private/") => Response::html(page("Secret", "<p>robots.txt forbids this.</p>")),
            _ => Response::not_found(),
        };
        r.into()
    })
}

/// A site whose robots.txt answers 500: nothing else on it may be requested.
pub fn closed_site() -> Handler {
    Arc::new(|req: &Request| -> Reply {
        match req.path.as_str() {
            "/robots.txt" => Response::new(500, "text/plain", "oops").into(),
            _ => Response::html(page("Closed", &links(&["/x"]))).into(),
        }
    })
}

/// The plain-text extract in a captured TextExtracts response.
fn captured_extract(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| {
            v["query"]["pages"][0]["extract"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Text as HTML paragraphs, one per line of the input.
fn paragraphs(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let l = l
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            format!("<p>{l}</p>\n")
        })
        .collect()
}

/// A page with site chrome around `main`, as real sites serve copies of articles.
fn chrome_page(title: &str, main: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title} | Open site</title></head><body>\
         <header><nav><a href=\"/\">Home</a> <a href=\"/x\">Travel</a> <a href=\"/y\">Animals</a></nav></header>\
         <main><article><h1>{title}</h1>{main}</article></main>\
         <aside><h2>Popular</h2><ul><li><a href=\"/x\">Lithuania</a></li><li><a href=\"/y\">Aardvark</a></li></ul></aside>\
         <footer><p>© Open site. All rights reserved. Cookies help us deliver our services.</p></footer></body></html>"
    )
}

fn open_site() -> Handler {
    // The demo's near-duplicates: /x republishes the Russian Wikipedia article «Литва» whole (a
    // duplicate of what the Russian wiki source returns); /y quotes the start of the English
    // article "Aardvark" inside a short note of its own (contained in the wiki's copy).
    let litva = captured_extract(include_str!(
        "fixtures/mediawiki/ruwiki/05_extracts_plain_full_litva.body.json"
    ));
    let aardvark = captured_extract(include_str!(
        "fixtures/mediawiki/enwiki/11_extracts_plain_full.body.json"
    ));
    let quoted: String = aardvark
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect::<Vec<_>>()
        .join("\n");
    let x_page = chrome_page("Литва", &paragraphs(&litva));
    let y_page = chrome_page(
        "At the zoo: the aardvark house",
        &format!(
            "<p>We visited the night house of the zoo, where the aardvarks live. The keeper read the encyclopedia entry aloud while they dug:</p><blockquote>{}</blockquote><p>We stayed until closing time.</p>",
            paragraphs(&quoted)
        ),
    );
    Arc::new(move |req: &Request| -> Reply {
        let p = req.path.as_str();
        match p {
            "/robots.txt" => Response::not_found().into(),
            "/" => Response::html(page("Open", &links(&["/x", "/y"]))).into(),
            "/x" => Response::html(x_page.clone()).into(),
            "/y" => Response::html(y_page.clone()).into(),
            _ if p.starts_with("/ext/") => {
                let orig = &p[5..];
                Response::html(page(
                    &format!("Result {orig}"),
                    &format!("<p>Loopback copy of a search result that pointed at {orig}.</p>"),
                ))
                .into()
            }
            _ => Response::not_found().into(),
        }
    })
}

impl LoopbackWeb {
    /// Starts every server on an ephemeral 127.0.0.1 port.
    pub async fn start() -> std::io::Result<LoopbackWeb> {
        Self::start_with(0).await
    }

    /// Like `start`, with the wikis answering the first `maxlag_first` API calls with maxlag.
    pub async fn start_with(maxlag_first: usize) -> std::io::Result<LoopbackWeb> {
        let main_base = Arc::new(std::sync::OnceLock::new());
        let main = Server::start(main_site(main_base.clone(), MAIN_LINKS)).await?;
        let _ = main_base.set(main.base());
        let open = Server::start(open_site()).await?;
        let site = open.base();
        Ok(LoopbackWeb {
            main,
            closed: Server::start(closed_site()).await?,
            searxng: Server::start(search::searxng(site.clone())).await?,
            brave: Server::start(search::brave(site.clone(), LOOPBACK_KEY.into())).await?,
            yandex: Server::start(search::yandex(site.clone(), LOOPBACK_KEY.into())).await?,
            duckduckgo: Server::start(search::duckduckgo(site)).await?,
            wiki_en: Server::start(wiki::handler(WikiLang::En, maxlag_first)).await?,
            wiki_ru: Server::start(wiki::handler(WikiLang::Ru, maxlag_first)).await?,
            open,
        })
    }

    /// All servers with a label, for log checks.
    pub fn servers(&self) -> Vec<(&'static str, &Server)> {
        vec![
            ("main", &self.main),
            ("closed", &self.closed),
            ("open", &self.open),
            ("searxng", &self.searxng),
            ("brave", &self.brave),
            ("yandex", &self.yandex),
            ("duckduckgo", &self.duckduckgo),
            ("wiki_en", &self.wiki_en),
            ("wiki_ru", &self.wiki_ru),
        ]
    }

    /// One source of each kind pointed at this web. Brave and Yandex read
    /// their key from `key_env`, which must then hold [`LOOPBACK_KEY`].
    pub fn source_configs(&self, key_env: &str) -> Vec<WebSourceConfig> {
        vec![
            WebSourceConfig::Mediawiki(MediaWikiConfig {
                api: Some(self.wiki_en.url("/w/api.php")),
                limit: 5,
                text: WikiText::Wikitext,
                article_path: None,
                namespace: 0,
                search_what: Some("text".into()),
                concurrency: 3,
                tuples: None,
                name: Some("wiki-en".into()),
            }),
            WebSourceConfig::Mediawiki(MediaWikiConfig {
                api: Some(self.wiki_ru.url("/w/api.php")),
                limit: 5,
                text: WikiText::Extracts,
                article_path: None,
                namespace: 0,
                search_what: Some("text".into()),
                concurrency: 3,
                tuples: None,
                name: Some("wiki-ru".into()),
            }),
            WebSourceConfig::Searxng(SearxngConfig {
                url: Some(self.searxng.base()),
                pages: 2,
                limit: 20,
                engines: None,
                language: None,
                tuples: None,
                name: Some("searxng".into()),
            }),
            WebSourceConfig::Brave(BraveConfig {
                api: self.brave.url("/res/v1/web/search"),
                key_env: key_env.into(),
                count: 20,
                pages: 1,
                limit: 5,
                country: None,
                search_lang: None,
                tuples: None,
                name: Some("brave".into()),
            }),
            WebSourceConfig::Yandex(YandexConfig {
                api: self.yandex.url("/v2/web/search"),
                key_env: key_env.into(),
                folder_id: Some("loopback-folder".into()),
                folder_env: "YANDEX_FOLDER_ID".into(),
                search_type: "SEARCH_TYPE_RU".into(),
                pages: 1,
                limit: 10,
                tuples: None,
                name: Some("yandex".into()),
            }),
            WebSourceConfig::Duckduckgo(DuckDuckGoConfig {
                url: self.duckduckgo.url("/html/"),
                limit: 5,
                pages: 1,
                region: None,
                tuples: None,
                name: Some("duckduckgo".into()),
            }),
            WebSourceConfig::Sites(SitesConfig {
                urls: vec![self.main.url("/"), self.closed.url("/"), self.open.url("/")],
                depth: 2,
                max_pages: 50,
                sitemaps: true,
                name: Some("sites".into()),
            }),
        ]
    }
}
