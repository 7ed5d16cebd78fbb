//! `collect update` twice against a web site that grows between runs (a loopback server whose
//! sitemap lists new pages): only new pages are fetched, newcomers are compared against the
//! store, and a republished text is recorded as a duplicate of the stored one.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Pages of a tiny site: path → HTML; plus the log of requested paths.
#[derive(Default)]
struct Site {
    pages: Vec<(String, String)>,
    log: Vec<String>,
}

fn pep(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/texts")
        .join(name);
    let text = std::fs::read_to_string(p).unwrap();
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

fn serve(site: Arc<Mutex<Site>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let me = base.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).map(|n| n <= 2).unwrap_or(true) {
                    break;
                }
            }
            let mut s = site.lock().unwrap();
            s.log.push(path.clone());
            let (status, ctype, body) = if path == "/sitemap.xml" {
                let urls: String = s
                    .pages
                    .iter()
                    .map(|(p, _)| format!("<url><loc>{me}{p}</loc></url>"))
                    .collect();
                ("200 OK", "application/xml", format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"))
            } else if path == "/robots.txt" {
                (
                    "200 OK",
                    "text/plain",
                    format!("User-agent: *\nAllow: /\nSitemap: {me}/sitemap.xml\n"),
                )
            } else if path == "/" {
                (
                    "200 OK",
                    "text/html",
                    "<html><body><p>Index</p></body></html>".to_string(),
                )
            } else if let Some((_, html)) = s.pages.iter().find(|(p, _)| *p == path) {
                ("200 OK", "text/html; charset=utf-8", html.clone())
            } else {
                ("404 Not Found", "text/plain", "not found".to_string())
            };
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

fn run(args: &[&str]) {
    let r = Command::new(env!("CARGO_BIN_EXE_collect"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
}

fn manifest(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn by_path<'a>(rows: &'a [serde_json::Value], path: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(path)))
        .unwrap_or_else(|| panic!("{path} in the manifest"))
}

#[test]
fn two_updates_fetch_only_new_pages_and_dedup_against_the_store() {
    let site = Arc::new(Mutex::new(Site::default()));
    site.lock().unwrap().pages = vec![
        ("/p1".into(), pep("pep-0005-8fdd69bf1d.txt")),
        ("/p2".into(), pep("pep-0020-c4fee27b26.txt")),
    ];
    let base = serve(site.clone());
    let tmp = tempfile::tempdir().unwrap();
    let topic = tmp.path().join("t.yaml");
    std::fs::write(
        &topic,
        format!(
            "name: growing\nlanguages: [en]\nsources:\n  - {{kind: sites, urls: [\"{base}/\"], depth: 1, max_pages: 50}}\nfilter: {{min_words: 100}}\ncrawl: {{allow_private: true, per_host_rps: 20}}\n"
        ),
    )
    .unwrap();
    let (t, out) = (topic.to_str().unwrap(), tmp.path().join("out"));
    let o = out.to_str().unwrap();
    run(&["build", t, "--out", o, "--quiet"]);
    assert_eq!(by_path(&manifest(&out), "/p1")["status"], "kept");

    // The site republishes PEP 5 (another revision, the same text) and adds PEP 206.
    site.lock()
        .unwrap()
        .pages
        .push(("/p3".into(), pep("pep-0005-d6afd0b7d2.txt")));
    site.lock()
        .unwrap()
        .pages
        .push(("/p4".into(), pep("pep-0206-8f8b18fe7d.txt")));
    site.lock().unwrap().log.clear();
    run(&["update", t, "--out", o, "--quiet"]);
    let rows = manifest(&out);
    let p1 = by_path(&rows, "/p1");
    assert_eq!(p1["status"], "kept", "stored documents keep their status");
    let p3 = by_path(&rows, "/p3");
    assert_eq!(p3["status"], "duplicate");
    assert_eq!(p3["duplicate_of"], p1["id"]);
    assert_eq!(by_path(&rows, "/p4")["status"], "kept");
    let log = site.lock().unwrap().log.clone();
    assert!(
        !log.contains(&"/p1".to_string()),
        "old pages are not fetched again: {log:?}"
    );
    assert_eq!(log.iter().filter(|p| *p == "/p3").count(), 1, "{log:?}");

    // Second update: another revision of PEP 206.
    site.lock()
        .unwrap()
        .pages
        .push(("/p5".into(), pep("pep-0206-cf96a5eb83.txt")));
    site.lock().unwrap().log.clear();
    run(&["update", t, "--out", o, "--quiet"]);
    let rows = manifest(&out);
    assert_eq!(rows.len(), 6, "index page + five pages: {rows:?}");
    let p5 = by_path(&rows, "/p5");
    assert_eq!(p5["status"], "duplicate");
    assert_eq!(p5["duplicate_of"], by_path(&rows, "/p4")["id"]);
    let log = site.lock().unwrap().log.clone();
    assert!(
        log.iter()
            .all(|p| !["/p1", "/p2", "/p3", "/p4"].contains(&p.as_str())),
        "only the new page is fetched: {log:?}"
    );
}
