//! `collect update` twice against a web site that grows between runs (a loopback server whose
//! sitemap lists new pages): only new pages are fetched, newcomers are compared against the
//! store, and a republished text is recorded as a duplicate of the stored one.

use std::sync::{Arc, Mutex};

use collect::demo::loopback::{Reply, Request, Response, Server};

use crate::common::*;

/// A PEP of examples/texts as an HTML page with site furniture.
fn pep(name: &str) -> String {
    let text = std::fs::read_to_string(examples().join(name)).unwrap();
    let body: String = text
        .split("\n\n")
        .map(|para| {
            format!(
                "<p>{}</p>\n",
                para.replace('&', "&amp;").replace('<', "&lt;")
            )
        })
        .collect();
    format!("<html><head><title>{name}</title></head><body><nav><a href=\"/\">Home</a></nav><article>{body}</article><footer>Site footer</footer></body></html>")
}

/// A tiny site on the loopback server: an index, robots.txt pointing to a sitemap that lists
/// `pages` (path → HTML), which the test grows between runs.
fn serve(rt: &tokio::runtime::Runtime, pages: Arc<Mutex<Vec<(String, String)>>>) -> Server {
    rt.block_on(Server::start(Arc::new(move |req: &Request| -> Reply {
        let me = format!("http://{}", req.header("host").unwrap_or_default());
        let pages = pages.lock().unwrap();
        match req.path.as_str() {
            "/sitemap.xml" => {
                let urls: String = pages
                    .iter()
                    .map(|(p, _)| format!("<url><loc>{me}{p}</loc></url>"))
                    .collect();
                Response::new(200, "application/xml", format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"))
            }
            "/robots.txt" => Response::new(
                200,
                "text/plain",
                format!("User-agent: *\nAllow: /\nSitemap: {me}/sitemap.xml\n"),
            ),
            "/" => Response::new(200, "text/html", "<html><body><p>Index</p></body></html>"),
            path => match pages.iter().find(|(p, _)| p == path) {
                Some((_, html)) => Response::html(html.clone()),
                None => Response::new(404, "text/plain", "not found"),
            },
        }
        .into()
    })))
    .unwrap()
}

/// The paths requested so far (with their queries, as sent).
fn requested(site: &Server) -> Vec<String> {
    site.log().into_iter().map(|e| e.target).collect()
}

fn by_path<'a>(rows: &'a [serde_json::Value], path: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(path)))
        .unwrap_or_else(|| panic!("{path} in the manifest"))
}

#[test]
fn two_updates_fetch_only_new_pages_and_dedup_against_the_store() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pages = Arc::new(Mutex::new(vec![
        ("/p1".to_string(), pep("pep-0005-8fdd69bf1d.txt")),
        ("/p2".to_string(), pep("pep-0020-c4fee27b26.txt")),
    ]));
    let site = serve(&rt, pages.clone());
    let base = site.base();
    let tmp = tempfile::tempdir().unwrap();
    let topic = write(
        tmp.path(),
        "t.yaml",
        &format!(
            "name: growing\nlanguages: [en]\nsources:\n  - {{kind: sites, urls: [\"{base}/\"], depth: 1, max_pages: 50}}\nfilter: {{min_words: 100}}\ncrawl: {{allow_private: true, per_host_rps: 20}}\n"
        ),
    );
    let (t, out) = (topic.to_str().unwrap(), tmp.path().join("out"));
    let o = out.to_str().unwrap();
    run_ok(tmp.path(), &["build", t, "--out", o, "--quiet"]);
    assert_eq!(by_path(&manifest(&out), "/p1")["status"], "kept");

    // The site republishes PEP 5 (another revision, the same text) and adds PEP 206.
    pages
        .lock()
        .unwrap()
        .push(("/p3".into(), pep("pep-0005-d6afd0b7d2.txt")));
    pages
        .lock()
        .unwrap()
        .push(("/p4".into(), pep("pep-0206-8f8b18fe7d.txt")));
    site.clear_log();
    run_ok(tmp.path(), &["update", t, "--out", o, "--quiet"]);
    let rows = manifest(&out);
    let p1 = by_path(&rows, "/p1");
    assert_eq!(p1["status"], "kept", "stored documents keep their status");
    let p3 = by_path(&rows, "/p3");
    assert_eq!(p3["status"], "duplicate");
    assert_eq!(p3["duplicate_of"], p1["id"]);
    assert_eq!(by_path(&rows, "/p4")["status"], "kept");
    let log = requested(&site);
    assert!(
        !log.contains(&"/p1".to_string()),
        "old pages are not fetched again: {log:?}"
    );
    assert_eq!(log.iter().filter(|p| *p == "/p3").count(), 1, "{log:?}");

    // Second update: another revision of PEP 206.
    pages
        .lock()
        .unwrap()
        .push(("/p5".into(), pep("pep-0206-cf96a5eb83.txt")));
    site.clear_log();
    run_ok(tmp.path(), &["update", t, "--out", o, "--quiet"]);
    let rows = manifest(&out);
    assert_eq!(rows.len(), 6, "index page + five pages: {rows:?}");
    let p5 = by_path(&rows, "/p5");
    assert_eq!(p5["status"], "duplicate");
    assert_eq!(p5["duplicate_of"], by_path(&rows, "/p4")["id"]);
    let log = requested(&site);
    assert!(
        log.iter()
            .all(|p| !["/p1", "/p2", "/p3", "/p4"].contains(&p.as_str())),
        "only the new page is fetched: {log:?}"
    );
}
