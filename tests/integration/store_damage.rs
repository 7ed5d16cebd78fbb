//! A damaged or missing store is never taken for an empty one: the real binary on a collection
//! built from examples/texts, its store emptied, overwritten in the middle or removed; then
//! `collect doctor` and `collect doctor --rebuild`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

struct Work {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    /// The pair decided with `drop-contained`.
    decided: i64,
}

impl Work {
    /// A collection built from examples/texts in `out/`, with one review decision taken.
    fn built() -> Work {
        let (tmp, root) = examples_collection("damage", "");
        let pending = json_lines(&stdout(&run_ok(
            &root,
            &["--json", "review", "list", "--pairs", "--collection", "out"],
        )));
        let id = pending[0]["id"]
            .as_i64()
            .expect("a contained pair to decide");
        run_ok(
            &root,
            &[
                "--quiet",
                "review",
                "decide",
                &id.to_string(),
                "drop-contained",
                "--collection",
                "out",
            ],
        );
        Work {
            _tmp: tmp,
            root,
            decided: id,
        }
    }
    fn out(&self) -> PathBuf {
        self.root.join("out")
    }
    fn store(&self) -> PathBuf {
        self.out().join("collection.sqlite")
    }
    fn run(&self, args: &[&str]) -> Output {
        run(&self.root, args)
    }
    fn stats(&self) -> Value {
        serde_json::from_slice(&run_ok(&self.root, &["--json", "stats", "out"]).stdout).unwrap()
    }
    fn export(&self) -> String {
        stdout(&run_ok(
            &self.root,
            &["--quiet", "export", "out", "--format", "jsonl"],
        ))
    }
    /// Empties the store file, as a full disk or a bad copy leaves it.
    fn truncate_store(&self) {
        std::fs::write(self.store(), b"").unwrap();
    }
    /// Overwrites the middle third of the store with random bytes, whole pages, so the damage
    /// lands in the tables every command reads however the pages happen to be laid out.
    fn scramble_middle(&self) {
        let mut bytes = std::fs::read(self.store()).unwrap();
        let page = 4096;
        let from = (bytes.len() / 3) / page * page;
        let to = (2 * bytes.len() / 3) / page * page;
        let mut rng = Rng(0x5eed_cafe);
        for b in &mut bytes[from.max(page)..to.max(2 * page)] {
            *b = rng.next() as u8;
        }
        std::fs::write(self.store(), bytes).unwrap();
    }
    /// Writes bytes that are not UTF-8 over the middle of a text's frame inside the store: the
    /// text the decided pair dropped (a kept text lives only in `docs/`).
    fn damage_a_stored_text(&self) {
        let held: Vec<String> = {
            let store = collect::store::Store::open_read_only(&self.store()).unwrap();
            manifest(&self.out())
                .into_iter()
                .filter(|r| r["status"] == "dropped")
                .filter_map(|r| store.document_text(r["id"].as_str().unwrap()).unwrap())
                .collect()
        };
        let mut bytes = std::fs::read(self.store()).unwrap();
        // A frame that fits in one page, so it lies in the file in one piece; every copy of it,
        // for a page the store freed may still hold an older one.
        let (frame, at) = held
            .into_iter()
            .find_map(|text| {
                let frame = collect::store::text::pack(&text);
                if !(200..3000).contains(&frame.len()) {
                    return None;
                }
                let at: Vec<usize> = bytes
                    .windows(frame.len())
                    .enumerate()
                    .filter(|(_, w)| *w == frame)
                    .map(|(i, _)| i)
                    .collect();
                (!at.is_empty()).then_some((frame, at))
            })
            .expect("a stored text's frame lies in the store in one piece");
        for at in at {
            let mid = at + frame.len() / 2 - 32;
            for (i, b) in bytes[mid..mid + 64].iter_mut().enumerate() {
                *b = [0xff, 0xfe, 0xc3, 0x28][i % 4];
            }
        }
        std::fs::write(self.store(), bytes).unwrap();
    }
}

/// Asserts exit code 2 and a message naming the store file and saying corrupt.
fn assert_corrupt(o: &Output, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {}\n{err}", o.status);
    assert!(err.contains("corrupt"), "{what}: {err}");
    assert!(err.contains("collection.sqlite"), "{what}: {err}");
    assert!(err.contains("collect doctor"), "{what}: {err}");
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

/// The text counts of `collect stats --json` (bytes are not all recoverable, see README).
fn text_counts(stats: &Value) -> Vec<(String, Value)> {
    [
        "texts_before",
        "texts_after",
        "short",
        "filtered",
        "duplicates",
        "dropped",
        "kept",
        "bytes_kept",
    ]
    .iter()
    .map(|k| (k.to_string(), stats["total"][k].clone()))
    .collect()
}

#[test]
fn emptied_store_is_corrupt_for_every_reader_and_stays_as_it_is() {
    let w = Work::built();
    w.truncate_store();
    for args in [
        &["stats", "out"][..],
        &["export", "out", "--format", "jsonl"],
        &["export", "out", "--format", "csv", "--out", "x.csv"],
        &["review", "list", "--collection", "out"],
        &["explain", "0000000000000000", "--collection", "out"],
    ] {
        let o = w.run(args);
        assert_corrupt(&o, &format!("{args:?}"));
        assert_eq!(read(&w.store()).len(), 0, "{args:?} wrote into the store");
    }
    assert!(!w.root.join("x.csv").exists());
}

#[test]
fn writers_refuse_an_emptied_store_instead_of_laying_a_new_one_over_it() {
    let w = Work::built();
    w.truncate_store();
    let o = w.run(&["update", "topic.yaml", "--out", "out"]);
    assert_corrupt(&o, "update");
    let o = w.run(&["review", "decide", "1", "keep-both", "--collection", "out"]);
    assert_corrupt(&o, "review decide");
    let o = w.run(&["build", "topic.yaml", "--out", "out"]);
    assert_corrupt(&o, "build");
    assert_eq!(read(&w.store()).len(), 0);
}

#[test]
fn random_bytes_in_the_middle_are_corrupt_and_nothing_is_changed() {
    let w = Work::built();
    let sound = stdout(&w.run(&["--json", "stats", "out"]));
    w.scramble_middle();
    let before = read(&w.store());
    // The middle of the file holds texts and postings: every command that reads them says the
    // store is corrupt. `stats` reads only the document rows, which the damage missed here; it
    // may answer, but only with what the sound store said.
    assert_corrupt(&w.run(&["export", "out", "--format", "jsonl"]), "export");
    assert_eq!(read(&w.store()), before, "export changed the store");
    let o = w.run(&["--json", "stats", "out"]);
    if o.status.success() {
        assert_eq!(stdout(&o), sound, "stats answered from the damaged store");
    } else {
        assert_corrupt(&o, "stats");
    }
    assert_eq!(read(&w.store()), before, "stats changed the store");
}

#[test]
fn a_damaged_text_is_corrupt_not_a_conversion_error() {
    let w = Work::built();
    w.damage_a_stored_text();
    let before = read(&w.store());
    let o = w.run(&[
        "review",
        "--collection",
        "out",
        "show",
        &w.decided.to_string(),
    ]);
    assert_corrupt(&o, "review show");
    assert_eq!(read(&w.store()), before);
}

#[test]
fn missing_store_is_no_collection_and_nothing_is_created() {
    let w = Work::built();
    std::fs::remove_file(w.store()).unwrap();
    for args in [
        &["stats", "out"][..],
        &["export", "out", "--format", "jsonl"],
        &["review", "list", "--collection", "out"],
        &["doctor", "out"],
    ] {
        let o = w.run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("no collection at out") || err.contains("store file is missing"),
            "{args:?}: {err}"
        );
        assert!(!w.store().exists(), "{args:?} created a store");
    }
}

#[test]
fn doctor_says_healthy_with_exit_0() {
    let w = Work::built();
    let before = read(&w.store());
    let o = run_ok(&w.root, &["doctor", "out"]);
    let out = stdout(&o);
    assert!(out.contains("healthy"), "{out}");
    assert!(out.contains("manifest.jsonl"), "{out}");
    assert_eq!(read(&w.store()), before, "doctor changed the store");
}

#[test]
fn doctor_on_a_damaged_store_says_what_can_be_recovered() {
    let w = Work::built();
    let kept = manifest(&w.out())
        .iter()
        .filter(|r| r["status"] == "kept")
        .count();
    w.truncate_store();
    let o = w.run(&["doctor", "out"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(
        err.contains("corrupt") && err.contains("--rebuild"),
        "{err}"
    );
    assert!(
        out.contains("CORRUPT") && out.contains("empty (0 bytes)"),
        "{out}"
    );
    assert!(
        out.contains(&format!("kept texts: {kept} intact in docs/")),
        "{out}"
    );
    assert!(out.contains("docs/ holds only kept texts"), "{out}");
    assert!(out.contains("Not recoverable"), "{out}");
    assert_eq!(read(&w.store()).len(), 0);

    let w = Work::built();
    w.scramble_middle();
    let o = w.run(&["doctor", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).contains("CORRUPT"), "{}", stdout(&o));
}

/// Damages the store one way, rebuilds it, and checks the collection reads as before.
fn rebuild_after(damage: fn(&Work)) {
    let w = Work::built();
    let (stats, export) = (w.stats(), w.export());
    damage(&w);
    let damaged = read(&w.store());
    let o = run_ok(
        &w.root,
        &["doctor", "out", "--rebuild", "--topic", "topic.yaml"],
    );
    assert!(stdout(&o).contains("store rebuilt"), "{}", stdout(&o));
    let aside: Vec<PathBuf> = std::fs::read_dir(w.out())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("collection.sqlite.corrupt-"))
        .filter(|p| {
            !p.to_string_lossy().ends_with("-wal") && !p.to_string_lossy().ends_with("-shm")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        read(&aside[0]),
        damaged,
        "the damaged store is kept as it was"
    );
    assert_eq!(text_counts(&w.stats()), text_counts(&stats));
    assert_eq!(w.stats()["total"]["dropped"], 1);
    assert_eq!(w.export(), export);
    run_ok(&w.root, &["doctor", "out"]);
    // The rebuilt collection grows like any other: a new text is read and settled.
    write(
        &w.root.join("texts"),
        "zz-new.txt",
        &"A new text about something else entirely, written for this test alone. ".repeat(30),
    );
    let o = run_ok(
        &w.root,
        &["--quiet", "--json", "update", "topic.yaml", "--out", "out"],
    );
    let u: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(u["new"], 1, "{u}");
    assert_eq!(u["kept"], 1, "{u}");
}

#[test]
fn doctor_rebuild_after_truncation_restores_counts_and_texts() {
    rebuild_after(Work::truncate_store);
}

#[test]
fn doctor_rebuild_after_random_bytes_restores_counts_and_texts() {
    rebuild_after(Work::scramble_middle);
}
