//! `collect worker`, the per-partition step of a distributed run: for the same JSONL records it
//! gives the documents a build stores — ids, statuses, words, languages, signatures — and
//! reports bad lines in place.

use rusqlite::OptionalExtension;
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
        // One value per document: its fingerprints, 8 little-endian bytes each, ascending.
        let value: Vec<u8> = store
            .query_row(
                "SELECT s.fps FROM signatures s JOIN documents d ON d.num = s.doc WHERE d.id = ?1",
                [id],
                |row| row.get(0),
            )
            .optional()
            .unwrap()
            .unwrap_or_default();
        let mut stored: Vec<i64> = value
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()) as i64)
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

#[test]
fn the_keep_rule_over_a_component_chooses_as_the_build_did() {
    let (_tmp, root) = examples_collection("keep", "");
    let store = rusqlite::Connection::open(root.join("out/collection.sqlite")).unwrap();
    // Every text that met dedup, with the build's duplicate pairs between them.
    let docs: Vec<(String, i64, i64, String, Option<String>)> = store
        .prepare(
            "SELECT id, words, source_rank, status, duplicate_of FROM documents
             WHERE status IN ('kept', 'duplicate') ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let index: BTreeMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.0.as_str(), i))
        .collect();
    let duplicates: Vec<(usize, usize)> = store
        .prepare("SELECT a, b FROM pairs WHERE verdict = 'duplicate'")
        .unwrap()
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .map(|(a, b)| (index[a.as_str()], index[b.as_str()]))
        .collect();
    assert!(!duplicates.is_empty(), "the PEP revisions give duplicates");
    let component = serde_json::json!({
        "component": "all",
        "candidates": docs.iter().map(|d| serde_json::json!({
            "id": d.0, "words": d.1, "source_rank": d.2
        })).collect::<Vec<_>>(),
        "duplicates": duplicates,
    });
    let (out, err, code) = worker(&root, &["keep"], &format!("{component}\n"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.len(), docs.len());
    for (rec, d) in out.iter().zip(&docs) {
        assert_eq!(rec["id"], d.0.as_str());
        assert_eq!(rec["component"], "all");
        assert_eq!(rec["duplicate_of"].as_str(), d.4.as_deref(), "{}", d.0);
        assert_eq!(rec["duplicate_of"].is_null(), d.3 == "kept");
    }
    // A pair naming a candidate that is not there is refused, naming the line.
    let bad =
        r#"{"candidates": [{"id": "a", "words": 1, "source_rank": 0}], "duplicates": [[0, 3]]}"#;
    let (_, err, code) = worker(&root, &["keep"], &format!("\n{bad}\n"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("stdin:2") && err.contains("(0, 3)"), "{err}");
}
