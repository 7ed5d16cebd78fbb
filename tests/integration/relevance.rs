//! The relevance stage with the real binary: a local folder of real texts on and off the
//! topic (from the dev set, tests/fixtures/relevance/), built, explained, updated, and built
//! again with the stage switched off.

use serde_json::Value;
use std::path::Path;

use crate::common::*;

const DOGS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/relevance/dogs.jsonl"
));

/// The text of one dev-set entry.
fn text(id: &str) -> String {
    json_lines(DOGS)
        .into_iter()
        .find(|v| v["id"] == id)
        .and_then(|v| v["text"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("{id} not in dogs.jsonl"))
}

const ON: [(&str, &str); 2] = [
    ("chow.txt", "wiki15/44513"),
    ("whippet.txt", "wiki15/33956"),
];
/// An unrelated page and a hard negative: a software product that mentions a dog once.
const OFF: [(&str, &str); 2] = [
    ("unrelated.txt", "wiki15/44543"),
    ("microsoft-bob.txt", "wiki15/51723"),
];

fn topic(relevance: &str) -> String {
    format!(
        "name: dogs\nlanguages: [en, ru]\nkeywords: [породы собак, немецкая овчарка, dog breeds, \
         german shepherd, breed standard]\nsources:\n  - {{kind: local, path: texts}}\n\
         filter: {{min_words: 50}}\n{relevance}"
    )
}

fn by_locator<'a>(m: &'a [Value], file: &str) -> &'a Value {
    m.iter()
        .find(|d| d["locator"].as_str().is_some_and(|l| l.ends_with(file)))
        .unwrap_or_else(|| panic!("{file} not in the manifest"))
}

fn setup(dir: &Path, files: &[(&str, &str)], relevance: &str) {
    std::fs::create_dir_all(dir.join("texts")).unwrap();
    for (f, id) in files {
        write(&dir.join("texts"), f, &text(id));
    }
    write(dir, "topic.yaml", &topic(relevance));
}

#[test]
fn off_topic_texts_stay_in_the_store_counted_scored_and_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir, &[ON[0], ON[1], OFF[0]], "");
    let built = run_ok(dir, &["build", "topic.yaml", "--out", "out"]);
    // The closing line counts what the stage kept out.
    assert!(
        stderr(&built).contains(", 1 off topic, "),
        "{}",
        stderr(&built)
    );
    let m = manifest(&dir.join("out"));
    for (f, _) in &ON[..] {
        let d = by_locator(&m, f);
        assert_eq!(d["status"], "kept", "{d}");
        assert!(d["relevance"].as_f64().unwrap() >= 0.15, "{d}");
    }
    let off = by_locator(&m, OFF[0].0);
    assert_eq!(off["status"], "off_topic", "{off}");
    assert!(off["relevance"].as_f64().unwrap() < 0.15, "{off}");
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("| off topic |"), "{report}");
    let total = report
        .lines()
        .find(|l| l.starts_with("| **total**"))
        .unwrap();
    let cells: Vec<&str> = total.split('|').map(str::trim).collect();
    // source, texts before, MB before, after, MB after, short, filtered, off topic, …
    assert_eq!(cells[8], "1", "{total}");

    let kept_id = by_locator(&m, ON[0].0)["id"].as_str().unwrap().to_string();
    let o = run_ok(dir, &["explain", &kept_id, "--collection", "out"]);
    let out = stdout(&o);
    assert!(
        out.contains("relevance 0.") && out.contains("breed×"),
        "{out}"
    );
    let off_id = off["id"].as_str().unwrap().to_string();
    let o = run_ok(dir, &["--json", "explain", &off_id, "--collection", "out"]);
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["status"], "off_topic");
    assert!(e["why"].as_str().unwrap().contains("off topic"), "{e}");

    // An update scores newcomers by the same rule: the hard negative is kept out too.
    write(&dir.join("texts"), OFF[1].0, &text(OFF[1].1));
    run_ok(dir, &["--quiet", "update", "topic.yaml", "--out", "out"]);
    let m = manifest(&dir.join("out"));
    let bob = by_locator(&m, OFF[1].0);
    assert_eq!(bob["status"], "off_topic", "{bob}");
    let o = run_ok(
        dir,
        &[
            "--json",
            "explain",
            bob["id"].as_str().unwrap(),
            "--collection",
            "out",
        ],
    );
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        e["relevance_terms"].as_str().unwrap().starts_with("dog×"),
        "{e}"
    );

    let o = run_ok(dir, &["--json", "stats", "out"]);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["relevance"]["off_topic"], 2, "{s}");
    assert_eq!(s["total"]["off_topic"], 2, "{s}");
    let o = run_ok(dir, &["export", "out", "--format", "jsonl"]);
    for row in json_lines(&stdout(&o)) {
        assert!(row["relevance"].as_f64().unwrap() >= 0.15, "{row}");
    }
}

#[test]
fn relevance_off_keeps_every_text_unscored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir, &[ON[0], OFF[0], OFF[1]], "relevance: off\n");
    run_ok(dir, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    let m = manifest(&dir.join("out"));
    assert_eq!(m.len(), 3);
    for d in &m {
        assert_eq!(d["status"], "kept", "{d}");
        assert!(d["relevance"].is_null(), "{d}");
    }
    let o = run_ok(dir, &["--json", "stats", "out"]);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(s["relevance"].is_null(), "{s}");
}

#[test]
fn the_dev_set_figures_hold() {
    // README, "Relevance": precision and recall of off_topic at the default threshold.
    let rows =
        collect::workbench::relevance::score_dev_set(&fixture("relevance")).expect("dev set");
    assert_eq!(rows.len(), 79);
    let f = collect::workbench::relevance::figures(&rows, collect::relevance::DEFAULT_THRESHOLD);
    assert!(f.precision >= 0.94 && f.recall >= 0.81, "{f:?}");
}
