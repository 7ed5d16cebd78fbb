//! `collect demo`: the whole pipeline against the loopback web, run as a newcomer runs it.

use crate::common::*;

#[test]
fn demo_builds_a_deduplicated_collection_with_a_per_source_report() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let r = run(tmp.path(), &["demo", "--out", out.to_str().unwrap()]);
    let err = stderr(&r);
    assert!(r.status.success(), "{err}");
    assert!(
        err.contains("report.md"),
        "the summary points to the report: {err}"
    );

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for source in [
        "wiki-en",
        "wiki-ru",
        "searxng",
        "brave",
        "yandex",
        "duckduckgo",
        "sites",
    ] {
        assert!(
            report
                .lines()
                .filter(|l| l.starts_with(&format!("| {source} |")))
                .count()
                == 2,
            "{source} has a Table 1 row and an Acquisition row:\n{report}"
        );
    }
    // The loopback site's faults are counted per source: the oversized page is skipped.
    let sites_row = report
        .lines()
        .filter(|l| l.starts_with("| sites |"))
        .nth(1)
        .unwrap();
    assert!(sites_row.contains("too-large"), "{sites_row}");

    let rows = manifest(&out);
    // The mirror of «Литва» on the open site is a duplicate of the Russian wiki's article.
    let mirror = rows
        .iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/x")))
        .expect("the mirror page was fetched");
    assert_eq!(mirror["status"], "duplicate");
    let kept = rows
        .iter()
        .find(|r| r["id"] == mirror["duplicate_of"])
        .unwrap();
    assert_eq!(kept["source"], "wiki-ru");
    assert_eq!(kept["status"], "kept");
    let text =
        std::fs::read_to_string(out.join(format!("docs/{}.txt", kept["id"].as_str().unwrap())))
            .unwrap();
    assert!(text.contains("Литва") && text.contains("Вильнюс"), "{text}");
    // The zoo note quoting "Aardvark" stays, and its pair waits for a curator.
    let note = rows
        .iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/y")))
        .unwrap();
    assert_eq!(note["status"], "kept");
    let queue = run(
        tmp.path(),
        &[
            "review",
            "list",
            "--json",
            "--collection",
            out.to_str().unwrap(),
        ],
    );
    assert!(queue.status.success());
    let queue = stdout(&queue);
    assert!(queue.contains(note["id"].as_str().unwrap()), "{queue}");
}
