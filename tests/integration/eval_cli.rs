//! Runs the real `collect` binary on a small real fixture (tests/fixtures/clough_small).

use std::path::PathBuf;

use crate::common::{root, run, stderr, stdout};

fn fixture() -> PathBuf {
    crate::common::fixture("clough_small")
}

/// Runs `collect ARGS` from the package root: (success, stdout, stderr).
fn collect(args: &[&str]) -> (bool, String, String) {
    let out = run(root(), args);
    (out.status.success(), stdout(&out), stderr(&out))
}

fn eval_args(extra: &[&str]) -> Vec<String> {
    let f = fixture();
    let mut v: Vec<String> = vec![
        "--quiet".into(),
        "eval".into(),
        "--docs".into(),
        f.join("docs").display().to_string(),
        "--pairs".into(),
        f.join("pairs.tsv").display().to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn eval_table_matches_the_fixture() {
    let args = eval_args(&[
        "--method",
        "modm,tf,infostream,a12",
        "--thresholds",
        "0.5:0.6:0.1",
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = collect(&args);
    assert!(ok, "{err}");
    // 7 positive pairs (2 cut, 2 light, 3 heavy), 5 `non`. At 0.6 the copied passages of the
    // grey zone keep a pair flagged that containment alone drops; two answers of one task that
    // hold the same pasted passage are flagged too (the fifth pair at 0.5).
    for row in [
        "| modm | 0.50 | 5 | 3 | 3 | 0 | 1.000 | 0.429 | 0.600 | 0.0 |",
        "| modm | 0.60 | 4 | 3 | 3 | 0 | 1.000 | 0.429 | 0.600 | 0.0 |",
        "| tf | — | 1 | 1 | 1 | 0 | 1.000 | 0.143 | 0.250 | 0.0 |",
        "| infostream | — | 6 | 3 | 3 | 0 | 1.000 | 0.429 | 0.600 | 0.0 |",
        "| a12 | — | 1 | 1 | 1 | 0 | 1.000 | 0.143 | 0.250 | 0.0 |",
    ] {
        assert!(out.contains(row), "missing {row} in\n{out}");
    }
}

#[test]
fn by_label_counts_flagged_pairs_and_the_grey_zone_flags_turn_it_off() {
    let run_at = |extra: &[&str]| {
        let mut more = vec!["--method", "modm", "--thresholds", "0.6", "--by-label"];
        more.extend(extra);
        let args = eval_args(&more);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = collect(&args);
        assert!(ok, "{err}");
        out
    };
    // At 0.6 one `cut` answer is flagged only for the passage it pastes from the source.
    let with = run_at(&[]);
    for row in [
        "| modm | 0.60 | cut | 2 | 2 | 0 |",
        "| modm | 0.60 | non | 5 | 0 | 0 |",
        "| modm | 0.60 | light | 2 | 1 | 1 |",
    ] {
        assert!(with.contains(row), "missing {row} in\n{with}");
    }
    let without = run_at(&["--verify-from", "2", "--passage-words", "0"]);
    assert!(
        without.contains("| modm | 0.60 | cut | 2 | 1 | 0 |"),
        "{without}"
    );
}

#[test]
fn every_method_runs_and_json_has_rows() {
    let args = eval_args(&["--method", "all", "--thresholds", "0.5"]);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.insert(0, "--json");
    let (ok, out, err) = collect(&args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let methods: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods.len(), 18, "{methods:?}");
    assert!(methods.contains(&"megashingles36") && methods.contains(&"prefilter2"));
}

#[test]
fn svm_trains_and_evaluates_from_labels() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.json");
    let m = model.display().to_string();
    let args = eval_args(&["--method", "svm", "--train", &m, "--folds", "3"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = collect(&args);
    assert!(ok, "{err}");
    assert!(out.contains("| svm | — |"), "{out}");
    assert!(
        out.contains("| training pairs | F1 all criteria |"),
        "{out}"
    );
    // The written model evaluates on its own.
    let args = eval_args(&["--method", "svm", "--model", &m]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = collect(&args);
    assert!(ok && out.contains("| svm |"), "{err}");
}

#[test]
fn bad_labels_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, "a\tb\tlabel\nonly-one-column\n").unwrap();
    let f = fixture();
    let (ok, _, err) = collect(&[
        "eval",
        "--docs",
        &f.join("docs").display().to_string(),
        "--pairs",
        &bad.display().to_string(),
    ]);
    assert!(!ok);
    assert!(err.contains("bad.tsv:2"), "{err}");
}

#[test]
fn relation_stats_and_dedup_with_new_methods() {
    let docs = fixture().join("docs").display().to_string();
    let (ok, out, err) = collect(&["stats", "--relation", "full", &docs]);
    assert!(ok, "{err}");
    assert!(out.contains("| asymmetry"), "{out}");
    assert!(out.contains("| connected components |"), "{out}");
    let (ok, out, err) = collect(&["--quiet", "dedup", &docs, "--method", "infostream"]);
    assert!(ok, "{err}");
    assert!(out.starts_with("a\tb\tresemblance"), "{out}");
}
