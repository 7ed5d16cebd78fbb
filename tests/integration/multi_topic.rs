//! `collect build A.yaml B.yaml`: several topics in one run share one fetcher, so a host two
//! topics crawl is paced once, its robots.txt is read once and a page both want is fetched
//! once; every topic file is checked before anything is built; `--out` takes one topic only.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use collect::demo::loopback::{Reply, Request, Response, Server};

use crate::common::*;

fn texts() -> Vec<std::path::PathBuf> {
    example_files(&["txt"])
}

const RPS: f64 = 2.0;

fn site(rt: &tokio::runtime::Runtime) -> Server {
    let pages: Vec<String> = (0..3)
        .map(|i| example_article(&format!("Page {i}"), i))
        .collect();
    rt.block_on(Server::start(Arc::new(move |req: &Request| -> Reply {
        match req.path.as_str() {
            "/robots.txt" => Response::new(200, "text/plain", "User-agent: *\nAllow: /\n"),
            "/a" => Response::html(pages[0].clone()),
            "/shared" => Response::html(pages[1].clone()),
            "/b" => Response::html(pages[2].clone()),
            _ => Response::new(404, "text/plain", "not found"),
        }
        .into()
    })))
    .unwrap()
}

fn topic(name: &str, urls: &[String]) -> String {
    let urls: Vec<String> = urls.iter().map(|u| format!("\"{u}\"")).collect();
    format!(
        "name: {name}\nlanguages: [en]\nsources:\n  - {{kind: sites, urls: [{}], depth: 0}}\n\
         filter: {{min_words: 20}}\nrelevance: off\ncrawl: {{per_host_rps: {RPS}, retries: 0}}\n",
        urls.join(", ")
    )
}

fn fetched(out: &Path, url: &str) -> bool {
    let db = rusqlite::Connection::open(out.join("collection.sqlite")).unwrap();
    db.query_row("SELECT state FROM urls WHERE url = ?1", [url], |r| {
        r.get::<_, String>(0)
    })
    .map(|s| s == "fetched")
    .unwrap_or(false)
}

#[test]
fn two_topics_share_one_fetcher_robots_and_pages() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = site(&rt);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir(root.join("topics")).unwrap();
    write(
        root,
        "topics/a.yaml",
        &topic("alpha", &[s.url("/a"), s.url("/shared")]),
    );
    write(
        root,
        "topics/b.yaml",
        &topic("beta", &[s.url("/shared"), s.url("/b")]),
    );
    let o = run(
        root,
        &[
            "--quiet",
            "--json",
            "build",
            "topics/a.yaml",
            "topics/b.yaml",
            "--allow-private",
        ],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}: {}",
        o.status,
        stderr(&o)
    );
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 2, "{}", stdout(&o));
    for (name, urls) in [("alpha", ["/a", "/shared"]), ("beta", ["/shared", "/b"])] {
        let out = root.join("collections").join(name);
        assert!(out.join("report.md").exists(), "{name} not built");
        for u in urls {
            assert!(fetched(&out, &s.url(u)), "{name}: {u} not recorded fetched");
        }
    }
    // One per-host pace across both topics: the second topic's first request waits for
    // the first topic's last.
    assert_spacing("two topics", &s.log(), Duration::from_secs_f64(1.0 / RPS));
    assert_eq!(s.hits("/shared"), 1, "the shared page was fetched twice");
    assert_eq!(s.hits("/robots.txt"), 1, "robots.txt was fetched twice");
    assert_eq!(s.hits("/a"), 1);
    assert_eq!(s.hits("/b"), 1);
}

#[test]
fn a_bad_second_topic_file_builds_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "a.yaml",
        "name: alpha\nlanguages: [en]\nsources:\n  - {kind: local, path: texts}\n",
    );
    for t in texts().iter().take(2) {
        std::fs::create_dir_all(root.join("texts")).unwrap();
        std::fs::copy(t, root.join("texts").join(t.file_name().unwrap())).unwrap();
    }
    write(root, "b.yaml", "name: beta\nsources: [nonsense\n");
    let o = run(root, &["--quiet", "build", "a.yaml", "b.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // (Before several topics were accepted, clap refused the second path with exit 2 too;
    // the message tells the two apart.)
    assert!(stderr(&o).contains("b.yaml"), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing was built"), "{}", stderr(&o));
    assert!(!root.join("collections").exists(), "something was built");
}

#[test]
fn out_with_two_topics_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let yaml = "name: NAME\nlanguages: [en]\nsources:\n  - {kind: local, path: texts}\n";
    write(root, "a.yaml", &yaml.replace("NAME", "alpha"));
    write(root, "b.yaml", &yaml.replace("NAME", "beta"));
    let o = run(root, &["build", "a.yaml", "b.yaml", "--out", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exactly one topic"), "{}", stderr(&o));
    assert!(!root.join("x").exists());
    assert!(!root.join("collections").exists());
}
