//! `collect demo --serve`: the whole pipeline against the demo web of named loopback hosts,
//! run as a newcomer runs it, then the review page of what it built.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::*;

fn host(row: &Value) -> &str {
    row["url"]
        .as_str()
        .and_then(|u| u.split("://").nth(1))
        .and_then(|u| u.split([':', '/']).next())
        .unwrap_or("")
}

#[test]
fn demo_builds_a_collection_worth_keeping_and_serves_its_review_page() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let mut child = Command::new(BIN)
        .args(["--json", "demo", "--serve", "--out", out.to_str().unwrap()])
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let stderr_pipe = child.stderr.take().unwrap();
    let _child = Guard(child);
    // stdout: the build's summary, then the review page's address.
    let summary: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let url = lines.next().unwrap().unwrap();

    let t = &summary["totals"];
    let count = |k: &str| t[k].as_u64().unwrap_or(0);
    assert!(count("kept") >= 150, "a collection worth keeping: {t}");
    for k in ["short", "off_topic", "duplicates", "contained_pairs"] {
        assert!(count(k) > 0, "every stage does real work, {k} too: {t}");
    }

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for source in ["searxng", "brave", "sites", "faults"] {
        assert_eq!(
            report
                .lines()
                .filter(|l| l.starts_with(&format!("| {source} |")))
                .count(),
            2,
            "{source} has a Table 1 row and an Acquisition row:\n{report}"
        );
    }
    // The faults are counted: a link to cloud metadata skipped, a page robots.txt forbids.
    let faults = report
        .lines()
        .filter(|l| l.starts_with("| faults |"))
        .nth(1)
        .unwrap();
    assert!(faults.contains("private-address"), "{faults}");

    let rows = manifest(&out);
    let kept_in = |lang: &str| {
        rows.iter()
            .filter(|r| r["status"] == "kept" && r["lang"] == lang)
            .count()
    };
    assert!(kept_in("ru") >= 30, "Russian texts: {}", kept_in("ru"));
    assert!(kept_in("en") >= 80, "English texts: {}", kept_in("en"));
    // A mirror's copy of a guide page is a duplicate of the original, or the original of it.
    let by_id = |id: &Value| rows.iter().find(|r| r["id"] == *id).unwrap();
    let mirrored = rows
        .iter()
        .filter(|r| r["status"] == "duplicate")
        .filter(|r| {
            let pair = [host(r), host(by_id(&r["duplicate_of"]))];
            pair.contains(&"debian-mirror.example") && pair.contains(&"maint-guide.debian.example")
        })
        .count();
    assert!(
        mirrored >= 5,
        "the mirror's pages are duplicates: {mirrored}"
    );
    // The whole guide as a PDF and as an EPUB is read, and kept: its chapters are contained in it.
    for format in ["pdf", "epub"] {
        assert!(
            rows.iter()
                .any(|r| r["format"] == format && r["status"] == "kept"),
            "a {format} document is in the collection"
        );
    }
    // The encyclopedia of animals is off the theme; the article stubs are short.
    assert!(rows
        .iter()
        .filter(|r| host(r) == "encyclopedia.example")
        .all(|r| r["status"] == "off_topic" || r["status"] == "short"));
    assert!(rows
        .iter()
        .filter(|r| host(r) == "stubs.example")
        .any(|r| r["status"] == "short"));

    // The review page opens on the queue: clusters of contained texts, most at stake first.
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port = port_of(&url);
    let page = http(
        port,
        &format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let queue = stdout(&run_ok(
        tmp.path(),
        &[
            "--json",
            "review",
            "list",
            "--collection",
            out.to_str().unwrap(),
        ],
    ));
    let first = json_lines(&queue)[0]["id"].as_i64().unwrap();
    assert!(
        page.contains(&format!("/cluster/{first}")),
        "the page lists the first pending cluster {first}"
    );
    drop(_child);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stderr_pipe), &mut err).unwrap();
    assert!(err.contains("review page of"), "{err}");
}

#[test]
fn demo_without_serve_says_what_to_do_next() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let r = run(tmp.path(), &["demo", "--out", out.to_str().unwrap()]);
    let err = stderr(&r);
    assert!(r.status.success(), "{err}");
    assert!(err.contains("report.md"), "the summary names the report");
    for step in ["collect review list", "collect serve", "collect export"] {
        assert!(err.contains(step), "next steps name `{step}`: {err}");
    }
    // Progress names the hosts: one line on stderr, the full table in the report.
    assert!(
        err.lines()
            .any(|l| l.starts_with("acquire hosts: ") && l.contains("fetched/failed per host")),
        "{err}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let hosts = &report[report.find("## Hosts").expect("a Hosts section")..];
    assert!(hosts.contains("| faults.example |"), "{hosts}");
    assert!(hosts.contains("| peps.python.example |"), "{hosts}");
}
