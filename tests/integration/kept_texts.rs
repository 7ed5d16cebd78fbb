//! One copy of each text: a kept text lives only in `docs/`, the store holds the others, texts
//! move between the two as their documents leave or rejoin the collection, and a kept file
//! that was lost or edited is named instead of being taken for the text.

use collect::store::Store;
use std::path::Path;

use crate::common::*;

/// The store of the collection in `root/out`, for reading.
fn store(root: &Path) -> Store {
    store_in(&root.join("out"))
}

fn store_in(out: &Path) -> Store {
    Store::open_read_only(&out.join("collection.sqlite")).unwrap()
}

fn docs_file(root: &Path, id: &str) -> std::path::PathBuf {
    docs_file_in(&root.join("out"), id)
}

fn docs_file_in(out: &Path, id: &str) -> std::path::PathBuf {
    out.join("docs").join(format!("{id}.txt"))
}

/// Every document's text as the store gives it, against where it must lie.
fn assert_one_copy(root: &Path) {
    assert_one_copy_in(&root.join("out"))
}

fn assert_one_copy_in(out: &Path) {
    let s = store_in(out);
    assert!(
        s.kept_texts_held(None).unwrap().is_empty(),
        "the store holds no kept text"
    );
    let mut kept = 0;
    for e in manifest(out) {
        let id = e["id"].as_str().unwrap();
        let text = s
            .document_text(id)
            .unwrap()
            .expect("every document has its text");
        if e["status"] == "kept" {
            kept += 1;
            let file = std::fs::read_to_string(docs_file_in(out, id)).unwrap();
            assert_eq!(file, format!("{text}\n"), "{id}");
        } else {
            assert!(!docs_file_in(out, id).exists(), "{id} is not kept");
        }
    }
    assert!(kept > 0);
}

/// The manifest and every file of `docs/`, by name.
fn collection_files(out: &Path) -> (String, Vec<(String, String)>) {
    let mut docs: Vec<(String, String)> = std::fs::read_dir(out.join("docs"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    docs.sort();
    (
        std::fs::read_to_string(out.join("manifest.jsonl")).unwrap(),
        docs,
    )
}

/// Builds `topic.yaml` in `root` into `out` in batches of `batch` documents and kills the
/// build (SIGKILL) once the first batch is stored.
fn kill_build_after_first_batch(root: &Path, out: &str, batch: usize) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(BIN)
        .args(["--quiet", "build", "topic.yaml", "--out", out])
        .current_dir(root)
        .env("COLLECT_TEST_PAUSE_AFTER", "build-batch")
        .env("COLLECT_TEST_BATCH", batch.to_string())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let paused = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .any(|l| l.unwrap().contains("paused after build-batch"));
    assert!(paused, "the build never stored a batch");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_build_keeps_pending_texts_only_in_docs_and_a_killed_one_resumes_to_the_same_collection() {
    let (_tmp, root) = examples_collection("pending", "");
    kill_build_after_first_batch(&root, "killed", 4);

    // The committed batch: texts bound for dedup are in docs/ only, read back through the store.
    let killed = root.join("killed");
    let s = store_in(&killed);
    let mut in_docs_only: Vec<String> = s
        .unkept_texts_not_held(None)
        .unwrap()
        .into_iter()
        .map(|(_, id, _)| id)
        .collect();
    let mut pending: Vec<String> = s
        .document_metas()
        .unwrap()
        .into_iter()
        .filter(|d| d.status == collect::store::Status::Pending)
        .map(|d| d.id)
        .collect();
    assert!(!pending.is_empty(), "the first batch holds texts for dedup");
    in_docs_only.sort();
    pending.sort();
    assert_eq!(
        in_docs_only, pending,
        "no pending text is packed into the store"
    );
    // Asked of some documents, it answers for those only.
    let first = s.document_meta(&pending[0]).unwrap().unwrap();
    let among: Vec<String> = s
        .unkept_texts_not_held(Some(&[first.num, 1_000_000]))
        .unwrap()
        .into_iter()
        .map(|(_, id, _)| id)
        .collect();
    assert_eq!(among, vec![first.id]);
    for id in &pending {
        let text = s
            .document_text(id)
            .unwrap()
            .expect("a pending text is read");
        let file = std::fs::read_to_string(docs_file_in(&killed, id)).unwrap();
        assert_eq!(file, format!("{text}\n"), "{id}");
    }
    drop(s);

    run_ok(
        &root,
        &["--quiet", "build", "topic.yaml", "--out", "killed"],
    );
    assert_eq!(
        collection_files(&killed),
        collection_files(&root.join("out")),
        "the resumed build ends as the uninterrupted one"
    );
    assert_one_copy_in(&killed);
}

#[test]
fn kept_texts_live_once_in_docs_and_move_into_the_store_when_dropped_and_back() {
    let (_tmp, root) = examples_collection("once", "");
    assert_one_copy(&root);
    let first = json_lines(&stdout(&run_ok(
        &root,
        &["--json", "review", "list", "--pairs", "--collection", "out"],
    )))
    .remove(0);
    let contained = first["contained"].as_str().unwrap().to_string();
    let id = first["id"].as_i64().unwrap().to_string();
    let before = store(&root).document_text(&contained).unwrap().unwrap();
    run_ok(
        &root,
        &[
            "--quiet",
            "review",
            "decide",
            &id,
            "drop-contained",
            "--collection",
            "out",
        ],
    );
    assert!(
        !docs_file(&root, &contained).exists(),
        "a dropped text leaves docs/"
    );
    assert_eq!(
        store(&root).document_text(&contained).unwrap().unwrap(),
        before
    );
    assert_one_copy(&root);

    let entry = json_lines(&stdout(&run_ok(
        &root,
        &["--json", "review", "--collection", "out", "log"],
    )))
    .last()
    .unwrap()["id"]
        .as_i64()
        .unwrap()
        .to_string();
    run_ok(&root, &["review", "--collection", "out", "undo", &entry]);
    assert_eq!(
        std::fs::read_to_string(docs_file(&root, &contained)).unwrap(),
        format!("{before}\n")
    );
    assert_one_copy(&root);
}

#[test]
fn a_lost_or_edited_kept_file_is_named_by_the_commands_that_need_it() {
    let (_tmp, root) = examples_collection("lost", "");
    let kept: Vec<String> = manifest(&root.join("out"))
        .into_iter()
        .filter(|e| e["status"] == "kept")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let edited = docs_file(&root, &kept[0]);
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.insert_str(0, "A curator's note. ");
    std::fs::write(&edited, text).unwrap();
    let o = run(&root, &["export", "out", "--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}.txt: has changed", kept[0])),
        "{err}"
    );
    assert!(err.contains("collect doctor"), "{err}");

    let lost = docs_file(&root, &kept[1]);
    std::fs::remove_file(&lost).unwrap();
    let o = run(&root, &["doctor", "out"]);
    assert_ne!(o.status.code(), Some(0));
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        out.contains(&format!("{}.txt: is missing", kept[1])),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}.txt: has changed", kept[0])),
        "{out}"
    );
}

#[test]
fn a_text_left_in_both_homes_is_checked_and_released_by_the_next_sync() {
    // A kill between writing a kept file and dropping the store's copy leaves both, and maybe a
    // torn file; so does a store from before kept texts lived only in docs/. Such a sync wrote
    // through temporary names, so `docs/` no longer matches the last sync's stamp (and an old
    // store has no stamp): the next sync looks at every text the store holds, not only at the
    // documents changed since.
    let (_tmp, root) = examples_collection("both", "");
    let kept: Vec<(String, String)> = {
        let s = store(&root);
        manifest(&root.join("out"))
            .into_iter()
            .filter(|e| e["status"] == "kept")
            .map(|e| {
                let id = e["id"].as_str().unwrap().to_string();
                let text = s.document_text(&id).unwrap().unwrap();
                (id, text)
            })
            .collect()
    };
    {
        let s = Store::open(&root.join("out/collection.sqlite")).unwrap();
        let held: Vec<(i64, String)> = kept
            .iter()
            .map(|(id, text)| (s.document_meta(id).unwrap().unwrap().num, text.clone()))
            .collect();
        s.hold_texts(&held, Vec::new()).unwrap();
        assert_eq!(s.kept_texts_held(None).unwrap().len(), kept.len());
    }
    let torn = docs_file(&root, &kept[0].0);
    let half = torn.with_extension("half");
    std::fs::write(&half, &kept[0].1.as_bytes()[..kept[0].1.len() / 2]).unwrap();
    std::fs::rename(&half, &torn).unwrap();
    run_ok(&root, &["--quiet", "update", "topic.yaml", "--out", "out"]);
    assert_eq!(
        std::fs::read_to_string(&torn).unwrap(),
        format!("{}\n", kept[0].1),
        "the torn file is written again from the store's copy"
    );
    assert_one_copy(&root);
}

#[test]
fn a_sync_rewrites_only_the_changed_lines_and_gives_what_a_whole_sync_gives() {
    let (_tmp, root) = examples_collection("lines", "");
    let out = root.join("out");
    let manifest_file = out.join("manifest.jsonl");
    {
        let s = store(&root);
        assert!(
            s.manifest_stamp().unwrap().is_some(),
            "a build leaves a stamp"
        );
        assert!(s.manifest_changes().unwrap().is_empty());
    }
    // A line of a document no update touches is altered to the same length, the file's time
    // put back: the directory still matches the stamp, so the sync takes the line as it is.
    let before = std::fs::read_to_string(&manifest_file).unwrap();
    let time = std::fs::metadata(&manifest_file)
        .unwrap()
        .modified()
        .unwrap();
    let line = before
        .lines()
        .find(|l| l.contains("\"status\":\"short\""))
        .expect("the examples have a short text");
    let altered_line = line.replace("\"status\":\"short\"", "\"status\":\"SHORT\"");
    std::fs::write(&manifest_file, before.replace(line, &altered_line)).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&manifest_file)
        .unwrap()
        .set_modified(time)
        .unwrap();

    let words: Vec<String> = (0..150).map(|i| format!("lexeme{i}")).collect();
    write(
        &root.join("texts"),
        "aaa-new.txt",
        &format!("A text new to the sources. {}.", words.join(" ")),
    );
    run_ok(&root, &["--quiet", "update", "topic.yaml", "--out", "out"]);
    let pair = json_lines(&stdout(&run_ok(
        &root,
        &["--json", "review", "list", "--pairs", "--collection", "out"],
    )))
    .remove(0)["id"]
        .as_i64()
        .unwrap()
        .to_string();
    let decide = ["--quiet", "review", "decide", &pair, "drop-contained"];
    run_ok(&root, &[&decide[..], &["--collection", "out"]].concat());
    let (changed, docs) = collection_files(&out);
    assert!(
        changed.contains(&altered_line),
        "unchanged lines are copied"
    );
    let new = manifest(&out)
        .into_iter()
        .filter(|e| e["locator"].as_str().unwrap().ends_with("aaa-new.txt"))
        .count();
    assert_eq!(new, 1, "the new document's line is in");
    let ids: Vec<String> = manifest(&out)
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "in id order");
    {
        let s = store(&root);
        assert!(s.manifest_changes().unwrap().is_empty(), "all written out");
    }

    // Without the manifest the directory no longer matches: the next sync writes it whole.
    std::fs::remove_file(&manifest_file).unwrap();
    run_ok(&root, &["--quiet", "update", "topic.yaml", "--out", "out"]);
    let (whole, whole_docs) = collection_files(&out);
    assert_eq!(whole, changed.replace(&altered_line, line));
    assert_eq!(whole_docs, docs);
    assert_one_copy(&root);
}

#[test]
fn a_resumed_build_compares_the_texts_stored_before_the_kill_with_the_later_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let vocabulary: Vec<&str> = "the river runs past an old mill where farmers bring grain every \
        autumn and children watch boats drift slowly under a stone bridge while birds sing above \
        quiet fields of wheat near small houses with red roofs green gardens tall trees long roads \
        bright mornings cold evenings warm bread fresh milk good neighbours"
        .split(' ')
        .collect();
    let text = |seed: usize| -> String {
        (0..150)
            .map(|i| vocabulary[(i * i * 7 + i * seed * 31 + seed * 17) % vocabulary.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The first record is stored in the batch before the kill; its near-copy comes last.
    let mut records = vec![("first".to_string(), text(1))];
    for seed in 2..8 {
        records.push((format!("other{seed}"), text(seed)));
    }
    records.push(("copy".to_string(), text(1).replacen("river", "stream", 1)));
    let jsonl: String = records
        .iter()
        .map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string() + "\n")
        .collect();
    write(root, "docs.jsonl", &jsonl);
    write(
        root,
        "topic.yaml",
        "name: resumed\nsources:\n  - {kind: local, path: docs.jsonl}\nfilter: {min_words: 10}\n",
    );
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "whole"]);
    let duplicates = manifest(&root.join("whole"))
        .into_iter()
        .filter(|e| e["status"] == "duplicate")
        .count();
    assert_eq!(duplicates, 1, "the copy duplicates the first record");

    kill_build_after_first_batch(root, "killed", 2);
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "killed"]);
    assert_eq!(
        collection_files(&root.join("killed")),
        collection_files(&root.join("whole")),
        "the signatures stored before the kill are read back and compared"
    );
}
