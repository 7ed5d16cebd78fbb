//! Expert start URLs crawled same-site, breadth-first, with sitemap discovery.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use quick_xml::events::Event;
use scraper::Selector;
use tokio::sync::OnceCell;
use url::Url;

use super::{Claim, RunCtx, Source};
use crate::acquire::config::SitesConfig;
use crate::acquire::fetcher::{FetchKind, PageOutcome};
use crate::acquire::frontier::{lock, FetchedPage, Payload, UrlRecord, UrlState};
use crate::acquire::report::PlannedQuery;
use crate::acquire::urls::{host_key, normalize, normalize_str};
use crate::markup::{self, Limits};

/// Nested sitemaps read per site (sitemap indexes can list thousands).
const MAX_SITEMAPS: usize = 10;

/// Extensions that are never documents the pipeline reads (PDF, DOCX, ODT and EPUB are:
/// `crate::readers::documents`); skipping them saves requests.
const BINARY: &[&str] = &[
    ".jpg", ".jpeg", ".png", ".gif", ".webp", ".svg", ".ico", ".zip", ".gz", ".rar", ".7z", ".mp3",
    ".mp4", ".avi", ".mov", ".doc", ".xls", ".xlsx", ".ppt", ".pptx", ".exe", ".dmg", ".css",
    ".js", ".woff", ".woff2",
];

/// The `sites` source.
pub struct Sites {
    name: String,
    cfg: SitesConfig,
    starts: Vec<Url>,
    /// Page URLs from each host's sitemaps, read once per run however many start URLs the
    /// host has.
    sitemap_pages: Mutex<HashMap<String, Arc<OnceCell<Vec<Url>>>>>,
}

/// `<loc>` entries of a sitemap and whether it is a sitemap index.
pub fn parse_sitemap(xml: &str) -> (Vec<String>, bool) {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut locs = Vec::new();
    let mut index = false;
    let mut in_loc = false;
    let mut text = String::new();
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                let n = e.local_name();
                if n.as_ref() == b"sitemapindex" {
                    index = true;
                }
                in_loc = n.as_ref() == b"loc";
                text.clear();
            }
            Ok(Event::Text(t)) if in_loc => {
                if let Ok(s) = t.decode() {
                    text.push_str(&s);
                }
            }
            Ok(Event::GeneralRef(g)) if in_loc => {
                if let Ok(name) = g.decode() {
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
            Ok(Event::CData(t)) if in_loc => text.push_str(&String::from_utf8_lossy(&t)),
            Ok(Event::End(e)) => {
                if e.local_name().as_ref() == b"loc" && !text.trim().is_empty() {
                    locs.push(text.trim().to_string());
                }
                in_loc = false;
            }
            // A broken sitemap still yields what was read before the error.
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    (locs, index)
}

/// [`same_site_links`] off the async runtime: a page's parse is CPU work that must delay
/// only itself.
async fn links_off_runtime(page: FetchedPage, hosts: Vec<String>) -> Vec<Url> {
    tokio::task::spawn_blocking(move || same_site_links(&page, &hosts))
        .await
        .unwrap_or_default()
}

/// Links of an HTML page to any of `hosts` (host:port keys), normalised. A page over its
/// parse budget gives none (the cleaner records it as too complex).
pub fn same_site_links(page: &FetchedPage, hosts: &[String]) -> Vec<Url> {
    if page.payload != Payload::Html {
        return Vec::new();
    }
    let Ok(base) = Url::parse(&page.final_url) else {
        return Vec::new();
    };
    let Ok(doc) = markup::parse_html(&page.body, &Limits::PAGE) else {
        return Vec::new();
    };
    let Ok(sel) = Selector::parse("a[href]") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for a in doc.select(&sel) {
        let Some(href) = a.value().attr("href") else {
            continue;
        };
        if a.value().attr("rel").is_some_and(|r| {
            r.split_whitespace()
                .any(|t| t.eq_ignore_ascii_case("nofollow"))
        }) {
            continue;
        }
        let Ok(u) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(u.scheme(), "http" | "https") || !hosts.contains(&host_key(&u)) {
            continue;
        }
        let lower = u.path().to_ascii_lowercase();
        if BINARY.iter().any(|e| lower.ends_with(e)) {
            continue;
        }
        let u = normalize(u);
        if seen.insert(u.to_string()) {
            out.push(u);
        }
    }
    out
}

fn adopt_final_host(hosts: &mut Vec<String>, start_page: &FetchedPage, depth: usize) {
    if depth != 0 {
        return;
    }
    if let Ok(u) = Url::parse(&start_page.final_url) {
        let h = host_key(&u);
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
}

impl Sites {
    /// Checks the start URLs; `Err` says why the source is skipped.
    pub fn new(name: String, cfg: SitesConfig) -> Result<Self, String> {
        let mut starts = Vec::new();
        let mut bad = Vec::new();
        for s in &cfg.urls {
            match normalize_str(s) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => starts.push(u),
                Ok(u) => bad.push(format!("{u} (not http/https)")),
                Err(e) => bad.push(e),
            }
        }
        if starts.is_empty() {
            return Err(if bad.is_empty() {
                "no `urls` configured; source skipped".into()
            } else {
                format!("no usable start URL ({}); source skipped", bad.join("; "))
            });
        }
        Ok(Sites {
            name,
            cfg,
            starts,
            sitemap_pages: Mutex::new(HashMap::new()),
        })
    }

    /// Page URLs from the sitemaps of `start`'s host, read at most once per run.
    async fn sitemap_pages(
        &self,
        ctx: &RunCtx<'_>,
        start: &Url,
        host: &str,
    ) -> anyhow::Result<Vec<Url>> {
        let cell = lock(&self.sitemap_pages)
            .entry(host.to_string())
            .or_default()
            .clone();
        let pages = cell
            .get_or_try_init(|| self.sitemap_urls(ctx, start, host))
            .await?;
        Ok(pages.clone())
    }

    /// Page URLs from robots.txt `Sitemap:` lines and `/sitemap.xml`.
    async fn sitemap_urls(
        &self,
        ctx: &RunCtx<'_>,
        start: &Url,
        host: &str,
    ) -> anyhow::Result<Vec<Url>> {
        let mut maps: Vec<String> = ctx.fetcher.robots_sitemaps(start).await;
        let mut guessed = None;
        if let Ok(d) = start.join("/sitemap.xml") {
            if !maps.contains(&d.to_string()) {
                guessed = Some(d.to_string());
                maps.push(d.to_string());
            }
        }
        let mut pages = Vec::new();
        let mut done = HashSet::new();
        let mut i = 0;
        while i < maps.len() && done.len() < MAX_SITEMAPS {
            let m = maps[i].clone();
            i += 1;
            let Ok(mu) = normalize_str(&m) else { continue };
            if host_key(&mu) != host || !done.insert(mu.to_string()) {
                continue;
            }
            // Sitemaps are listings, kept in the frontier so a resumed run does not re-read them.
            let (locs, is_index) = match ctx.listing(mu.as_str()) {
                Some((items, next)) => (items, next.as_deref() == Some("index")),
                None => match ctx.fetcher.fetch(&mu, FetchKind::Sitemap).await {
                    PageOutcome::Fetched(p) => {
                        let (locs, idx) = parse_sitemap(&p.body);
                        ctx.store_listing(
                            mu.as_str(),
                            "sitemap",
                            &locs,
                            idx.then(|| "index".into()),
                        )?;
                        (locs, idx)
                    }
                    PageOutcome::Skipped(_, _) => continue,
                    PageOutcome::Failed(m) => {
                        // A missing /sitemap.xml is normal; only announced ones deserve a warning.
                        if guessed.as_deref() != Some(mu.as_str()) {
                            ctx.warn(format!("sitemap {m}"));
                        }
                        continue;
                    }
                },
            };
            for l in locs {
                if is_index {
                    maps.push(l);
                } else if let Ok(u) = normalize_str(&l) {
                    if host_key(&u) == host {
                        pages.push(u);
                    }
                }
            }
        }
        Ok(pages)
    }

    async fn crawl(&self, ctx: &RunCtx<'_>, start: &Url) -> anyhow::Result<()> {
        let host = host_key(start);
        // The site is the start host plus wherever the start page redirected
        // (http -> https, example.org -> www.example.org): the expert meant that site.
        let mut hosts = vec![host.clone()];
        let mut visited: HashSet<String> = HashSet::new();
        let mut level: Vec<Url> = vec![start.clone()];
        let mut later: Vec<Url> = Vec::new();
        if self.cfg.sitemaps && self.cfg.depth > 0 {
            later = self.sitemap_pages(ctx, start, &host).await?;
        }
        let mut count = 0usize;
        let conc = ctx.fetcher.config().concurrency.max(1);
        for depth in 0..=self.cfg.depth {
            if depth == 1 {
                // Sitemap pages sit one step from the start page.
                level.append(&mut later);
            }
            let mut todo = Vec::new();
            // Pages another source of this run fetches (a search result that is also a page
            // of this site): theirs to store, but their links are this crawl's to follow.
            let mut taken: Vec<Url> = Vec::new();
            let mut next: Vec<Url> = Vec::new();
            for u in level.drain(..) {
                if count >= self.cfg.max_pages {
                    break;
                }
                if !visited.insert(u.to_string()) {
                    continue;
                }
                match ctx.claim(u.as_str(), None)? {
                    Claim::New => {
                        count += 1;
                        todo.push(u);
                    }
                    Claim::Done(rec) => {
                        count += 1;
                        // Resume: links come from the stored body, nothing is re-fetched.
                        if let (UrlState::Fetched, Some(p)) = (rec.state, rec.fetched) {
                            adopt_final_host(&mut hosts, &p, depth);
                            next.extend(links_off_runtime(p, hosts.clone()).await);
                        }
                    }
                    Claim::Taken => taken.push(u),
                }
            }
            let mut s = futures::stream::iter(todo)
                .map(|u| async move {
                    let out = ctx.fetcher.fetch(&u, FetchKind::Page).await;
                    (u, out)
                })
                .buffer_unordered(conc);
            while let Some((u, out)) = s.next().await {
                if let Some(p) = ctx.finish_page(&u, None, out)? {
                    adopt_final_host(&mut hosts, &p, depth);
                    if depth < self.cfg.depth {
                        next.extend(links_off_runtime(p, hosts.clone()).await);
                    }
                }
            }
            drop(s);
            if depth < self.cfg.depth {
                for u in taken {
                    if let Some(UrlRecord {
                        state: UrlState::Fetched,
                        fetched: Some(p),
                        ..
                    }) = ctx.settled(u.as_str()).await
                    {
                        adopt_final_host(&mut hosts, &p, depth);
                        next.extend(links_off_runtime(p, hosts.clone()).await);
                    }
                }
                level = next;
            }
            if level.is_empty() && (depth >= 1 || later.is_empty()) {
                break;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl Source for Sites {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan(&self, _queries: &[String]) -> Vec<PlannedQuery> {
        self.starts
            .iter()
            .map(|u| PlannedQuery {
                source: self.name.clone(),
                kind: "sites".into(),
                query: u.to_string(),
                requests: self.cfg.max_pages,
                skipped: None,
            })
            .collect()
    }

    async fn run(&self, ctx: &RunCtx<'_>, _queries: &[String]) -> anyhow::Result<()> {
        let runs = self.starts.iter().map(|s| async move {
            ctx.query_done(s.as_str(), 0);
            self.crawl(ctx, s).await
        });
        for r in futures::future::join_all(runs).await {
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sitemaps_and_links() {
        let (locs, idx) = parse_sitemap(
            "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <sitemap><loc>https://a.example/s1.xml?x=1&amp;y=2</loc></sitemap></sitemapindex>",
        );
        assert!(idx);
        assert_eq!(locs, vec!["https://a.example/s1.xml?x=1&y=2"]);
        let (locs, idx) =
            parse_sitemap("<urlset><url><loc> https://a.example/p </loc></url><url><loc>broken");
        assert!(!idx);
        assert_eq!(locs, vec!["https://a.example/p"]);
        let page = FetchedPage {
            final_url: "https://a.example/dir/".into(),
            title: None,
            body: r#"<a href="x#f">x</a><a href="/y?utm_source=z">y</a><a href="https://b.example/">b</a>
                     <a href="f.pdf">pdf</a><a rel="nofollow" href="/n">n</a><a href="mailto:a@b">m</a>"#
                .into(),
            bytes: None,
            payload: Payload::Html,
            content_type: "text/html".into(),
            charset_note: None,
            fetched_at: 0,
        };
        let l: Vec<String> = same_site_links(&page, &["a.example:443".to_string()])
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(
            l,
            vec![
                "https://a.example/dir/x",
                "https://a.example/y",
                "https://a.example/dir/f.pdf"
            ]
        );
    }
}
