//! Helpers shared by every area: the `collect` binary and running it, the repository's texts
//! and fixtures, environment switches, the loopback web's crawl settings and checks, and the
//! mutation RNG of the stress tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::Once;
use std::time::Duration;

use collect::acquire::{
    CrawlConfig, MediaWikiConfig, MemoryFrontier, UrlRecord, UrlState, WebSourceConfig, WikiText,
};
use collect::demo::loopback::{LogEntry, Reply, Request, Response, Server};
use serde_json::Value;

// ---- The binary ----

/// The `collect` binary Cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_collect");

/// `collect ARGS` run in `dir`, its status and output captured.
/// Kills the child when dropped, so a failing assertion leaves no process behind.
pub struct Guard(pub Child);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The port of a `http://127.0.0.1:PORT/` address a server printed.
pub fn port_of(url: &str) -> u16 {
    url.trim_end_matches('/')
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url:?}"))
}

/// One HTTP/1.1 exchange; reads the head and `Content-Length` bytes, since not every server
/// closes the connection when asked to.
pub fn http(port: u16, request: &str) -> String {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    (&s).write_all(request.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    head + &String::from_utf8_lossy(&body)
}

pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("collect runs")
}

/// `collect ARGS` run in `dir`, which must succeed: otherwise panics with the arguments,
/// the exit status, stdout and stderr.
pub fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let o = run(dir, args);
    assert!(
        o.status.success(),
        "collect {args:?}: {}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    o
}

/// A run's stdout, lossily decoded.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A run's stderr, lossily decoded.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// ---- Files ----

/// The package root (where Cargo.toml is).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// examples/texts: real PEP revisions, natural near-duplicates (see its SOURCE.md).
pub fn examples() -> PathBuf {
    root().join("examples/texts")
}

/// The files of examples/texts with one of these extensions, sorted.
/// A page of article markup around the `n`-th text of examples/texts (wrapping round), one
/// paragraph per blank-line block.
pub fn example_article(title: &str, n: usize) -> String {
    let texts = example_files(&["txt"]);
    let text = std::fs::read_to_string(&texts[n % texts.len()]).unwrap();
    let paras: String = text
        .split("\n\n")
        .map(|p| format!("<p>{}</p>\n", p.replace('&', "&amp;").replace('<', "&lt;")))
        .collect();
    format!(
        "<html><head><title>{title}</title></head><body><article>{paras}</article></body></html>"
    )
}

/// A loopback site answering each path of `pages` with its reply, anything else 404.
pub async fn site_of(pages: std::collections::HashMap<&'static str, Reply>) -> Server {
    let pages = std::sync::Arc::new(pages);
    Server::start(std::sync::Arc::new(move |r: &Request| {
        pages
            .get(r.path.as_str())
            .cloned()
            .unwrap_or_else(|| Response::not_found().into())
    }))
    .await
    .unwrap()
}

pub fn example_files(extensions: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| extensions.iter().any(|e| x == *e))
        })
        .collect();
    v.sort();
    v
}

/// tests/fixtures/NAME.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// Writes `text` to DIR/NAME (a topic file, an input) and returns its path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A collection built in `ROOT/out` from a copy of every text of examples/texts in
/// `ROOT/texts` (topic `name`, `min_words: 100`, then `extra_topic`): the PEP revisions give
/// duplicates and contained pairs.
pub fn examples_collection(name: &str, extra_topic: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::create_dir_all(root.join("texts")).unwrap();
    for f in example_files(&["txt", "html"]) {
        std::fs::copy(&f, root.join("texts").join(f.file_name().unwrap())).unwrap();
    }
    write(
        &root,
        "topic.yaml",
        &format!(
            "name: {name}\nlanguages: [en, ru]\nsources:\n  - {{kind: local, path: texts}}\n\
             filter: {{min_words: 100}}\n{extra_topic}"
        ),
    );
    run_ok(&root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    (tmp, root)
}

/// One JSON value a line (JSONL, `--json` listings).
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A collection's manifest.jsonl, parsed.
pub fn manifest(out: &Path) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(out.join("manifest.jsonl")).unwrap())
}

/// The real Wikipedia articles of tests/fixtures/wikitext-articles (see its SOURCE.md).
pub const LITVA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/ruwiki_Litva.wikitext"
));
pub const AARDVARK: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/enwiki_Aardvark.wikitext"
));
pub const AWARD: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/enwiki_Academy_Award_for_Best_Production_Design.wikitext"
));

// ---- Environment ----

/// The trimmed value of an environment variable naming a server, if set and not blank
/// (tests against real servers skip without it).
pub fn env_url(key: &str) -> Option<String> {
    match std::env::var(key) {
        Ok(u) if !u.trim().is_empty() => Some(u.trim().to_string()),
        _ => None,
    }
}

// ---- The loopback web ----

/// Env var the Brave/Yandex stand-ins' key is read from in tests.
pub const KEY_ENV: &str = "COLLECT_TEST_LOOPBACK_KEY";

/// Sets [`KEY_ENV`] to the stand-ins' key, once per process (always the same value).
pub fn set_key() {
    static SET: Once = Once::new();
    SET.call_once(|| std::env::set_var(KEY_ENV, collect::demo::loopback::LOOPBACK_KEY));
}

/// Fast but still paced crawl settings for the loopback web.
pub fn crawl(rps: f64) -> CrawlConfig {
    CrawlConfig {
        per_host_rps: rps,
        concurrency: 8,
        allow_private: true,
        timeout_secs: 1.5,
        connect_timeout_secs: 1.0,
        max_body_bytes: 1024 * 1024,
        retries: 2,
        backoff_ms: 50,
        max_retry_after_secs: 5.0,
        ..CrawlConfig::default()
    }
}

/// A `mediawiki` source asking the API at `api` for `limit` articles (full-text search).
pub fn mediawiki(api: &str, text: WikiText, limit: usize, name: Option<&str>) -> WebSourceConfig {
    WebSourceConfig::Mediawiki(MediaWikiConfig {
        api: Some(api.to_string()),
        limit,
        text,
        article_path: None,
        namespace: 0,
        // MediaWiki's SQL search matches titles only unless asked for text.
        search_what: Some("text".into()),
        concurrency: 3,
        tuples: None,
        name: name.map(str::to_string),
    })
}

/// Asserts that requests to one server respect a minimum spacing: every gap
/// (with a little slack for scheduling jitter on a loaded 2-core machine,
/// since the server sees arrival, not send, times) and, exactly in the long
/// run, every window of consecutive requests.
pub fn assert_spacing(name: &str, log: &[LogEntry], min: Duration) {
    let slack = Duration::from_millis(40);
    let mut at: Vec<_> = log.iter().map(|e| (e.at, e.target.clone())).collect();
    at.sort_by_key(|(t, _)| *t);
    for w in at.windows(2) {
        let gap = w[1].0.duration_since(w[0].0);
        assert!(
            gap + slack >= min,
            "{name}: {} then {} only {gap:?} apart (limit {min:?})",
            w[0].1,
            w[1].1
        );
    }
    for k in 2..at.len() {
        for i in 0..at.len() - k {
            let span = at[i + k].0.duration_since(at[i].0);
            let want = min * k as u32;
            assert!(
                span + slack >= want,
                "{name}: {} requests within {span:?} (limit {want:?})",
                k + 1
            );
        }
    }
}

/// The frontier's record of `url`; panics listing what it has otherwise.
pub fn record(f: &MemoryFrontier, url: &str) -> UrlRecord {
    f.records()
        .into_iter()
        .find(|r| r.url == url)
        .unwrap_or_else(|| {
            panic!(
                "no record for {url}; have {:#?}",
                f.records()
                    .iter()
                    .map(|r| (&r.url, &r.state))
                    .collect::<Vec<_>>()
            )
        })
}

/// The state of PATH on server `s`.
pub fn state(f: &MemoryFrontier, s: &Server, path: &str) -> UrlState {
    record(f, &s.url(path)).state
}

// ---- Stress tests ----

/// xorshift64*: deterministic, enough randomness for mutations, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// STRESS_ITERS, or `default`.
pub fn stress_iters(default: usize) -> usize {
    std::env::var("STRESS_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
