//! `collect new`, `collect check`, `collect completions`, `collect man` and the examples in
//! every subcommand's `--help`, through the real binary.

use crate::common::{run, run_ok, stderr, stdout};
use collect::acquire::CrawlConfig;
use collect::filter::FilterSettings;
use collect::relevance::RelevanceSettings;
use collect::sign::DedupSettings;
use serde_yaml::Value;

/// The top-level subcommands, as `collect --help` lists them (without `help`).
fn subcommands() -> Vec<String> {
    let o = run_ok(std::path::Path::new("."), &["--help"]);
    let text = stdout(&o);
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if inside {
            let Some(name) = line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            else {
                break;
            };
            if name != "help" && !line.starts_with("   ") {
                names.push(name.to_string());
            }
        }
    }
    assert!(names.len() > 10, "{text}");
    names
}

#[test]
fn new_writes_a_topic_that_check_accepts_with_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_ok(
        dir.path(),
        &[
            "new",
            "dogs",
            "--keyword",
            "овчарка",
            "--keyword",
            "german shepherd",
        ],
    );
    let path = dir.path().join("topics/dogs.yaml");
    assert!(path.is_file(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# "), "commented: {text}");

    let v: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(v["name"], "dogs");
    assert_eq!(
        v["keywords"],
        serde_yaml::to_value(["овчарка", "german shepherd"]).unwrap()
    );
    assert_eq!(v["languages"], serde_yaml::to_value(["ru", "en"]).unwrap());
    assert_eq!(v["strict"], false);
    // Every section is written out, with exactly the defaults.
    for (key, default) in [
        (
            "filter",
            serde_yaml::to_value(FilterSettings::default()).unwrap(),
        ),
        (
            "relevance",
            serde_yaml::to_value(RelevanceSettings::default()).unwrap(),
        ),
        (
            "dedup",
            serde_yaml::to_value(DedupSettings::default()).unwrap(),
        ),
        (
            "crawl",
            serde_yaml::to_value(CrawlConfig::default()).unwrap(),
        ),
    ] {
        assert_eq!(v[key], default, "section {key}");
    }
    let sources = v["sources"].as_sequence().unwrap();
    let apis: Vec<&str> = sources.iter().map(|s| s["api"].as_str().unwrap()).collect();
    assert_eq!(
        apis,
        [
            "https://ru.wikipedia.org/w/api.php",
            "https://en.wikipedia.org/w/api.php"
        ]
    );
    assert!(
        text.contains("# - {kind: local"),
        "local commented out: {text}"
    );

    // check: the plan, as build --dry-run prints it.
    let check = run_ok(dir.path(), &["check", "topics/dogs.yaml"]);
    let dry = run_ok(dir.path(), &["build", "topics/dogs.yaml", "--dry-run"]);
    assert_eq!(stdout(&check), stdout(&dry));
    assert!(
        stdout(&check).contains("mediawiki:ru.wikipedia.org\tовчарка\t"),
        "{}",
        stdout(&check)
    );
    assert!(
        stdout(&check).contains("requests planned"),
        "{}",
        stdout(&check)
    );
}

#[test]
fn new_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mine.yaml");
    std::fs::write(&out, "keep me").unwrap();
    let o = run(
        dir.path(),
        &[
            "new",
            "dogs",
            "--keyword",
            "x",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("mine.yaml"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    // The default place, a second time.
    run_ok(dir.path(), &["new", "cats"]);
    let o = run(dir.path(), &["new", "cats"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn check_on_a_broken_topic_exits_2_with_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "name: x\nsources:\n  - {kind: local, path: a, depht: 2}\n",
    )
    .unwrap();
    let o = run(dir.path(), &["check", "bad.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.yaml:3:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("depht"), "{}", stderr(&o));
}

#[test]
fn bash_completions_name_every_subcommand() {
    let o = run_ok(std::path::Path::new("."), &["completions", "bash"]);
    let s = stdout(&o);
    assert!(s.contains("complete -F"), "{s}");
    for name in subcommands() {
        assert!(s.contains(&name), "{name} missing from the completions");
    }
    for shell in ["zsh", "fish", "powershell"] {
        let o = run_ok(std::path::Path::new("."), &["completions", shell]);
        assert!(stdout(&o).contains("collect"), "{shell}");
    }
}

#[test]
fn man_page_starts_with_th_and_names_every_subcommand() {
    let o = run_ok(std::path::Path::new("."), &["man"]);
    let s = stdout(&o);
    assert!(s.starts_with(".TH"), "{}", &s[..s.len().min(200)]);
    for name in subcommands() {
        assert!(
            // roff escapes every hyphen: `spark-job` is `spark\-job`.
            s.contains(&format!("collect\\-{}", name.replace('-', "\\-"))),
            "{name} missing from collect.1"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    run_ok(dir.path(), &["man", "--out", "man1"]);
    for name in subcommands() {
        assert!(
            dir.path().join(format!("man1/collect-{name}.1")).is_file(),
            "{name}"
        );
    }
    assert!(dir.path().join("man1/collect.1").is_file());
}

#[test]
fn every_subcommand_help_shows_examples() {
    for name in subcommands() {
        let o = run_ok(std::path::Path::new("."), &[&name, "--help"]);
        assert!(stdout(&o).contains("Examples:"), "collect {name} --help");
        assert!(
            stdout(&o).contains(&format!("collect {name}")),
            "collect {name} --help"
        );
    }
}
