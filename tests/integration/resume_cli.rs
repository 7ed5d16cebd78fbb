//! A build killed with SIGKILL mid-crawl and run again resumes: pages already fetched are not
//! requested again, and the collection equals the one an uninterrupted build makes.

use collect::demo::loopback::LoopbackWeb;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::{write, BIN};

/// Main-site pages that are neither retried by design (faults) nor re-read on every run
/// (robots.txt): each must be requested once per completed crawl.
const PLAIN_PAGES: &[&str] = &[
    "/",
    "/a",
    "/b",
    "/c",
    "/gz",
    "/cp1251",
    "/koi8r",
    "/detect1251",
    "/utf8",
];

fn topic(dir: &Path, web: &LoopbackWeb) -> PathBuf {
    write(
        dir,
        "t.yaml",
        &format!(
            "name: resume\nlanguages: [ru, en]\nsources:\n  - {{kind: sites, urls: [\"{}\", \"{}\"], depth: 2, max_pages: 50}}\nfilter: {{min_words: 5, language: false}}\ncrawl: {{allow_private: true, per_host_rps: 4, timeout_secs: 5, retries: 1, backoff_ms: 50}}\n",
            web.main.url("/"),
            web.open.url("/")
        ),
    )
}

fn build(topic: &Path, out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "build",
        topic.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    c
}

fn hits(web: &LoopbackWeb) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in web.main.log() {
        *m.entry(e.path).or_default() += 1;
    }
    m
}

#[test]
fn killed_build_resumes_without_refetching() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let tmp = tempfile::tempdir().unwrap();

    // Reference: an uninterrupted build on its own loopback web.
    let web_ref = rt.block_on(LoopbackWeb::start()).unwrap();
    let out_ref = tmp.path().join("ref");
    let st = build(&topic(tmp.path(), &web_ref), &out_ref)
        .status()
        .unwrap();
    assert!(st.success());
    let reference = std::fs::read_to_string(out_ref.join("manifest.jsonl")).unwrap();

    let web = rt.block_on(LoopbackWeb::start()).unwrap();
    let dir = tempfile::tempdir_in(tmp.path()).unwrap();
    let t = topic(dir.path(), &web);
    let out = dir.path().join("out");
    let mut child = build(&t, &out).spawn().unwrap();
    // robots.txt's Crawl-delay (0.4 s) paces the main site: part of it is fetched by now.
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = hits(&web);
    assert!(
        PLAIN_PAGES.iter().any(|p| before.contains_key(*p)),
        "the crawl had started: {before:?}"
    );
    assert!(
        !out.join("manifest.jsonl").exists(),
        "killed before the end"
    );

    let st = build(&t, &out).status().unwrap();
    assert!(st.success(), "the rerun resumes and finishes");
    let after = hits(&web);
    let mut refetched = Vec::new();
    for p in PLAIN_PAGES {
        let n = after.get(*p).copied().unwrap_or(0);
        assert!(n >= 1, "{p} fetched: {after:?}");
        if n > 1 {
            refetched.push(*p);
        }
    }
    // At most the one request that was in flight when the process died is asked again.
    assert!(
        refetched.len() <= 1,
        "fetched twice: {refetched:?} ({after:?})"
    );
    assert_eq!(after.get("/private/secret"), None, "robots.txt is obeyed");

    // Same collection as the uninterrupted build (URLs differ by port: compare the rest).
    let strip = |m: &str| -> Vec<(String, String, String)> {
        let mut v: Vec<_> = m
            .lines()
            .map(|l| {
                let r: serde_json::Value = serde_json::from_str(l).unwrap();
                let url = r["url"].as_str().unwrap_or_default();
                let path = url.splitn(4, '/').nth(3).unwrap_or_default().to_string();
                (path, r["status"].to_string(), r["sha256"].to_string())
            })
            .collect();
        v.sort();
        v
    };
    let resumed = std::fs::read_to_string(out.join("manifest.jsonl")).unwrap();
    assert_eq!(strip(&reference), strip(&resumed));
}
