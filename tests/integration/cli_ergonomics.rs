//! Command-line ergonomics through the real binary: `collect update [DIR]` finds the topic
//! file the store remembers, and `--allow-private` opens loopback and private addresses with
//! a warning.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use collect::demo::loopback::{Reply, Request, Response, Server};

use crate::common::*;

const WARNING: &str =
    "warning: --allow-private: requests to loopback, private and link-local addresses are allowed";

/// Real texts of examples/texts, a handful of distinct PEPs.
fn texts() -> Vec<PathBuf> {
    example_files(&["txt"])
}

/// A local collection of the first `n` texts, built from `root/topic.yaml` into `root/out`.
struct Local {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn topic_yaml(folder: &str, dedup: &str) -> String {
    format!(
        "name: ergo\nlanguages: [en, ru]\nsources:\n  - {{kind: local, path: {folder}}}\n\
         filter: {{min_words: 100}}\nrelevance: off\n{dedup}"
    )
}

impl Local {
    fn built(n: usize) -> Local {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::create_dir_all(root.join("texts")).unwrap();
        write(&root, "topic.yaml", &topic_yaml("texts", ""));
        let w = Local { _tmp: tmp, root };
        w.add("texts", &texts()[..n]);
        run_ok(&w.root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
        w
    }
    fn add(&self, folder: &str, files: &[PathBuf]) {
        let dir = self.root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        for f in files {
            std::fs::copy(f, dir.join(f.file_name().unwrap())).unwrap();
        }
    }
    fn out(&self) -> PathBuf {
        self.root.join("out")
    }
    /// `collect --quiet --json update ARGS` in `dir`, which must succeed: its JSON summary.
    fn update_in(&self, dir: &Path, args: &[&str]) -> serde_json::Value {
        let mut a = vec!["--quiet", "--json", "update"];
        a.extend_from_slice(args);
        serde_json::from_slice(&run_ok(dir, &a).stdout).unwrap()
    }
    fn rows(&self) -> usize {
        manifest(&self.out()).len()
    }
}

fn assert_bad_input(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

#[test]
fn update_dir_and_update_in_dir_use_the_remembered_topic_as_it_is_now() {
    let all = texts();
    assert!(all.len() >= 6, "examples/texts has enough texts");
    let w = Local::built(3);
    assert_eq!(w.rows(), 3);

    // `collect update DIR`, from elsewhere: the new texts of the folder come in.
    w.add("texts", &all[3..5]);
    let elsewhere = tempfile::tempdir().unwrap();
    let s = w.update_in(elsewhere.path(), &[w.out().to_str().unwrap()]);
    assert_eq!(s["new"], 2, "{s}");
    assert_eq!(w.rows(), 5);

    // The topic file now names another folder: `cd DIR && collect update` reads the file's
    // current content.
    w.add("more", &all[5..6]);
    write(&w.root, "topic.yaml", &topic_yaml("more", ""));
    let s = w.update_in(&w.out(), &[]);
    assert_eq!(s["new"], 1, "{s}");
    assert_eq!(w.rows(), 6);

    // The old spelling still works.
    w.update_in(&w.root, &["topic.yaml", "--out", "out"]);
}

#[test]
fn a_changed_dedup_setting_in_the_remembered_topic_is_refused() {
    let w = Local::built(2);
    write(
        &w.root,
        "topic.yaml",
        &topic_yaml("texts", "dedup: {method: minn}\n"),
    );
    let o = run(&w.root, &["--quiet", "update", "out"]);
    assert_bad_input(&o, &["detector"]);
}

#[test]
fn a_store_without_the_remembered_topic_asks_for_it_once() {
    let w = Local::built(2);
    let store = w.out().join("collection.sqlite");
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute("DELETE FROM meta WHERE key = 'topic_file'", [])
        .unwrap();
    let o = run(&w.root, &["--quiet", "update", "out"]);
    assert_bad_input(
        &o,
        &[
            "does not remember its topic file",
            "collect update TOPIC.yaml --out",
        ],
    );

    // Once with the topic file, and the store remembers it again.
    w.update_in(&w.root, &["topic.yaml", "--out", "out"]);
    w.update_in(&w.root, &["out"]);

    // A remembered topic file that is gone is named.
    std::fs::rename(w.root.join("topic.yaml"), w.root.join("moved.yaml")).unwrap();
    let o = run(&w.root, &["--quiet", "update", "out"]);
    assert_bad_input(&o, &["is gone", "topic.yaml"]);
}

/// The state and reason the store's frontier recorded for `url`.
fn url_state(out: &Path, url: &str) -> (String, Option<String>) {
    let db = rusqlite::Connection::open(out.join("collection.sqlite")).unwrap();
    db.query_row(
        "SELECT state, reason FROM urls WHERE url = ?1",
        [url],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap_or_else(|e| panic!("{url} not recorded: {e}"))
}

#[test]
fn allow_private_lets_a_build_reach_a_loopback_site_and_warns() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let page = example_article("A PEP", 0);
    let site = rt
        .block_on(Server::start(Arc::new(move |req: &Request| -> Reply {
            match req.path.as_str() {
                "/robots.txt" => Response::new(200, "text/plain", "User-agent: *\nAllow: /\n"),
                "/pep" => Response::html(page.clone()),
                _ => Response::new(404, "text/plain", "not found"),
            }
            .into()
        })))
        .unwrap();
    let url = site.url("/pep");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let sites = format!(
        "name: loop\nlanguages: [en]\nsources:\n  - {{kind: sites, urls: [\"{url}\"], depth: 0}}\n\
         filter: {{min_words: 100}}\nrelevance: off\ncrawl: {{per_host_rps: 50, retries: 0}}\n"
    );
    write(root, "topic.yaml", &sites);

    // Without the flag the loopback address is refused, and nothing warns.
    let o = run(
        root,
        &["--quiet", "build", "topic.yaml", "--out", "refused"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}: {}",
        o.status,
        stderr(&o)
    );
    assert!(!stderr(&o).contains(WARNING), "{}", stderr(&o));
    assert_eq!(
        url_state(&root.join("refused"), &url),
        ("skipped".into(), Some("private-address".into()))
    );
    assert_eq!(site.hits("/pep"), 0);

    // With it the page is fetched and kept, and the warning is on stderr once, even with
    // --quiet.
    let o = run_ok(
        root,
        &[
            "--quiet",
            "build",
            "topic.yaml",
            "--out",
            "allowed",
            "--allow-private",
        ],
    );
    assert_eq!(stderr(&o).matches(WARNING).count(), 1, "{}", stderr(&o));
    assert_eq!(url_state(&root.join("allowed"), &url).0, "fetched");
    let rows = manifest(&root.join("allowed"));
    assert!(
        rows.iter()
            .any(|r| r["url"] == url.as_str() && r["status"] == "kept"),
        "{rows:#?}"
    );

    // update takes the flag too, and warns.
    let o = run_ok(root, &["--quiet", "update", "allowed", "--allow-private"]);
    assert_eq!(stderr(&o).matches(WARNING).count(), 1, "{}", stderr(&o));

    // The topic file's own crawl.allow_private: true warns the same way.
    write(
        root,
        "topic.yaml",
        &sites.replace("crawl: {", "crawl: {allow_private: true, "),
    );
    let o = run_ok(root, &["--quiet", "build", "topic.yaml", "--dry-run"]);
    assert_eq!(stderr(&o).matches(WARNING).count(), 1, "{}", stderr(&o));
}

#[test]
fn demo_accepts_allow_private_and_warns_only_when_given() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_ok(
        tmp.path(),
        &["--quiet", "demo", "--out", "demo", "--allow-private"],
    );
    assert_eq!(stderr(&o).matches(WARNING).count(), 1, "{}", stderr(&o));
}

#[test]
fn a_reader_that_stops_early_ends_the_output_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // One long text and its first quarter: a contained pair whose `review show` prints far more
    // than a pipe holds.
    let long: String = example_files(&["txt"])
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect::<Vec<_>>()
        .join("\n\n");
    let cut = long.char_indices().nth(long.chars().count() / 4).unwrap().0;
    std::fs::create_dir_all(root.join("texts")).unwrap();
    write(&root.join("texts"), "long.txt", &long);
    write(&root.join("texts"), "part.txt", &long[..cut]);
    write(
        root,
        "topic.yaml",
        "name: pipe\nsources:\n  - {kind: local, path: texts}\nrelevance: off\n",
    );
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    let pairs = json_lines(&stdout(&run_ok(
        root,
        &["--json", "review", "--collection", "out", "list", "--pairs"],
    )));
    let id = pairs[0]["id"]
        .as_i64()
        .expect("the part is contained")
        .to_string();
    let mut child = std::process::Command::new(BIN)
        .args(["review", "--collection", "out", "show", &id])
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.starts_with(&format!("pair {id}")), "{first}");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
}
