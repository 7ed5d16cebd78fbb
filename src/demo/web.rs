//! The demo's web: two dozen named hosts (`maint-guide.debian.example`, `peps.python.example`,
//! …) served by one loopback server, which tells them apart by the `Host` header.
//!
//! The fetcher pins every name to 127.0.0.1 (`crawl.resolve`), so host names, robots.txt and
//! the per-host pace work as on the internet: hosts are crawled side by side, each at the
//! default one request per second. The pages are real documents on software packaging in
//! English and Russian (`library/SOURCE.md`), with the web's usual company: mirrors, the same
//! guide as a PDF or EPUB, earlier revisions, stubs, pages off the theme. Two search engines
//! answer queries over the same pages in the SearXNG and Brave wire formats, and two hosts
//! carry the loopback web's faults and a robots.txt that fails.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use serde_json::json;

use super::loopback::{self, Handler, Reply, Request, Response, Server};
use crate::acquire::config::{BraveConfig, SearxngConfig, SitesConfig, WebSourceConfig};

/// The bundled pages: `HOST/PATH` entries and `manifest.json` (each host's start page).
const LIBRARY: &[u8] = include_bytes!("library/library.zip");

/// Host of the SearXNG stand-in.
pub const SEARXNG_HOST: &str = "searx.example";
/// Host of the Brave Search API stand-in.
pub const BRAVE_HOST: &str = "api.search.brave.example";
/// Host serving the loopback web's faults (slow, flaky, oversized, redirect loops, …).
pub const FAULTS_HOST: &str = "faults.example";
/// Host whose robots.txt answers 500, so nothing else on it may be fetched.
pub const CLOSED_HOST: &str = "closed.example";

/// The faults the demo's crawl meets, one of each kind a newcomer should see handled: a
/// page robots.txt forbids, a legacy charset, a redirect, a decompression bomb, a server that
/// fails once, a link to cloud metadata.
/// Few, because each costs the host's pace a second.
const FAULT_LINKS: &[&str] = &[
    "/private/secret",
    "/cp1251",
    "/redirect",
    "/bomb",
    "/flaky",
    "/to-metadata",
];

/// Results per SearXNG page, as SearXNG's default.
const SEARXNG_PAGE: usize = 10;
/// Characters of page text in a result's snippet.
const SNIPPET_CHARS: usize = 200;

/// One page of the library as the search engines see it.
struct Indexed {
    host: String,
    path: String,
    title: String,
    /// Lowercased visible text.
    text: String,
}

/// The pages of every host, keyed by host then path.
struct Library {
    files: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    starts: BTreeMap<String, String>,
    index: Vec<Indexed>,
}

impl Library {
    fn load() -> Result<Library> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(LIBRARY))
            .context("the bundled demo library is not a readable zip")?;
        let mut files: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
        let mut manifest = None;
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i)?;
            let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
            let mut bytes = Vec::with_capacity(entry.size() as usize);
            entry
                .read_to_end(&mut bytes)
                .with_context(|| format!("demo library: cannot read {name}"))?;
            match name.split_once('/') {
                Some((host, path)) => {
                    files
                        .entry(host.to_string())
                        .or_default()
                        .insert(format!("/{path}"), bytes);
                }
                None if name == "manifest.json" => manifest = Some(bytes),
                None => {}
            }
        }
        let manifest: serde_json::Value =
            serde_json::from_slice(&manifest.context("demo library: no manifest.json")?)?;
        let starts = manifest["starts"]
            .as_object()
            .context("demo library: manifest.json has no `starts`")?
            .iter()
            .filter_map(|(h, p)| Some((h.clone(), p.as_str()?.to_string())))
            .collect();
        let index = files
            .iter()
            .flat_map(|(host, pages)| {
                pages
                    .iter()
                    .filter(|(path, _)| path.ends_with(".html"))
                    .map(move |(path, body)| {
                        let html = String::from_utf8_lossy(body);
                        Indexed {
                            host: host.clone(),
                            path: path.clone(),
                            title: title_of(&html).unwrap_or_else(|| path.clone()),
                            text: visible_text(&html).to_lowercase(),
                        }
                    })
            })
            .collect();
        Ok(Library {
            files,
            starts,
            index,
        })
    }

    /// Pages holding every word of `query`, most mentions first (ties by address).
    fn search(&self, query: &str) -> Vec<&Indexed> {
        let words: Vec<String> = query.split_whitespace().map(|w| w.to_lowercase()).collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut hits: Vec<(usize, &Indexed)> = self
            .index
            .iter()
            .filter_map(|p| {
                let counts: Vec<usize> = words.iter().map(|w| p.text.matches(w).count()).collect();
                counts
                    .iter()
                    .all(|&c| c > 0)
                    .then(|| (counts.iter().sum(), p))
            })
            .collect();
        hits.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| (&a.1.host, &a.1.path).cmp(&(&b.1.host, &b.1.path)))
        });
        hits.into_iter().map(|(_, p)| p).collect()
    }
}

/// `<title>` of a page, entities left as they are (the engines' snippets are plain text).
fn title_of(html: &str) -> Option<String> {
    let start = html.find("<title>")? + "<title>".len();
    let end = start + html[start..].find("</title>")?;
    Some(
        html[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Text outside tags, scripts and styles, whitespace collapsed: enough for a search index.
fn visible_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        out.push(' ');
        rest = &rest[lt..];
        let skip_to = ["<script", "<style"]
            .iter()
            .find(|t| {
                rest.as_bytes()
                    .get(..t.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(t.as_bytes()))
            })
            .map(|t| format!("</{}>", &t[1..]));
        let end = match skip_to {
            // ASCII lowercasing keeps byte offsets, and tag names are ASCII.
            Some(close) => rest
                .to_ascii_lowercase()
                .find(&close)
                .map(|i| i + close.len()),
            None => rest.find('>').map(|i| i + 1),
        };
        rest = &rest[end.unwrap_or(rest.len())..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn snippet(text: &str) -> String {
    text.chars().take(SNIPPET_CHARS).collect()
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("xml") => "application/xml",
        Some("txt") => "text/plain; charset=utf-8",
        Some("pdf") => "application/pdf",
        Some("epub") => "application/epub+zip",
        _ => "application/octet-stream",
    }
}

/// The demo web, running until dropped.
pub struct DemoWeb {
    server: Server,
    library: Arc<Library>,
}

impl DemoWeb {
    /// Starts the server on an ephemeral 127.0.0.1 port.
    pub async fn start() -> Result<DemoWeb> {
        let library = Arc::new(Library::load()?);
        let port = Arc::new(OnceLock::<u16>::new());
        let faults_base = Arc::new(OnceLock::new());
        let faults = loopback::main_site(faults_base.clone(), FAULT_LINKS);
        let closed = loopback::closed_site();
        let handler: Handler = {
            let library = library.clone();
            let port = port.clone();
            Arc::new(move |req: &Request| -> Reply {
                let host = req
                    .header("host")
                    .and_then(|h| h.split(':').next())
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let port = port.get().copied().unwrap_or(0);
                match host.as_str() {
                    FAULTS_HOST => faults(req),
                    CLOSED_HOST => closed(req),
                    SEARXNG_HOST => searxng(&library, req, port).into(),
                    BRAVE_HOST => brave(&library, req, port).into(),
                    _ => page(&library, &host, req, port).into(),
                }
            })
        };
        let server = Server::start(handler)
            .await
            .context("cannot start the demo web on 127.0.0.1")?;
        let _ = port.set(server.addr().port());
        let _ = faults_base.set(host_base(FAULTS_HOST, server.addr().port()));
        Ok(DemoWeb { server, library })
    }

    /// `http://HOST:PORT` of a demo host.
    pub fn base(&self, host: &str) -> String {
        host_base(host, self.server.addr().port())
    }

    /// Every host name of the demo web with the address it must resolve to (`crawl.resolve`).
    pub fn resolve(&self) -> BTreeMap<String, IpAddr> {
        self.library
            .files
            .keys()
            .map(String::as_str)
            .chain([SEARXNG_HOST, BRAVE_HOST, FAULTS_HOST, CLOSED_HOST])
            .map(|h| (h.to_string(), IpAddr::V4(Ipv4Addr::LOCALHOST)))
            .collect()
    }

    /// The demo's sources: both search engines, every library host as a start URL of one
    /// crawl, and the host of faults as a shallow crawl of its own.
    /// The Brave source reads its key from `key_env`, which must then hold the demo's key
    /// ([`loopback::LOOPBACK_KEY`]).
    pub fn sources(&self, key_env: &str) -> Vec<WebSourceConfig> {
        let mut urls: Vec<String> = self
            .library
            .starts
            .iter()
            .map(|(host, path)| format!("{}{path}", self.base(host)))
            .collect();
        urls.push(format!("{}/", self.base(CLOSED_HOST)));
        vec![
            WebSourceConfig::Searxng(SearxngConfig {
                url: Some(self.base(SEARXNG_HOST)),
                pages: 1,
                limit: 20,
                engines: None,
                language: None,
                tuples: None,
                name: Some("searxng".into()),
            }),
            WebSourceConfig::Brave(BraveConfig {
                api: format!("{}/res/v1/web/search", self.base(BRAVE_HOST)),
                key_env: key_env.into(),
                count: 20,
                pages: 1,
                limit: 10,
                country: None,
                search_lang: None,
                tuples: None,
                name: Some("brave".into()),
            }),
            WebSourceConfig::Sites(SitesConfig {
                urls,
                depth: 2,
                max_pages: 500,
                sitemaps: true,
                name: Some("sites".into()),
            }),
            WebSourceConfig::Sites(SitesConfig {
                urls: vec![format!("{}/", self.base(FAULTS_HOST))],
                depth: 1,
                max_pages: 50,
                sitemaps: true,
                name: Some("faults".into()),
            }),
        ]
    }
}

/// `http://HOST:PORT`: every demo host is on the one server's port.
fn host_base(host: &str, port: u16) -> String {
    format!("http://{host}:{port}")
}

fn page(library: &Library, host: &str, req: &Request, port: u16) -> Response {
    let Some(pages) = library.files.get(host) else {
        return Response::not_found();
    };
    if req.path == "/" {
        if let Some(start) = library.starts.get(host) {
            return Response::redirect(301, start);
        }
    }
    match pages.get(&req.path) {
        // robots.txt and sitemaps name the host's own address, known only once it runs.
        Some(body) if req.path.ends_with(".txt") || req.path.ends_with(".xml") => Response::new(
            200,
            content_type(&req.path),
            String::from_utf8_lossy(body).replace("{base}", &host_base(host, port)),
        ),
        Some(body) => Response::new(200, content_type(&req.path), body.clone()),
        None => Response::not_found(),
    }
}

fn result_url(p: &Indexed, port: u16) -> String {
    format!("{}{}", host_base(&p.host, port), p.path)
}

/// SearXNG `/search?format=json&q=…&pageno=N`.
fn searxng(library: &Library, req: &Request, port: u16) -> Response {
    if req.path != "/search" {
        return Response::not_found();
    }
    if req.param("format") != Some("json") {
        return Response::new(403, "text/html; charset=utf-8", "Forbidden");
    }
    let q = req.param("q").unwrap_or("").trim().to_string();
    let page: usize = req
        .param("pageno")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let hits = library.search(&q);
    let results: Vec<serde_json::Value> = hits
        .iter()
        .skip((page - 1) * SEARXNG_PAGE)
        .take(SEARXNG_PAGE)
        .enumerate()
        .map(|(i, p)| {
            json!({
                "url": result_url(p, port),
                "title": p.title,
                "content": snippet(&p.text),
                "engine": "demo",
                "engines": ["demo"],
                "positions": [i + 1],
                "score": 1.0 / (i + 1) as f64,
                "category": "general",
            })
        })
        .collect();
    Response::json(
        json!({
            "query": q,
            "number_of_results": hits.len(),
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        })
        .to_string(),
    )
}

/// Brave `/res/v1/web/search?q=…&count=N&offset=K`; the token must be the demo's key.
fn brave(library: &Library, req: &Request, port: u16) -> Response {
    if req.path != "/res/v1/web/search" {
        return Response::not_found();
    }
    if req.header("x-subscription-token") != Some(loopback::LOOPBACK_KEY) {
        return Response::new(
            401,
            "application/json",
            r#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","status":401,"detail":"The provided subscription token is invalid."}}"#,
        );
    }
    let q = req.param("q").unwrap_or("").trim().to_string();
    let count: usize = req
        .param("count")
        .and_then(|c| c.parse().ok())
        .unwrap_or(20);
    let offset: usize = req
        .param("offset")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let hits = library.search(&q);
    let results: Vec<serde_json::Value> = hits
        .iter()
        .skip(offset * count)
        .take(count)
        .map(|p| {
            json!({
                "type": "search_result",
                "title": p.title,
                "url": result_url(p, port),
                "description": snippet(&p.text),
                "language": "en",
            })
        })
        .collect();
    Response::json(
        json!({
            "type": "search",
            "query": {"original": q, "more_results_available": hits.len() > (offset + 1) * count},
            "web": {"type": "search", "results": results},
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_loads_with_a_start_page_on_every_host() {
        let lib = Library::load().unwrap();
        assert!(lib.files.len() >= 20, "{} hosts", lib.files.len());
        for (host, start) in &lib.starts {
            assert!(
                lib.files[host].contains_key(start),
                "{host}: start page {start} is not served"
            );
        }
    }

    #[test]
    fn search_finds_every_word_and_ranks_by_mentions() {
        let lib = Library::load().unwrap();
        let hits = lib.search("debian пакет");
        assert!(!hits.is_empty());
        assert!(hits
            .iter()
            .all(|p| p.text.contains("debian") && p.text.contains("пакет")));
        let counts: Vec<usize> = hits
            .iter()
            .map(|p| p.text.matches("debian").count() + p.text.matches("пакет").count())
            .collect();
        assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
        assert!(lib.search("zzzqqq").is_empty());
    }

    #[test]
    fn visible_text_drops_tags_scripts_and_styles() {
        assert_eq!(
            visible_text("<p>a <b>b</b></p><script>var x = '<p>';</script><STYLE>p{}</STYLE>c"),
            "a b c"
        );
    }
}
