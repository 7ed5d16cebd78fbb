//! Local sources that are hostile or broken: symlink loops, a FIFO, a link to /dev/zero,
//! dangling links, unreadable and oversized files, malformed JSONL. The build must end, read
//! every good input once, record every bad one with its reason and exit 3; `--strict` (or the
//! topic's `strict: true`) stops at the first bad input with exit 2 and `file:line:col`.

use std::collections::BTreeSet;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// How long a run may take before it counts as hanging (a FIFO or a loop used to hang it).
const HANG: Duration = Duration::from_secs(60);

/// What a run left behind.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `collect ARGS` in `dir`, killed and failed after [`HANG`]. Output goes to files so that a
/// chatty run cannot block on a full pipe.
fn run_bounded(dir: &Path, args: &[&str]) -> Ran {
    let out_path = dir.join(".stdout");
    let err_path = dir.join(".stderr");
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("collect runs");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "collect {args:?} still running after {HANG:?}; killed. stderr: {}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ran {
        code: status.code(),
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

fn topic(dir: &Path, source: &str, extra: &str) -> PathBuf {
    write(
        dir,
        "topic.yaml",
        &format!(
            "name: local-inputs\nlanguages: [en]\nsources:\n  - {source}\nfilter: {{min_words: 1, language: false}}\n{extra}"
        ),
    )
}

/// (locator relative to `base`, reason) of every recorded skip, via `collect stats --skipped`.
fn skipped(dir: &Path, out: &Path, base: &Path) -> Vec<(String, String)> {
    let o = run_ok(
        dir,
        &["stats", out.to_str().unwrap(), "--skipped", "--json"],
    );
    json_lines(&stdout(&o))
        .iter()
        .map(|v| {
            let loc = v["locator"].as_str().unwrap();
            let rel = Path::new(loc)
                .strip_prefix(base)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| loc.to_string());
            (rel, v["reason"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The manifest's locators, sorted (the manifest is in id order).
fn locators(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = manifest(out)
        .iter()
        .map(|r| r["locator"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// A text of `n` distinct-enough words.
fn words(tag: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{tag}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_hostile_folder_builds_every_good_file_once_and_records_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("in");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    write(&src, "a.txt", &words("alpha", 40));
    write(&src, "sub/b.txt", &words("beta", 40));
    write(&src, "c.html", &format!("<p>{}</p>", words("gamma", 40)));
    // Past the default 64 MiB cap; sparse, so it costs no disk and is never read.
    std::fs::File::create(src.join("big.txt"))
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    symlink("..", src.join("sub/up")).unwrap();
    symlink(".", src.join("self")).unwrap();
    mkfifo(&src.join("pipe.txt"));
    symlink("/dev/zero", src.join("zero.txt")).unwrap();
    symlink("missing.txt", src.join("gone.txt")).unwrap();
    let locked = write(&src, "locked.txt", &words("delta", 40));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let t = topic(dir, "{kind: local, path: in}", "");
    let out = dir.join("out");
    let (t, o) = (t.to_str().unwrap(), out.to_str().unwrap());

    let ran = run_bounded(dir, &["build", t, "--out", o, "--quiet"]);
    assert_eq!(ran.code, Some(3), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains("--skipped"), "{}", ran.stderr);

    let root = running_as_root();
    let mut want = vec!["a.txt", "c.html", "sub/b.txt"];
    if root {
        // chmod 000 does not stop root from reading: the file is simply read.
        eprintln!("running as root: locked.txt is readable, its `unreadable` check is skipped");
        want.push("locked.txt");
        want.sort();
    }
    assert_eq!(locators(&out), want, "every good file once, nothing else");

    let mut want_skips: Vec<(&str, &str)> = vec![
        ("big.txt", "too-large"),
        ("gone.txt", "dangling-link"),
        ("pipe.txt", "not-regular-file"),
        ("self", "loop"),
        ("sub/up", "loop"),
        ("zero.txt", "link-outside-root"),
    ];
    if !root {
        want_skips.push(("locked.txt", "unreadable"));
    }
    let want_skips: BTreeSet<(String, String)> = want_skips
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    // Links into loops are recorded but lose nothing, so the count leaves them out.
    let lost = want_skips.iter().filter(|(_, why)| why != "loop").count();
    let n = format!("{lost} inputs were skipped");
    assert!(ran.stderr.contains(&n), "want {n} in: {}", ran.stderr);
    let got: Vec<(String, String)> = skipped(dir, &out, &src);
    assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), want_skips);
    assert_eq!(
        got.len(),
        want_skips.len(),
        "each skip recorded once: {got:?}"
    );

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Skipped inputs"), "{report}");
    assert!(report.contains("not-regular-file"), "{report}");

    // Growing the collection reads the folder again: the same skips, not twice as many.
    let ran = run_bounded(dir, &["update", t, "--out", o, "--quiet"]);
    assert_eq!(ran.code, Some(3), "stderr: {}", ran.stderr);
    assert_eq!(skipped(dir, &out, &src), got);
    assert_eq!(locators(&out), want);

    // Strict: the first bad entry ends the build as bad input.
    let ran = run_bounded(dir, &["build", t, "--out", o, "--force", "--strict"]);
    assert_eq!(ran.code, Some(2), "stderr: {}", ran.stderr);
    assert!(
        ran.stderr.contains(&src.display().to_string()),
        "{}",
        ran.stderr
    );

    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn follow_links_reads_outside_targets_but_never_a_device() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("in");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    write(&src, "a.txt", &words("alpha", 40));
    write(&elsewhere, "e.txt", &words("epsilon", 40));
    symlink(&elsewhere, src.join("ext")).unwrap();
    symlink("/dev/zero", src.join("zero.txt")).unwrap();
    // A loop out there too: the folder it is in, reached through the link.
    symlink(&elsewhere, elsewhere.join("again")).unwrap();
    let t = topic(dir, "{kind: local, path: in, follow_links: true}", "");
    let out = dir.join("out");
    let ran = run_bounded(
        dir,
        &[
            "build",
            t.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(ran.code, Some(3), "stderr: {}", ran.stderr);
    assert_eq!(locators(&out), ["a.txt", "ext/e.txt"]);
    assert_eq!(
        skipped(dir, &out, &src),
        [
            ("ext/again".to_string(), "loop".to_string()),
            ("zero.txt".to_string(), "not-regular-file".to_string())
        ]
    );
}

/// A JSONL with a byte order mark, and around good lines: malformed JSON, invalid UTF-8, a
/// missing `text`.
fn bad_jsonl(dir: &Path) -> PathBuf {
    let good =
        |id: &str, tag: &str| format!("{{\"id\": \"{id}\", \"text\": \"{}\"}}\n", words(tag, 30));
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(good("g1", "one").as_bytes());
    bytes.extend(b"{\"id\": \"b2\", \"text\": oops}\n");
    bytes.extend(good("g3", "three").as_bytes());
    bytes.extend(b"{\"id\": \"b4\", \"text\": \"caf\xE9 au lait\"}\n");
    bytes.extend(b"{\"id\": \"b5\", \"body\": \"no text here\"}\n");
    bytes.extend(good("g6", "six").as_bytes());
    let p = dir.join("in.jsonl");
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn jsonl_bad_lines_are_recorded_with_their_line_and_good_lines_all_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let jsonl = bad_jsonl(dir);
    let t = topic(dir, "{kind: local, path: in.jsonl}", "");
    let out = dir.join("out");
    let (t, o) = (t.to_str().unwrap(), out.to_str().unwrap());

    let ran = run_bounded(dir, &["build", t, "--out", o]);
    assert_eq!(ran.code, Some(3), "stderr: {}", ran.stderr);
    assert!(
        ran.stderr.contains("3 inputs were skipped"),
        "{}",
        ran.stderr
    );
    assert_eq!(locators(&out), ["jsonl:g1", "jsonl:g3", "jsonl:g6"]);
    let base = jsonl.parent().unwrap();
    assert_eq!(
        skipped(dir, &out, base),
        [
            ("in.jsonl:2".to_string(), "bad-json".to_string()),
            ("in.jsonl:4".to_string(), "bad-utf8".to_string()),
            ("in.jsonl:5".to_string(), "missing-field".to_string()),
        ]
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| local | 3 |"), "{report}");

    // --strict, and the topic's strict: true, stop at line 2 with file:line:col.
    let ran = run_bounded(dir, &["build", t, "--out", o, "--force", "--strict"]);
    assert_eq!(ran.code, Some(2), "stderr: {}", ran.stderr);
    let at = format!("{}:2:", jsonl.display());
    assert!(ran.stderr.contains(&at), "want {at} in: {}", ran.stderr);
    let strict_topic = topic(dir, "{kind: local, path: in.jsonl}", "strict: true\n");
    let ran = run_bounded(
        dir,
        &[
            "build",
            strict_topic.to_str().unwrap(),
            "--out",
            o,
            "--force",
        ],
    );
    assert_eq!(ran.code, Some(2), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains(&at), "want {at} in: {}", ran.stderr);
}

#[test]
fn invalid_utf8_in_jsonl_is_bad_input_when_strict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut bytes = format!("{{\"id\": 1, \"text\": \"{}\"}}\n", words("w", 30)).into_bytes();
    bytes.extend(b"{\"id\": 2, \"text\": \"\xFF\xFE\"}\n");
    std::fs::write(dir.join("in.jsonl"), bytes).unwrap();
    let t = topic(dir, "{kind: local, path: in.jsonl}", "");
    let out = dir.join("out");
    let ran = run_bounded(
        dir,
        &[
            "build",
            t.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--strict",
        ],
    );
    assert_eq!(ran.code, Some(2), "stderr: {}", ran.stderr);
    assert!(ran.stderr.contains("in.jsonl:2:"), "{}", ran.stderr);
    assert!(ran.stdout.is_empty());
}

#[test]
fn clean_skips_what_it_cannot_read_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("pages");
    std::fs::create_dir(&src).unwrap();
    write(
        &src,
        "a.html",
        "<article><p>Readable page text.</p></article>",
    );
    mkfifo(&src.join("pipe.html"));
    symlink(".", src.join("self")).unwrap();
    let ran = run_bounded(dir, &["clean", src.to_str().unwrap()]);
    assert_eq!(ran.code, Some(3), "stderr: {}", ran.stderr);
    assert!(ran.stdout.contains("Readable page text."), "{}", ran.stdout);
    assert!(ran.stderr.contains("pipe.html"), "{}", ran.stderr);
    assert!(ran.stderr.contains("not-regular-file"), "{}", ran.stderr);
    let ran = run_bounded(dir, &["clean", src.to_str().unwrap(), "--strict"]);
    assert_eq!(ran.code, Some(2), "stderr: {}", ran.stderr);
}
