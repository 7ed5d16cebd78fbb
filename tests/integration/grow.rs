//! Growing a collection with the real binary on the real texts of examples/texts: build on a
//! third of them, update twice, review, export; and kill updates at several points.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::*;

fn texts() -> Vec<PathBuf> {
    example_files(&["txt", "html"])
}

/// The texts of round `k` (0, 1, 2): every third file, so revisions of one PEP land in
/// different rounds and newcomers meet stored near-copies.
fn round(k: usize) -> Vec<PathBuf> {
    texts().into_iter().skip(k).step_by(3).collect()
}

struct Work {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Work {
    fn new() -> Work {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::create_dir_all(root.join("texts")).unwrap();
        write(
            &root,
            "topic.yaml",
            "name: grow\nlanguages: [en, ru]\nsources:\n  - {kind: local, path: texts}\n\
             filter: {min_words: 100}\n",
        );
        Work { _tmp: tmp, root }
    }
    fn add(&self, files: &[PathBuf]) {
        for f in files {
            std::fs::copy(f, self.root.join("texts").join(f.file_name().unwrap())).unwrap();
        }
    }
    fn out(&self) -> PathBuf {
        self.root.join("out")
    }
    fn run(&self, args: &[&str]) -> Output {
        run_ok(&self.root, args)
    }
    fn build(&self) {
        self.run(&["--quiet", "build", "topic.yaml", "--out", "out"]);
    }
    fn update(&self) -> Value {
        let o = self.run(&["--quiet", "--json", "update", "topic.yaml", "--out", "out"]);
        serde_json::from_slice(&o.stdout).unwrap()
    }
    fn manifest(&self) -> Vec<Value> {
        manifest(&self.out())
    }
    /// manifest.jsonl and every file of docs/, as bytes: what two runs must agree on.
    fn snapshot(&self) -> (String, Vec<(String, Vec<u8>)>) {
        let manifest = std::fs::read_to_string(self.out().join("manifest.jsonl")).unwrap();
        let mut docs: Vec<(String, Vec<u8>)> = std::fs::read_dir(self.out().join("docs"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        docs.sort();
        (manifest, docs)
    }
    fn review(&self, args: &[&str]) -> Vec<Value> {
        let mut a = vec!["--json", "review"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--collection", "out"]);
        json_lines(&stdout(&self.run(&a)))
    }
}

fn status_of(manifest: &[Value]) -> std::collections::BTreeMap<String, String> {
    manifest
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn build_update_twice_review_and_export() {
    let w = Work::new();
    w.add(&round(0));
    w.build();
    let first = status_of(&w.manifest());
    assert_eq!(first.len(), round(0).len());

    w.add(&round(1));
    let u1 = w.update();
    assert_eq!(u1["new"], round(1).len());
    let after1 = status_of(&w.manifest());
    // Stored documents keep their status; every newcomer is settled.
    for (id, st) in &first {
        assert_eq!(&after1[id], st, "{id} changed status");
    }
    assert!(after1.values().all(|s| s != "pending"));

    // Decide a pending pair, then grow again: the decision stays and is never asked again.
    let pending = w.review(&["list", "--pairs"]);
    assert!(
        !pending.is_empty(),
        "the PEP revisions give contained pairs"
    );
    for key in [
        "id",
        "a",
        "b",
        "url_a",
        "url_b",
        "resemblance",
        "cont_a_in_b",
        "status",
    ] {
        assert!(
            pending[0].get(key).is_some(),
            "review list --json lacks {key}"
        );
    }
    let pid = pending[0]["id"].as_i64().unwrap();
    let contained = pending[0]["contained"].as_str().unwrap().to_string();
    w.run(&[
        "review",
        "decide",
        &pid.to_string(),
        "drop-contained",
        "--note",
        "older copy",
        "--collection",
        "out",
    ]);
    assert!(!w.out().join(format!("docs/{contained}.txt")).exists());

    w.add(&round(2));
    let u2 = w.update();
    assert_eq!(u2["new"], round(2).len());
    let m = w.manifest();
    let after2 = status_of(&m);
    assert_eq!(after2.len(), texts().len(), "no document lost, none twice");
    assert_eq!(after2[&contained], "dropped");
    for (id, st) in &after1 {
        if id != &contained {
            assert_eq!(&after2[id], st, "{id} changed status in the second update");
        }
    }
    let decided = w.review(&["list", "--pairs", "--status", "decided"]);
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0]["note"], "older copy");
    assert!(w
        .review(&["list", "--pairs"])
        .iter()
        .all(|p| p["id"] != pid));

    // A newcomer duplicating a stored text names it.
    let newcomer_dups: Vec<&Value> = m
        .iter()
        .filter(|r| r["status"] == "duplicate" && !first.contains_key(r["id"].as_str().unwrap()))
        .collect();
    assert!(!newcomer_dups.is_empty());
    for r in &newcomer_dups {
        assert_eq!(after2[r["duplicate_of"].as_str().unwrap()], "kept");
    }

    // docs/ holds exactly the kept texts; the export honours the decision.
    let kept: Vec<&String> = after2
        .iter()
        .filter(|(_, s)| *s == "kept")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        std::fs::read_dir(w.out().join("docs")).unwrap().count(),
        kept.len()
    );
    let o = w.run(&["export", "out", "--format", "jsonl"]);
    let rows = json_lines(&stdout(&o));
    assert_eq!(rows.len(), kept.len());
    assert!(rows.iter().all(|r| r["id"] != contained.as_str()));
    for key in [
        "id",
        "text",
        "title",
        "url",
        "source",
        "lang",
        "words",
        "relevance",
    ] {
        assert!(rows[0].get(key).is_some(), "export lacks {key}");
    }
    w.run(&["export", "out", "--format", "csv", "--out", "c.csv"]);
    let csv = std::fs::read_to_string(w.root.join("c.csv")).unwrap();
    assert!(csv.starts_with("id,text,title,url,source,lang,words,relevance,date,format\r\n"));
    w.run(&["export", "out", "--format", "txt", "--out", "txt"]);
    assert_eq!(
        std::fs::read_dir(w.root.join("txt")).unwrap().count(),
        kept.len()
    );
    // The summary counts what the format holds: pairs for pairs, texts for the others.
    let o = w.run(&["export", "out", "--format", "pairs", "--out", "p.tsv"]);
    let pairs = std::fs::read_to_string(w.root.join("p.tsv")).unwrap();
    let n = pairs.lines().count() - 1;
    assert!(n > 0);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("exported {n} pairs to ")),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(
        &w.run(&["export", "out", "--format", "csv", "--out", "c.csv"])
            .stderr
    )
    .contains(&format!("exported {} texts to ", kept.len())));

    // explain tells why the dropped text is out.
    let o = w.run(&["--json", "explain", &contained, "--collection", "out"]);
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["status"], "dropped");
    assert_eq!(e["dropped_by"], pid);
    assert!(e["why"].as_str().unwrap().contains(&format!("pair {pid}")));

    let o = w.run(&["--json", "stats", "out"]);
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["review"]["decided"], 1);
    assert_eq!(s["total"]["dropped"], 1);
    assert_eq!(s["total"]["texts_before"], texts().len());

    // Nothing new: an update changes nothing.
    let before = w.snapshot();
    assert_eq!(w.update()["new"], 0);
    assert_eq!(w.snapshot(), before);

    // Python's loaders read the JSONL as is, when python3 and pandas are here.
    let jsonl = w.root.join("c.jsonl");
    w.run(&["export", "out", "--format", "jsonl", "--out", "c.jsonl"]);
    let py = Command::new("python3")
        .args([
            "-c",
            "import sys, pandas; d = pandas.read_json(sys.argv[1], lines=True); print(len(d), sorted(d.columns))",
        ])
        .arg(&jsonl)
        .output();
    match py {
        Ok(o) if o.status.success() => {
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.starts_with(&format!("{} ", kept.len())), "{out}");
        }
        _ => eprintln!("skipped the pandas check: python3 with pandas is not available"),
    }
}

#[test]
fn review_errors_name_the_input() {
    let w = Work::new();
    w.add(&round(0));
    w.build();
    let o = run(
        &w.root,
        &[
            "review",
            "decide",
            "999",
            "keep-both",
            "--collection",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no pair 999"));
    let o = run(&w.root, &["review", "list", "--collection", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nowhere"));
    let o = run(&w.root, &["update", "topic.yaml", "--out", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Runs an update that pauses at `stage`, kills it with SIGKILL once paused, and returns.
fn kill_update_at(w: &Work, stage: &str) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(BIN)
        .args(["--quiet", "update", "topic.yaml", "--out", "out"])
        .current_dir(&w.root)
        .env("COLLECT_TEST_PAUSE_AFTER", stage)
        .env("COLLECT_TEST_BATCH", "2")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut paused = false;
    for line in lines.by_ref() {
        if line.unwrap().contains(&format!("paused after {stage}")) {
            paused = true;
            break;
        }
    }
    assert!(paused, "update never reached {stage}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn killed_update_reruns_to_the_uninterrupted_collection() {
    let reference = Work::new();
    reference.add(&round(0));
    reference.build();
    reference.add(&round(1));
    reference.add(&round(2));
    reference.update();
    let want = reference.snapshot();

    for stage in ["read-batch", "read", "dedup", "export-docs"] {
        let w = Work::new();
        w.add(&round(0));
        w.build();
        w.add(&round(1));
        w.add(&round(2));
        kill_update_at(&w, stage);
        // A second kill in the same place, then the rerun that finishes.
        if stage == "read-batch" {
            kill_update_at(&w, stage);
        }
        w.update();
        assert_eq!(w.snapshot(), want, "after a kill at {stage}");
    }
}

/// `(stored documents, of them without signature sizes)`.
fn sizes_unknown(w: &Work) -> (i64, i64) {
    let db = rusqlite::Connection::open(w.out().join("collection.sqlite")).unwrap();
    db.query_row(
        "SELECT COUNT(*), COUNT(*) - COUNT(sig_sampled) FROM documents",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn an_update_weighs_stored_partners_by_their_sizes_or_by_their_signatures_alike() {
    let sized = Work::new();
    sized.add(&round(0));
    sized.build();
    assert_eq!(sizes_unknown(&sized).1, 0, "a build stores every size");
    sized.add(&round(1));
    let grown = sized.update();
    assert!(
        grown["duplicates"].as_u64().unwrap() + grown["new_review_pairs"].as_u64().unwrap() > 0
    );

    // As a store written before the sizes were: the update loads its partners' signatures.
    let unsized_store = Work::new();
    unsized_store.add(&round(0));
    unsized_store.build();
    let db = rusqlite::Connection::open(unsized_store.out().join("collection.sqlite")).unwrap();
    db.execute(
        "UPDATE documents SET sig_sampled = NULL, sig_exact = NULL",
        [],
    )
    .unwrap();
    drop(db);
    let (stored, _) = sizes_unknown(&unsized_store);
    unsized_store.add(&round(1));
    let grown_unsized = unsized_store.update();
    assert_eq!(
        grown_unsized,
        Value::Object({
            let mut g = grown.as_object().unwrap().clone();
            g.insert("out".into(), grown_unsized["out"].clone());
            g.insert(
                "compare_seconds".into(),
                grown_unsized["compare_seconds"].clone(),
            );
            g.insert("stages".into(), grown_unsized["stages"].clone());
            g
        })
    );
    assert_eq!(unsized_store.snapshot(), sized.snapshot());
    // The partners it loaded have their sizes now; the newcomers came with theirs.
    let (after, unknown) = sizes_unknown(&unsized_store);
    assert!(
        after > stored && unknown < stored,
        "{unknown} of {stored} still unknown"
    );
}

/// `(status, duplicate_of)` by locator (the file name), from a manifest.
fn outcome_of(manifest: &[Value]) -> std::collections::BTreeMap<String, (String, Value)> {
    manifest
        .iter()
        .map(|r| {
            (
                r["locator"].as_str().unwrap().to_string(),
                (
                    r["status"].as_str().unwrap().to_string(),
                    r["duplicate_of"].clone(),
                ),
            )
        })
        .collect()
}

/// The keep rule has one home: built over A and updated with B, a collection ends exactly as
/// one build over A∪B when every newcomer ranks below the stored texts; and when a newcomer
/// outranks a stored duplicate partner, the stored text stays and the newcomer is the duplicate.
#[test]
fn update_settles_newcomers_by_the_build_keep_rule() {
    let all = Work::new();
    all.add(&texts());
    all.build();
    let whole = all.manifest();
    let words = |r: &Value| r["words"].as_u64().unwrap();
    let mut by_words: Vec<&Value> = whole.iter().collect();
    by_words.sort_by_key(|r| std::cmp::Reverse(words(r)));
    let file = |r: &Value| -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/texts")
            .join(r["locator"].as_str().unwrap())
    };
    let half = by_words.len() / 2;
    let (long, short): (Vec<PathBuf>, Vec<PathBuf>) = (
        by_words[..half].iter().map(|r| file(r)).collect(),
        by_words[half..].iter().map(|r| file(r)).collect(),
    );
    assert!(
        words(by_words[half - 1]) > words(by_words[half]),
        "a clean split by words"
    );

    // Newcomers all shorter than the stored texts: update = build over everything.
    let grown = Work::new();
    grown.add(&long);
    grown.build();
    grown.add(&short);
    grown.update();
    assert_eq!(outcome_of(&grown.manifest()), outcome_of(&whole));

    // Newcomers longer than their stored duplicates: the copies a build drops are stored first,
    // the texts a build keeps come as newcomers; what was kept stays kept.
    let locator_of: std::collections::BTreeMap<&str, &Value> = whole
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), &r["locator"]))
        .collect();
    let dropped: Vec<&Value> = whole
        .iter()
        .filter(|r| r["status"] == "duplicate")
        .collect();
    assert!(!dropped.is_empty(), "the example texts hold near-copies");
    let keepers: Vec<PathBuf> = dropped
        .iter()
        .map(|r| {
            let kept = locator_of[r["duplicate_of"].as_str().unwrap()];
            file(&serde_json::json!({ "locator": kept }))
        })
        .collect();
    let reversed = Work::new();
    reversed.add(&dropped.iter().map(|r| file(r)).collect::<Vec<_>>());
    reversed.build();
    let before = outcome_of(&reversed.manifest());
    reversed.add(&keepers);
    reversed.update();
    let after = reversed.manifest();
    let id_words: std::collections::BTreeMap<&str, u64> = after
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), words(r)))
        .collect();
    let outcomes = outcome_of(&after);
    for (locator, (status, _)) in &before {
        if status == "kept" {
            assert_eq!(
                &outcomes[locator].0, "kept",
                "{locator} was kept and must stay"
            );
        }
    }
    let outranked_stored = after.iter().any(|r| {
        r["status"] == "duplicate"
            && !before.contains_key(r["locator"].as_str().unwrap())
            && id_words[r["duplicate_of"].as_str().unwrap()] < words(r)
    });
    assert!(
        outranked_stored,
        "some newcomer outranks its stored partner and still is the duplicate"
    );
}

#[test]
fn an_update_passes_by_the_files_that_did_not_change() {
    let w = Work::new();
    w.add(&round(0));
    w.build();
    let before = std::fs::read_to_string(w.out().join("manifest.jsonl")).unwrap();
    // Nothing changed: nothing is read, nothing changes.
    let u = w.update();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(0), Some(0)));
    assert_eq!(
        std::fs::read_to_string(w.out().join("manifest.jsonl")).unwrap(),
        before
    );
    // One file rewritten and one added: only those two are read.
    let texts = w.root.join("texts");
    let first = std::fs::read_dir(&texts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .min()
        .unwrap();
    let mut body = std::fs::read_to_string(&first).unwrap();
    body.push_str("\n\nA paragraph added since the build, so the file is not what was read.\n");
    std::fs::write(&first, body).unwrap();
    w.add(&round(1)[..1]);
    let o = w.run(&["--json", "update", "topic.yaml", "--out", "out"]);
    let u: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(2), Some(2)));
    // Its stages end as a build's do: the dedup stage closes with the collection written.
    let stages: Vec<&str> = u["stages"]
        .as_array()
        .expect("stages listed")
        .iter()
        .filter_map(|s| s["stage"].as_str())
        .collect();
    assert_eq!(stages.last(), Some(&"dedup"), "{u}");
    assert!(
        stderr(&o)
            .lines()
            .any(|l| l.starts_with("dedup: ") && l.contains(" newcomers compared with the store")),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&format!(
            "{} files unchanged since they were read, passed by",
            round(0).len() - 1
        )),
        "{}",
        stderr(&o)
    );
    // The same bytes under a new time are read again (and found stored already).
    let f = std::fs::File::options().write(true).open(&first).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let u = w.update();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(1), Some(0)));
}

#[test]
fn a_grown_jsonl_file_is_read_from_where_the_last_read_ended() {
    let w = Work::new();
    write(
        &w.root,
        "topic.yaml",
        "name: grow\nsources:\n  - {kind: local, path: docs.jsonl}\nfilter: {min_words: 1}\n",
    );
    let line =
        |id: &str| format!("{{\"id\": \"{id}\", \"text\": \"text number {id} of the corpus\"}}\n");
    let mut jsonl = line("a") + "\n" + &line("b");
    write(&w.root, "docs.jsonl", &jsonl);
    w.build();
    assert_eq!(w.update()["read"].as_u64(), Some(0));
    // Appended lines: only they are read.
    let append = |text: &str| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(w.root.join("docs.jsonl"))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    append(&(line("c") + &line("d")));
    jsonl.push_str(&(line("c") + &line("d")));
    let u = w.update();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(2), Some(2)));
    assert_eq!(w.update()["read"].as_u64(), Some(0));
    // An appended line repeating an id read before is the duplicate a whole read finds, on
    // its line (6: the blank line counts); the file is read from the same place until fixed.
    append(&line("a"));
    for _ in 0..2 {
        let o = run(&w.root, &["--json", "update", "topic.yaml", "--out", "out"]);
        assert_eq!(
            o.status.code(),
            Some(3),
            "skips give exit 3: {}",
            stderr(&o)
        );
        let u: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            (u["read"].as_u64(), u["skipped"].as_u64()),
            (Some(0), Some(1))
        );
        assert!(
            stderr(&o).contains("docs.jsonl:6") && stderr(&o).contains("appears twice"),
            "{}",
            stderr(&o)
        );
    }
    // A line changed in place (same size): the whole file is read again.
    write(
        &w.root,
        "docs.jsonl",
        &jsonl.replace("number b", "number B"),
    );
    let u = w.update();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(4), Some(1)));
    // Larger, but not by appending (a line changed too): the CRC of the old length differs,
    // so the whole file is read.
    let grown = jsonl
        .replace("number b", "number B")
        .replace("number c", "number C")
        + &line("e");
    write(&w.root, "docs.jsonl", &grown);
    let u = w.update();
    assert_eq!((u["read"].as_u64(), u["new"].as_u64()), (Some(5), Some(2)));
    // Every document a whole read of the final file gives is in the collection.
    let ids: Vec<String> = manifest(&w.out())
        .iter()
        .map(|e| e["locator"].as_str().unwrap().to_string())
        .collect();
    for id in ["a", "b", "c", "d"] {
        assert!(ids.contains(&format!("jsonl:{id}")), "{ids:?}");
    }
}
