//! `collect worker`, the per-partition step of a distributed run: for the same JSONL records it
//! gives the documents a build stores — ids, statuses, words, languages, signatures — and
//! reports bad lines in place.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::*;

fn worker(root: &std::path::Path, args: &[&str], input: &str) -> (Vec<Value>, String, i32) {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = input.to_string();
    let feeder = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    (
        json_lines(&String::from_utf8_lossy(&out.stdout)),
        stderr(&out),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn the_worker_prepares_records_as_a_build_stores_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // The PEP revisions of examples/texts (near-copies, short ones), one record each, plus a
    // blank line; the topic reads the same file as its local source.
    let mut jsonl = String::new();
    for (i, f) in example_files(&["txt"]).iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        jsonl.push_str(&serde_json::json!({"id": format!("t{i}"), "text": text}).to_string());
        jsonl.push('\n');
    }
    jsonl.push_str(&serde_json::json!({"id": "short", "text": "too few words"}).to_string());
    jsonl.push_str("\n\n");
    write(root, "docs.jsonl", &jsonl);
    write(
        root,
        "topic.yaml",
        "name: w\nlanguages: [en, ru]\nsources:\n  - {kind: local, path: docs.jsonl, name: corpus}\nfilter: {min_words: 100}\n",
    );
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    let (recs, err, code) = worker(root, &["worker", "topic.yaml"], &jsonl);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("documents prepared"), "{err}");
    let built: BTreeMap<String, Value> = manifest(&root.join("out"))
        .into_iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m))
        .collect();
    assert_eq!(recs.len(), built.len());
    let store = rusqlite::Connection::open(root.join("out/collection.sqlite")).unwrap();
    let mut signed = 0;
    for r in &recs {
        let id = r["id"].as_str().unwrap();
        let m = &built[id];
        for key in ["locator", "words", "lang", "sha256", "source"] {
            assert_eq!(r[key], m[key], "{key} of {id}");
        }
        match r["status"].as_str().unwrap() {
            // Pending texts go on to dedup, which the distributed join does.
            "pending" => assert!(
                matches!(m["status"].as_str(), Some("kept" | "duplicate")),
                "{m}"
            ),
            s => assert_eq!(m["status"], s, "{id}"),
        }
        let mut stored: Vec<i64> = store
            .prepare(
                "SELECT p.fp FROM postings p JOIN documents d ON d.num = p.doc WHERE d.id = ?1",
            )
            .unwrap()
            .query_map([id], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        stored.sort();
        let mut sig: Vec<i64> = r["sig"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        sig.sort();
        sig.dedup();
        assert_eq!(sig, stored, "signature of {id}");
        signed += usize::from(!sig.is_empty());
    }
    assert!(signed >= 10, "most texts are signed: {signed}");
    assert!(recs.iter().any(|r| r["status"] == "short"));

    // Bad lines are reported in place, in input order, and the rest is prepared.
    let mixed = format!(
        "{}\n{{not json\n{}\n",
        jsonl.lines().next().unwrap(),
        jsonl.lines().next().unwrap()
    );
    let (recs, _, code) = worker(root, &["worker", "topic.yaml", "--text"], &mixed);
    assert_eq!(code, 0);
    assert_eq!(recs.len(), 3);
    assert!(recs[0]["text"].as_str().unwrap().len() > 100);
    assert_eq!(
        (recs[1]["line"].as_u64(), recs[1]["skipped"].as_str()),
        (Some(2), Some("bad-json"))
    );
    assert_eq!(recs[2]["skipped"], "duplicate-id");

    // A source the topic does not have is refused.
    let (_, err, code) = worker(root, &["worker", "topic.yaml", "--source", "web"], "");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no source `web`") && err.contains("corpus"),
        "{err}"
    );
}
