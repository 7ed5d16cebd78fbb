//! `collect build` and `collect update` (the real binary) through the `mediawiki` source against
//! a real MediaWiki loaded with the Wikipedia dumps of tests/fixtures/wikitext (.ci/mediawiki.sh).
//! Skipped unless COLLECT_MEDIAWIKI_URL and COLLECT_MEDIAWIKI_RU_URL point at the two api.php.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{env_url, manifest, run_ok, write};

fn kept(rows: &[Value]) -> BTreeSet<String> {
    rows.iter()
        .filter(|r| r["status"] == "kept")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn docs_dir(out: &Path) -> BTreeSet<String> {
    std::fs::read_dir(out.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The kept row of `source` titled `title`, and its text from docs/.
fn article(out: &Path, rows: &[Value], source: &str, title: &str) -> (Value, String) {
    let row = rows
        .iter()
        .find(|r| r["source"] == source && r["title"] == title)
        .unwrap_or_else(|| panic!("{source}: no {title:?} in manifest: {rows:#?}"))
        .clone();
    assert_eq!(row["status"], "kept", "{row}");
    let id = row["id"].as_str().unwrap();
    let text = std::fs::read_to_string(out.join("docs").join(format!("{id}.txt"))).unwrap();
    (row, text)
}

fn assert_no_markup(what: &str, text: &str) {
    for m in ["{{", "}}", "[[", "]]", "'''", "<ref", "</ref", "{|", "|}"] {
        if let Some(at) = text.find(m) {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(80)
                .map_or(0, |(i, _)| i);
            let ctx: String = text[from..].chars().take(200).collect();
            panic!("{what}: wiki markup {m:?} left in the text: …{ctx}…");
        }
    }
}

#[test]
fn build_and_update_from_real_wikis() {
    let (Some(en), Some(ru)) = (
        env_url("COLLECT_MEDIAWIKI_URL"),
        env_url("COLLECT_MEDIAWIKI_RU_URL"),
    ) else {
        eprintln!(
            "COLLECT_MEDIAWIKI_URL / COLLECT_MEDIAWIKI_RU_URL not set: skipping the build \
             against a real MediaWiki (run .ci/mediawiki.sh test)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // The en wiki gives wikitext (our cleaner), the ru one TextExtracts plain text, so both
    // payload kinds go through the binary. MediaWiki's SQL search looks at titles only unless
    // asked for text. Loopback is refused unless allow_private; the rate is raised because
    // php -S answers one request at a time anyway.
    let topic = format!(
        "name: wiki\n\
         languages: [en, ru]\n\
         keywords: [aardvark, algae, amphibian, Литва]\n\
         sources:\n\
         \x20 - {{kind: mediawiki, name: enwiki, api: \"{en}\", limit: 5, search_what: text}}\n\
         \x20 - {{kind: mediawiki, name: ruwiki, api: \"{ru}\", limit: 5, search_what: text, text: extracts}}\n\
         crawl: {{allow_private: true, per_host_rps: 20}}\n\
         filter: {{min_words: 50}}\n"
    );
    write(root, "topic.yaml", &topic);
    run_ok(root, &["build", "topic.yaml", "--out", "out", "--quiet"]);
    let out = root.join("out");
    let rows = manifest(&out);
    let kept_ids = kept(&rows);
    for src in ["enwiki", "ruwiki"] {
        assert!(
            rows.iter()
                .any(|r| r["source"] == src && r["status"] == "kept"),
            "no kept document from {src}: {rows:#?}"
        );
    }
    // Every kept document is an article of one of the two wikis, with its title.
    for r in rows.iter().filter(|r| r["status"] == "kept") {
        let url = r["url"].as_str().unwrap();
        let base = if r["source"] == "enwiki" { &en } else { &ru };
        let wiki = base.trim_end_matches("/w/api.php");
        assert!(url.starts_with(&format!("{wiki}/wiki/")), "{r}");
        assert!(r["title"].as_str().is_some_and(|t| !t.is_empty()), "{r}");
        assert!(r["words"].as_u64().unwrap() >= 50, "{r}");
    }
    assert_eq!(
        docs_dir(&out),
        kept_ids.iter().map(|id| format!("{id}.txt")).collect(),
        "docs/ holds exactly the kept texts"
    );

    let (row, text) = article(&out, &rows, "enwiki", "Aardvark");
    assert_eq!(
        row["url"],
        format!("{}/wiki/Aardvark", en.trim_end_matches("/w/api.php"))
    );
    assert_eq!(row["lang"], "en", "{row}");
    let lower = text.to_lowercase();
    assert!(
        lower.contains("aardvark") && text.contains("Africa"),
        "{}",
        &text[..text.len().min(500)]
    );
    assert!(
        row["words"].as_u64().unwrap() > 1000,
        "the whole article: {row}"
    );
    assert_no_markup("Aardvark", &text);

    let (row, text) = article(&out, &rows, "ruwiki", "Литва");
    assert!(
        row["url"]
            .as_str()
            .unwrap()
            .ends_with("/wiki/%D0%9B%D0%B8%D1%82%D0%B2%D0%B0"),
        "{row}"
    );
    assert_eq!(row["lang"], "ru", "{row}");
    assert!(text.contains("Литовская Республика"), "{}", &text[..300]);
    let letters: Vec<char> = text.chars().filter(|c| c.is_alphabetic()).collect();
    let cyr = letters
        .iter()
        .filter(|c| ('\u{0400}'..='\u{04FF}').contains(*c))
        .count();
    assert!(
        cyr * 10 >= letters.len() * 9,
        "mostly Cyrillic: {cyr} of {} letters",
        letters.len()
    );
    assert_no_markup("Литва", &text);

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let acq = report
        .split("## Acquisition")
        .nth(1)
        .unwrap_or_else(|| panic!("no Acquisition table: {report}"));
    for src in ["enwiki", "ruwiki"] {
        assert!(
            acq.lines().any(|l| l.starts_with(&format!("| {src} |"))),
            "no Acquisition row for {src}: {acq}"
        );
    }

    // The wikis have not changed: asking them again brings nothing new.
    let docs_before = docs_dir(&out);
    run_ok(root, &["update", "topic.yaml", "--out", "out", "--quiet"]);
    let after = manifest(&out);
    assert_eq!(after.len(), rows.len(), "update added documents");
    assert_eq!(kept(&after), kept_ids);
    assert_eq!(docs_dir(&out), docs_before);
}
