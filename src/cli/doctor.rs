//! `collect doctor`: prints the verdict on a collection's store and what can be recovered.

use crate::build::rebuild::{rebuild, RebuildSummary};
use crate::collection::doctor::{diagnose, Diagnosis};
use crate::error::bad_input;
use crate::topic::Topic;
use anyhow::Result;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `collect doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Collection directory.
    dir: PathBuf,
    /// Rebuild a damaged or missing store from manifest.jsonl and docs/ (the damaged file is
    /// kept aside as collection.sqlite.corrupt-<time>).
    #[arg(long, requires = "topic")]
    rebuild: bool,
    /// The topic file the collection was built from (its dedup settings sign the texts).
    #[arg(long)]
    topic: Option<PathBuf>,
}

fn by_status(m: &BTreeMap<String, u64>) -> String {
    let total: u64 = m.values().sum();
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{v} {k}")).collect();
    if parts.is_empty() {
        format!("{total}")
    } else {
        format!("{total} ({})", parts.join(", "))
    }
}

/// Runs `collect doctor`.
pub fn run(a: &DoctorArgs, json: bool) -> Result<()> {
    if a.rebuild {
        let Some(topic) = &a.topic else {
            return Err(bad_input("--rebuild needs --topic TOPIC.yaml"));
        };
        let topic = Topic::load(topic)?;
        let s = rebuild(&a.dir, &topic)?;
        if json {
            println!("{}", serde_json::to_string(&s)?);
        } else {
            print_rebuild(a, &s);
        }
        return Ok(());
    }
    let d = diagnose(&a.dir)?;
    if json {
        println!("{}", serde_json::to_string(&d)?);
    } else {
        print!("{}", render(&d));
    }
    if d.healthy() {
        Ok(())
    } else if !d.store.path.exists() {
        Err(bad_input(format!(
            "{}: the store file is missing; `collect doctor {} --rebuild --topic TOPIC.yaml` rebuilds it from manifest.jsonl and docs/",
            d.store.path.display(),
            a.dir.display()
        )))
    } else {
        Err(bad_input(format!(
            "{}: the store is corrupt; nothing was changed; `collect doctor {} --rebuild --topic TOPIC.yaml` rebuilds it (the damaged file is kept aside)",
            d.store.path.display(),
            a.dir.display()
        )))
    }
}

fn print_rebuild(a: &DoctorArgs, s: &RebuildSummary) {
    if !s.rebuilt {
        println!("{}: the store is healthy; nothing rebuilt", a.dir.display());
        return;
    }
    println!(
        "{}: store rebuilt: {} documents",
        a.dir.display(),
        by_status(&s.documents)
    );
    match &s.kept_aside {
        Some(p) => println!("  the damaged store is kept as {}", p.display()),
        None => println!("  there was no store to keep aside"),
    }
    println!(
        "  texts: {} from docs/, {} read out of the damaged store, {} lost (documents not kept, stored without text)",
        s.texts_from_docs, s.texts_from_store, s.texts_lost
    );
    println!(
        "  pairs found again: {}; review decisions carried over: {}",
        s.pairs, s.decisions_restored
    );
    if !s.kept_left_out.is_empty() {
        println!(
            "  {} kept texts were nowhere and are left out (`collect update` reads them again from the sources): {}",
            s.kept_left_out.len(),
            s.kept_left_out.join(", ")
        );
    }
}

/// The report of `collect doctor DIR`.
fn render(d: &Diagnosis) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    let h = &d.store;
    if h.healthy() {
        line(format!(
            "{}: healthy (integrity_check ok, schema whole, every row decodes): {} documents, {} pairs ({} decided), {} decisions logged, {} frontier URLs",
            h.path.display(),
            by_status(&h.documents),
            h.pairs,
            h.decided_pairs,
            h.decisions,
            h.urls
        ));
        if h.without_text > 0 {
            line(format!(
                "  {} documents not kept are held without their text (a rebuild found it nowhere); their status stands",
                h.without_text
            ));
        }
    } else {
        line(format!("{}: CORRUPT", h.path.display()));
        for p in &h.problems {
            line(format!("  - {p}"));
        }
    }
    if !d.manifest_present {
        line(format!(
            "{}: no manifest.jsonl; {} texts in docs/",
            d.dir.display(),
            d.docs_files
        ));
        return out;
    }
    line(format!(
        "manifest.jsonl: {} documents; it records each one's id, source, locator, url, title, language, words, status, duplicate_of and SHA-256",
        by_status(&d.manifest_rows)
    ));
    for b in d.manifest_bad_lines.iter().take(10) {
        line(format!("  - unreadable line: {b}"));
    }
    if h.healthy() {
        return out;
    }
    line("What `collect doctor DIR --rebuild --topic TOPIC.yaml` can recover:".into());
    line("  - every document of manifest.jsonl with its status and duplicate_of (so `collect update` treats them as seen and review drops stay dropped)".into());
    line(format!(
        "  - kept texts: {} intact in docs/ ({} files there), {} more readable in the damaged store, {} lost{}",
        d.kept_texts_in_docs,
        d.docs_files,
        d.kept_texts_in_store,
        d.kept_texts_lost.len(),
        if d.kept_texts_lost.is_empty() {
            String::new()
        } else {
            format!(
                " (left out; `collect update` reads them again from the sources: {})",
                d.kept_texts_lost.join(", ")
            )
        }
    ));
    line(format!(
        "  - texts of documents not kept (duplicate, short, filtered, dropped): docs/ holds only kept texts; {} readable in the damaged store, {} lost (stored without text)",
        d.other_texts_in_store, d.other_texts_lost
    ));
    line("  - signatures: recomputed from the texts with the topic's dedup settings; duplicate and contained pairs found again among the texts recovered".into());
    line(format!(
        "  - review decisions: manifest.jsonl records only which texts review dropped (status dropped); the decisions themselves (pair, note, time) are in the store: {} readable there, carried over where their pair is found again",
        d.decisions_in_store
    ));
    line("Not recoverable from the collection's files: the web frontier (`urls` table: pages fetched, failures, answered queries; the next `collect update` asks and fetches again), the run history, and, for rows the damaged store lost, bytes before cleaning and filter reasons not rederivable from manifest.jsonl.".into());
    out
}
