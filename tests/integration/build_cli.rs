//! `collect build` and `collect dedup` run as a user runs them, on the real texts in
//! examples/texts (PEP revisions: natural near-duplicates; see examples/texts/SOURCE.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

fn write_topic(dir: &Path, source: &str) -> PathBuf {
    write(
        dir,
        "topic.yaml",
        &format!(
            "name: peps\ntitle: PEPs\nlanguages: [en, ru]\nsources:\n  - {source}\nfilter: {{min_words: 100}}\ndedup: {{method: modm, shingle: 4, modulus: 25, resemblance: 0.5, containment: 0.5}}\n"
        ),
    )
}

/// Every file of a directory tree, by relative path.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().contains("collection.sqlite") {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_fresh_build_stores_each_document_once_however_many_sources_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = examples();
    let topic = write_topic(
        tmp.path(),
        &format!(
            "{{kind: local, path: {0}, name: first}}\n  - {{kind: local, path: {0}, name: again}}",
            folder.display()
        ),
    );
    let out = tmp.path().join("out");
    let o = run(
        tmp.path(),
        &[
            "build",
            topic.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("read again: 22 documents, 0 new"),
        "the second source's documents are stored already: {}",
        stderr(&o)
    );
    let rows = manifest(&out);
    assert_eq!(rows.len(), 22, "each input once");
    assert!(
        rows.iter().all(|r| r["source"] == "first"),
        "the first source's"
    );
    let ids: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), rows.len());
}

#[test]
fn build_report_rerun_and_force_are_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let topic = write_topic(
        tmp.path(),
        &format!("{{kind: local, path: {}}}", examples().display()),
    );
    let out = tmp.path().join("out");
    let t = topic.to_str().unwrap();
    let o = out.to_str().unwrap();
    let first = run(tmp.path(), &["build", t, "--out", o, "--quiet"]);
    assert!(first.status.success(), "{}", stderr(&first));

    let rows = manifest(&out);
    assert_eq!(rows.len(), 22, "every input has a manifest row");
    let by_id: BTreeMap<String, &serde_json::Value> = rows
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r))
        .collect();
    let status = |s: &str| rows.iter().filter(|r| r["status"] == s).count();
    assert!(
        status("duplicate") >= 3,
        "PEP revisions are near-duplicates"
    );
    assert!(status("short") >= 1, "the 21-word PEP stub is short");
    for r in &rows {
        match r["status"].as_str().unwrap() {
            "duplicate" => {
                let kept = by_id[r["duplicate_of"].as_str().unwrap()];
                assert_eq!(kept["status"], "kept");
                assert!(
                    kept["words"].as_u64() >= r["words"].as_u64(),
                    "the longest copy stays"
                );
            }
            "kept" => {
                let id = r["id"].as_str().unwrap();
                let text = std::fs::read_to_string(out.join(format!("docs/{id}.txt"))).unwrap();
                assert!(!text.trim().is_empty());
            }
            _ => assert!(!out
                .join(format!("docs/{}.txt", r["id"].as_str().unwrap()))
                .exists()),
        }
    }
    // The three revisions of PEP 100 are one text in the collection.
    let pep100: Vec<_> = rows
        .iter()
        .filter(|r| r["locator"].as_str().unwrap().starts_with("pep-0100"))
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        pep100.iter().filter(|s| **s == "kept").count(),
        1,
        "{pep100:?}"
    );

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| source | texts before | MB before | texts after cleaning"));
    assert!(report.contains("| local | 22 |"), "{report}");

    // Building over a collection is refused (exit 2) and points to update.
    let again = run(tmp.path(), &["build", t, "--out", o]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("collect update"));

    // --force rebuilds to byte-identical output.
    let before = snapshot(&out);
    let forced = run(tmp.path(), &["build", t, "--out", o, "--force", "--quiet"]);
    assert!(forced.status.success());
    assert_eq!(before, snapshot(&out));
}

#[test]
fn same_collection_whatever_thread_count_or_input_order() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = Vec::new();
    for f in &example_files(&["txt"]) {
        let id = f.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        lines.push(serde_json::json!({"id": id, "text": text}).to_string());
    }
    let forward = tmp.path().join("forward.jsonl");
    std::fs::write(&forward, lines.join("\n")).unwrap();
    lines.reverse();
    let backward = tmp.path().join("backward.jsonl");
    std::fs::write(&backward, lines.join("\n")).unwrap();

    let mut results = Vec::new();
    for (input, threads) in [(&forward, "1"), (&forward, "2"), (&backward, "2")] {
        let dir = tempfile::tempdir_in(tmp.path()).unwrap();
        let topic = write_topic(
            dir.path(),
            &format!("{{kind: local, path: {}}}", input.display()),
        );
        let out = dir.path().join("out");
        let r = run(
            dir.path(),
            &[
                "build",
                topic.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
                "--threads",
                threads,
            ],
        );
        assert!(r.status.success(), "{}", stderr(&r));
        results.push(snapshot(&out));

        let d = run(
            dir.path(),
            &[
                "dedup",
                input.to_str().unwrap(),
                "--all-pairs",
                "--quiet",
                "--threads",
                threads,
            ],
        );
        assert!(d.status.success());
        results.push(BTreeMap::from([("dedup".to_string(), d.stdout)]));
    }
    assert!(results[0].contains_key("manifest.jsonl"));
    assert_eq!(results[0], results[2], "thread count changes nothing");
    assert_eq!(results[0], results[4], "input order changes nothing");
    assert_eq!(results[1], results[3]);
    assert_eq!(results[1], results[5]);
}

#[test]
fn bad_topic_is_reported_with_its_place_and_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let topic = tmp.path().join("x.yaml");
    std::fs::write(
        &topic,
        "name: x\nsources:\n  - {kind: local, path: .}\nfilter: {min_wrods: 3}\n",
    )
    .unwrap();
    let r = run(tmp.path(), &["build", topic.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    let err = stderr(&r);
    assert!(err.contains(&format!("{}:4:", topic.display())), "{err}");
    assert!(err.contains("min_wrods"), "{err}");
}

#[test]
fn dedup_tsv_lists_pep_revisions_as_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(
        tmp.path(),
        &["dedup", examples().to_str().unwrap(), "--quiet"],
    );
    assert!(r.status.success());
    let tsv = String::from_utf8(r.stdout).unwrap();
    let mut lines = tsv.lines();
    assert_eq!(
        lines.next(),
        Some("a\tb\tresemblance\tcont_a_in_b\tcont_b_in_a\tverdict")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().any(|r| r[0].starts_with("pep-0100")
        && r[1].starts_with("pep-0100")
        && r[5] == "duplicate"));
    for r in &rows {
        assert!(r[0] < r[1], "pairs are ordered by id");
        let res: f64 = r[2].parse().unwrap();
        assert!((0.0..=1.0).contains(&res));
    }
    // Bad input: a JSONL line that is not JSON names its line.
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\":\"a\",\"text\":\"x\"}\nnot json\n").unwrap();
    let r = run(tmp.path(), &["dedup", bad.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("bad.jsonl:2:"));
}

#[test]
fn shipped_topics_parse_and_plan_without_fetching() {
    for name in ["dogs", "interior", "landscape", "reenactment", "example"] {
        let topic = root().join(format!("topics/{name}.yaml"));
        let r = Command::new(BIN)
            .args(["build", topic.to_str().unwrap(), "--dry-run"])
            .env_remove("BRAVE_API_KEY")
            .env_remove("YANDEX_API_KEY")
            .output()
            .unwrap();
        assert!(r.status.success(), "{name}: {}", stderr(&r));
        let plan = stdout(&r);
        assert!(plan.contains("nothing fetched"), "{name}: {plan}");
        if name != "example" {
            assert!(
                plan.contains("mediawiki:ru.wikipedia.org\t"),
                "{name}: {plan}"
            );
            assert!(
                plan.contains("skipped: environment variable BRAVE_API_KEY"),
                "{name}: {plan}"
            );
        }
    }
}

/// A build leaves one line per stage on stderr, with counts and rates, and a closing line that
/// names the report; stdout holds nothing but the JSON summary under `--json`, and `--quiet`
/// leaves stderr empty.
#[test]
fn stage_lines_go_to_stderr_and_never_into_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = examples().display().to_string();
    let t = write_topic(dir, &format!("{{kind: local, path: \"{src}\"}}"));
    let t = t.to_str().unwrap();

    let plain = run_ok(dir, &["build", t, "--out", "a"]);
    let err = stderr(&plain);
    let stage = err
        .lines()
        .find(|l| l.starts_with("read "))
        .unwrap_or_else(|| panic!("no read line: {err}"));
    assert!(
        stage.contains(" documents, ") && stage.contains(" s"),
        "{stage}"
    );
    assert!(err.lines().any(|l| l.starts_with("dedup: ")), "{err}");
    assert!(err.trim_end().ends_with("report.md"), "{err}");
    assert!(stdout(&plain).is_empty(), "{}", stdout(&plain));

    let json = run_ok(dir, &["--json", "build", t, "--out", "b"]);
    let out = stdout(&json);
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("stdout is one JSON");
    assert!(summary["totals"]["kept"].as_u64().unwrap() > 0, "{summary}");
    assert!(
        stderr(&json).contains("dedup: "),
        "stage lines stay on stderr"
    );
    // The stages of the lines, with their wall and CPU seconds, in order.
    let stages = summary["stages"].as_array().expect("stages listed");
    let names: Vec<&str> = stages.iter().filter_map(|s| s["stage"].as_str()).collect();
    assert_eq!(names.last(), Some(&"dedup"), "{summary}");
    assert!(names.iter().any(|n| n.starts_with("read ")), "{summary}");
    for s in stages {
        assert!(s["secs"].as_f64().is_some_and(|t| t >= 0.0), "{s}");
        assert!(s["cpu_secs"].as_f64().is_some_and(|t| t >= 0.0), "{s}");
    }

    let quiet = run_ok(dir, &["--quiet", "build", t, "--out", "c"]);
    assert!(stderr(&quiet).is_empty(), "{}", stderr(&quiet));
    assert!(stdout(&quiet).is_empty());
}

/// A short text wholly inside a longer one is contained by its scores, but when the two share
/// fewer shingles than `min_shared_shingles` the pair is `weak`: listed with `--all-pairs`,
/// never in the review queue.
#[test]
fn contained_pairs_sharing_too_little_are_weak_and_not_queued() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let stub = "Year eight hundred twenty one was a common year starting on Tuesday \
                of the Julian calendar, remembered for harvests, councils, comets and floods";
    let long = format!(
        "{stub}. Chroniclers in distant monasteries wrote of rivers freezing early, \
         merchants crossing mountain passes with salt and amber, bishops quarrelling \
         over relics, shipwrights building longer keels, shepherds moving flocks before \
         blizzards, and scholars copying grammars, herbals, calendars and letters \
         through the long winter evenings while the markets of the coast stayed quiet."
    );
    let docs = root.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("stub.txt"), stub).unwrap();
    std::fs::write(docs.join("annal.txt"), &long).unwrap();
    let verdicts = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["dedup", docs.to_str().unwrap(), "--quiet"];
        args.extend_from_slice(extra);
        let out = stdout(&run_ok(root, &args));
        out.lines()
            .skip(1)
            .map(|l| l.rsplit('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(verdicts(&["--all-pairs"]), vec!["weak"]);
    assert!(
        verdicts(&[]).is_empty(),
        "a weak pair is not listed by default"
    );
    assert_eq!(
        verdicts(&["--min-shared-shingles", "0"]),
        vec!["contained"],
        "without the evidence rule the scores alone decide"
    );

    write(
        root,
        "topic.yaml",
        &format!(
            "name: weak\nsources:\n  - {{kind: local, path: {}}}\nfilter: {{min_words: 0}}\nrelevance: off\n",
            docs.display()
        ),
    );
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    let queue = stdout(&run_ok(
        root,
        &["--json", "review", "list", "--collection", "out"],
    ));
    assert!(queue.trim().is_empty(), "nothing to review: {queue}");
}
