//! `collect spark-job`: the build of a topic on Apache Spark (`local[2]`, PySpark and Java 17 as
//! `.ci/run` installs them) gives the collection `collect build` gives for the same input — the
//! same manifest, texts, report, pairs and review queue — on 10,000 real documents.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use crate::common::*;

/// The `spark-submit` to run: `COLLECT_SPARK_SUBMIT`, or the one on PATH.
fn spark_submit() -> Option<String> {
    let program = std::env::var("COLLECT_SPARK_SUBMIT").unwrap_or_else(|_| "spark-submit".into());
    let works = Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(program)
}

/// What two collections are compared on: every file a user reads, and the pair table.
fn views(root: &Path, out: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root.join(out);
    let mut v = Vec::new();
    for name in ["manifest.jsonl", "report.md"] {
        v.push((name.to_string(), std::fs::read(dir.join(name)).unwrap()));
    }
    let mut docs: Vec<_> = std::fs::read_dir(dir.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    docs.sort();
    for d in docs {
        v.push((
            format!("docs/{}", d.file_name().unwrap().to_string_lossy()),
            std::fs::read(&d).unwrap(),
        ));
    }
    let pairs = run_ok(root, &["export", out, "--format", "pairs", "--quiet"]);
    v.push(("pairs.tsv".into(), pairs.stdout));
    let queue = run_ok(root, &["review", "--collection", out, "list", "--pairs"]);
    v.push(("review list --pairs".into(), queue.stdout));
    let clusters = run_ok(root, &["review", "--collection", out, "list"]);
    v.push(("review list".into(), clusters.stdout));
    v
}

/// The `spark-submit` to run, or None when this machine has none (CI must).
fn spark_or_skip() -> Option<String> {
    let submit = spark_submit();
    if submit.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but spark-submit does not run: .ci/run must install pyspark and Java 17"
        );
        eprintln!("skipped: no spark-submit (pip install pyspark==3.5.3; apt-get install openjdk-17-jre-headless)");
    }
    submit
}

/// Runs `collect spark-job topic.yaml --out OUT` on `local[2]` with `partitions` and `extra`.
fn spark_job(
    root: &Path,
    submit: &str,
    out: &str,
    partitions: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "spark-job",
        "topic.yaml",
        "--out",
        out,
        "--master",
        "local[2]",
        "--partitions",
        partitions,
        "--spark-submit",
        submit,
    ];
    args.extend_from_slice(extra);
    run(root, &args)
}

/// The 10,000 documents of the fixture, as JSONL.
fn corpus() -> String {
    let mut jsonl = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(fixture("spark/corpus-heads-10k.jsonl.gz")).unwrap(),
    )
    .read_to_string(&mut jsonl)
    .unwrap();
    jsonl
}

/// Asserts that two collections give the same views, naming the first that differs.
fn assert_same(root: &Path, a: &str, b: &str) -> Vec<(String, Vec<u8>)> {
    let (x, y) = (views(root, a), views(root, b));
    assert_eq!(
        x.len(),
        y.len(),
        "the two docs/ folders hold different files"
    );
    for ((name, p), (other, q)) in x.iter().zip(&y) {
        assert_eq!(name, other, "the two docs/ folders hold different files");
        assert!(p == q, "{name} differs between {a} and {b}");
    }
    x
}

#[test]
fn a_spark_run_and_a_build_give_the_same_collection() {
    let Some(submit) = spark_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut jsonl = corpus();
    // Two bad lines at the end, in another partition than the first: a record that is not
    // JSON, and the first record's id again (a build skips both, naming their lines).
    let first_id = jsonl
        .lines()
        .next()
        .unwrap()
        .split('"')
        .nth(3)
        .unwrap()
        .to_string();
    jsonl.push_str("{not json\n");
    jsonl.push_str(&serde_json::json!({"id": first_id, "text": "another text under an id the file already has"}).to_string());
    jsonl.push('\n');
    write(root, "corpus.jsonl", &jsonl);
    write(
        root,
        "topic.yaml",
        "name: heads\nsources:\n  - {kind: local, path: corpus.jsonl, name: corpus}\nfilter: {min_words: 20}\nrelevance: off\n",
    );
    let built = run(root, &["--quiet", "build", "topic.yaml", "--out", "built"]);
    assert_eq!(built.status.code(), Some(3), "{}", stderr(&built));
    // A low --heavy-postings, so that fingerprints of templated stubs take the blocked path:
    // its pairs must count exactly as the others.
    let spark = spark_job(
        root,
        &submit,
        "spark",
        "4",
        &["--json", "--heavy-postings", "12"],
    );
    assert_eq!(spark.status.code(), Some(3), "{}", stderr(&spark));
    let summary: serde_json::Value = serde_json::from_str(stdout(&spark).trim()).unwrap();
    assert_eq!(summary["read"], 10_000, "{summary}");
    assert_eq!(summary["skipped"], 2, "{summary}");
    assert!(
        summary["job"]["candidate_pairs"].as_u64().unwrap() > 100_000,
        "{summary}"
    );
    assert!(
        summary["job"]["verified_pairs"].as_u64().unwrap() > 1_000,
        "{summary}"
    );

    let b = assert_same(root, "built", "spark");
    let manifest = manifest(&root.join("spark"));
    assert_eq!(manifest.len(), 10_000);
    let duplicates = manifest
        .iter()
        .filter(|m| m["status"] == "duplicate")
        .count();
    assert!(duplicates > 300, "{duplicates} duplicates");
    let pairs = &b.iter().find(|(n, _)| n == "pairs.tsv").unwrap().1;
    let contained = String::from_utf8_lossy(pairs)
        .matches("\tcontained\t")
        .count();
    assert!(contained > 300, "{contained} contained pairs");
    let report = String::from_utf8_lossy(&b[1].1).to_string();
    assert!(
        report.contains("duplicate-id") && report.contains("bad-json"),
        "{report}"
    );
}

#[test]
fn print_command_gives_the_submit_and_assembly_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "c.jsonl",
        "{\"id\": \"a\", \"text\": \"one two three\"}\n",
    );
    write(
        root,
        "t.yaml",
        "name: p\nsources:\n  - {kind: local, path: c.jsonl}\n",
    );
    let o = run_ok(
        root,
        &[
            "spark-job",
            "t.yaml",
            "--out",
            "coll",
            "--master",
            "yarn",
            "--input",
            "local=hdfs:///data/c.jsonl",
            "--print-command",
        ],
    );
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("spark-submit --master yarn --name collect-p --files "),
        "{text}"
    );
    assert!(
        lines[0].contains("collect_job.py") && lines[0].ends_with("job.json"),
        "{text}"
    );
    assert!(
        lines[1].contains("spark-job") && lines[1].ends_with("--assemble-only"),
        "{text}"
    );
    // The job is written, with the source's input as given, and nothing ran.
    let job: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("coll.spark/job.json")).unwrap())
            .unwrap();
    assert_eq!(job["sources"][0]["uri"], "hdfs:///data/c.jsonl");
    assert!(root.join("coll.spark/collect_job.py").exists());
    assert!(!root.join("coll").exists());
}

#[test]
fn sources_and_detectors_the_job_cannot_run_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "c.jsonl",
        "{\"id\": \"a\", \"text\": \"one two three\"}\n",
    );
    write(
        root,
        "web.yaml",
        "name: w\nkeywords: [dogs]\nsources:\n  - {kind: sites, urls: ['http://127.0.0.1:9/']}\n",
    );
    let o = run(root, &["spark-job", "web.yaml", "--print-command"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("reads JSONL and warc sources"),
        "{}",
        stderr(&o)
    );
    write(
        root,
        "minn.yaml",
        "name: m\nsources:\n  - {kind: local, path: c.jsonl}\ndedup: {method: minn}\n",
    );
    let o = run(root, &["spark-job", "minn.yaml", "--print-command"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("judges pairs from signature sizes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_spark_update_grows_the_collection_as_collect_update_does() {
    let Some(submit) = spark_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let all = corpus();
    let lines: Vec<&str> = all.lines().take(3000).collect();
    write(root, "corpus.jsonl", &(lines[..2000].join("\n") + "\n"));
    write(
        root,
        "topic.yaml",
        "name: grow\nsources:\n  - {kind: local, path: corpus.jsonl, name: corpus}\nfilter: {min_words: 20}\nrelevance: off\n",
    );
    let spark = |extra: &[&str]| {
        let mut args = vec!["--json", "--quiet"];
        args.extend_from_slice(extra);
        let o = spark_job(root, &submit, "spark", "2", &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()
    };
    // Without the signatures an earlier Spark run left, an update has nothing to compare with.
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "built"]);
    let o = run(
        root,
        &["spark-job", "topic.yaml", "--out", "built", "--update"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no signatures of the collection"),
        "{}",
        stderr(&o)
    );

    spark(&[]);
    assert_same(root, "built", "spark");
    // A complete collection is not made again unless asked; asked, the job's output gives the
    // same collection again (what an assembly interrupted half-way does on its rerun).
    let o = run(
        root,
        &[
            "spark-job",
            "topic.yaml",
            "--out",
            "spark",
            "--assemble-only",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already holds"), "{}", stderr(&o));
    run_ok(
        root,
        &[
            "--quiet",
            "spark-job",
            "topic.yaml",
            "--out",
            "spark",
            "--assemble-only",
            "--force",
        ],
    );
    assert_same(root, "built", "spark");
    // The file grows by a thousand documents, revisions of stored ones among them.
    write(root, "corpus.jsonl", &(lines.join("\n") + "\n"));
    run_ok(root, &["--quiet", "update", "built"]);
    let summary = spark(&["--update"]);
    assert_eq!(summary["job"]["mode"], "update", "{summary}");
    assert_eq!(summary["read"], 1000, "{summary}");
    assert!(
        summary["job"]["recorded_pairs"].as_u64().unwrap() > 100,
        "{summary}"
    );
    let views = assert_same(root, "built", "spark");
    assert_eq!(manifest(&root.join("spark")).len(), 3000);
    let pairs = String::from_utf8_lossy(&views.iter().find(|(n, _)| n == "pairs.tsv").unwrap().1)
        .to_string();
    assert!(pairs.matches("\tduplicate\t").count() > 20, "{pairs}");
}

#[test]
fn web_archives_go_through_spark_as_through_a_build() {
    let Some(submit) = spark_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // The archive fixtures, corrupt ones among them (a bad header, garbage between gzip
    // members, a truncated member, a wrong Content-Length), beside a JSONL source.
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.path().is_file() && e.file_name() != "SOURCE.md" {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    };
    copy(&fixture("warc"), &root.join("arch"));
    copy(&fixture("warc/corrupt"), &root.join("arch/corrupt"));
    let lines: String = corpus()
        .lines()
        .take(300)
        .map(|l| format!("{l}\n"))
        .collect();
    write(root, "corpus.jsonl", &lines);
    write(
        root,
        "topic.yaml",
        "name: arch\nsources:\n  - {kind: warc, path: arch}\n  - {kind: local, path: corpus.jsonl, name: corpus}\nfilter: {min_words: 0}\nrelevance: off\n",
    );
    let built = run(root, &["--quiet", "build", "topic.yaml", "--out", "built"]);
    assert_eq!(built.status.code(), Some(3), "{}", stderr(&built));
    let spark = spark_job(root, &submit, "spark", "2", &["--quiet"]);
    assert_eq!(spark.status.code(), Some(3), "{}", stderr(&spark));
    let views = assert_same(root, "built", "spark");
    let skipped = |out: &str| stdout(&run_ok(root, &["stats", out, "--skipped"]));
    assert_eq!(skipped("built"), skipped("spark"));
    assert_eq!(
        skipped("spark").matches("bad-record").count(),
        4,
        "{}",
        skipped("spark")
    );
    let manifest = String::from_utf8_lossy(&views[0].1).to_string();
    assert!(
        manifest.contains("arch/pages.warc.gz@"),
        "archive documents are in the manifest"
    );
}
