//! `collect worker`: the per-document part of a build — clean, filter, relevance, sign — over
//! JSONL records on stdin, one JSON record per document on stdout. What a distributed run (an
//! executor of a Spark job, `RDD.pipe`) calls on each partition, so that the documents are
//! prepared by the very code `build` runs ([`Preparer`]), with the same ids, statuses and
//! signatures.
//!
//! A record is a line of the topic's JSONL local source, and becomes the document that source
//! would give: the same source name, rank and locator, so the same stable id. Duplicate JSONL
//! ids are checked within the input a worker gets (a partition), not across partitions.

use super::ingest::Preparer;
use crate::readers::local::{
    json_raw_doc, jsonl_records_in, parse_json_record, DEFAULT_MAX_FILE_BYTES,
};
use crate::readers::RawDoc;
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::{BufRead, Write};
use std::path::Path;

/// How the worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The topic source the records belong to (None: the topic's first local source).
    pub source: Option<String>,
    /// Put each document's cleaned text in its record.
    pub text: bool,
    /// Documents prepared at a time (in parallel).
    pub batch: usize,
}

/// One output record: a prepared document, or a line that was not one.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Out<'a> {
    Doc(Box<DocRecord<'a>>),
    Skipped {
        line: usize,
        skipped: &'a str,
        detail: &'a str,
    },
}

/// A prepared document as the worker writes it.
#[derive(Debug, Serialize)]
struct DocRecord<'a> {
    line: usize,
    id: &'a str,
    source: &'a str,
    source_rank: u32,
    locator: &'a str,
    url: Option<&'a str>,
    title: Option<&'a str>,
    status: &'a str,
    reason: Option<&'a str>,
    words: u64,
    lang: Option<&'a str>,
    relevance: Option<f64>,
    sha256: &'a str,
    raw_bytes: u64,
    /// The signature: fingerprints as signed 64-bit integers (their bit patterns, as the
    /// store keeps them), which JVM and SQL engines read as longs.
    sig: Vec<i64>,
    /// Whether `sig` is the text's full shingle index (the small-signature rule scores such
    /// pairs exactly).
    exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

/// One output record and its newline.
fn write_line(output: &mut dyn Write, rec: &Out<'_>) -> Result<()> {
    serde_json::to_writer(&mut *output, rec)?;
    output.write_all(b"\n")?;
    Ok(())
}

/// The name and rank of the source the records belong to.
fn source_of(topic: &Topic, wanted: Option<&str>) -> Result<(String, u32)> {
    let names = topic.source_names();
    let pick =
        topic
            .sources
            .iter()
            .zip(&names)
            .enumerate()
            .find(|(_, (spec, name))| match wanted {
                Some(w) => name.as_str() == w,
                None => matches!(spec, SourceSpec::Local(_)),
            });
    match pick {
        Some((rank, (_, name))) => Ok((name.clone(), rank as u32)),
        None => Err(crate::error::bad_input(match wanted {
            Some(w) => format!(
                "the topic has no source `{w}` (its sources: {})",
                names.join(", ")
            ),
            None => "the topic has no local source; name the source with --source".into(),
        })),
    }
}

/// Reads JSONL records from `input` and writes one line per document (or skipped line) to
/// `output`, in input order. Returns (documents, skipped lines).
pub fn run(
    topic: &Topic,
    opts: &WorkerOptions,
    input: impl BufRead,
    output: &mut dyn Write,
) -> Result<(usize, usize)> {
    let detector = crate::sign::build_detector(&topic.dedup).map_err(anyhow::Error::msg)?;
    if detector.needs_stats() {
        return Err(crate::error::bad_input(format!(
            "detector {} weighs words by the whole collection, so it cannot sign one document at a time; use a per-document detector (modm, minn, …) for a distributed run",
            topic.dedup.signature_key(detector.as_ref())
        )));
    }
    let stop = topic
        .dedup
        .canon_words(&topic.languages)
        .map_err(anyhow::Error::msg)?;
    let preparer = Preparer::of(topic, &stop, detector.as_ref());
    let (source, rank) = source_of(topic, opts.source.as_deref())?;
    let label = Path::new("stdin");
    let mut seen = std::collections::HashSet::new();
    let mut batch: Vec<(usize, RawDoc)> = Vec::new();
    let mut counts = (0usize, 0usize);
    let flush = |batch: &mut Vec<(usize, RawDoc)>, output: &mut dyn Write| -> Result<()> {
        let (lines, raw): (Vec<usize>, Vec<RawDoc>) = std::mem::take(batch).into_iter().unzip();
        for (line, (doc, sig)) in lines.into_iter().zip(preparer.prepare(raw)) {
            let exact = detector.is_exact(&sig);
            let rec = DocRecord {
                line,
                id: &doc.id,
                source: &doc.source,
                source_rank: doc.source_rank,
                locator: &doc.locator,
                url: doc.url.as_deref(),
                title: doc.title.as_deref(),
                status: doc.status.as_str(),
                reason: doc.reason.as_deref(),
                words: doc.words,
                lang: doc.lang.as_deref(),
                relevance: doc.relevance,
                sha256: &doc.sha256,
                raw_bytes: doc.raw_bytes,
                sig: sig.iter().map(|&f| f as i64).collect(),
                exact,
                text: opts.text.then_some(doc.text.as_str()),
            };
            write_line(output, &Out::Doc(Box::new(rec)))?;
        }
        Ok(())
    };
    jsonl_records_in(
        input,
        label,
        DEFAULT_MAX_FILE_BYTES,
        0,
        None,
        |line_no, line| {
            let parsed = line.and_then(|l| parse_json_record(label, line_no, l).map(|d| (d, l)));
            let (doc, line) = match parsed {
                Ok(d) => d,
                Err(skip) => {
                    // Records leave in input order: what is prepared before this line goes first.
                    flush(&mut batch, output)?;
                    counts.1 += 1;
                    let rec = Out::Skipped {
                        line: line_no,
                        skipped: skip.reason.as_str(),
                        detail: &skip.detail,
                    };
                    return write_line(output, &rec);
                }
            };
            let id = doc.id.clone().into_string();
            if !seen.insert(id.clone()) {
                flush(&mut batch, output)?;
                counts.1 += 1;
                let detail = format!("id `{id}` appears twice");
                let rec = Out::Skipped {
                    line: line_no,
                    skipped: crate::error::SkipReason::DuplicateId.as_str(),
                    detail: &detail,
                };
                return write_line(output, &rec);
            }
            counts.0 += 1;
            batch.push((line_no, json_raw_doc(&source, rank, &id, doc, line)));
            if batch.len() >= opts.batch {
                flush(&mut batch, output)?;
            }
            Ok(())
        },
    )
    .context("reading JSONL records on stdin")?;
    flush(&mut batch, output)?;
    output.flush()?;
    Ok(counts)
}

/// One component of the duplicate graph, as `collect keep` reads it (a JSON line).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Component {
    /// The component's name, echoed in every output record.
    #[serde(default)]
    component: serde_json::Value,
    candidates: Vec<KeepCandidate>,
    /// Duplicate pairs, as indexes into `candidates`.
    duplicates: Vec<(u32, u32)>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KeepCandidate {
    id: String,
    words: u64,
    source_rank: u32,
    /// `new` (default), `kept` (stored and kept by an earlier run) or `out`.
    #[serde(default)]
    standing: Option<String>,
}

/// `collect keep`: the keep rule ([`crate::dedup::choose_kept`]) over components of the
/// duplicate graph read as JSON lines, one output line per candidate
/// (`{component, id, duplicate_of}`), so a distributed run applies the very rule a build does.
/// Returns the number of components.
pub fn run_keep(input: impl BufRead, output: &mut dyn Write) -> Result<usize> {
    use crate::dedup::{choose_kept, Candidate, Standing};
    let mut n = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("stdin:{}: cannot read", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let c: Component = serde_json::from_str(&line)
            .map_err(|e| crate::error::bad_input(format!("stdin:{}: {e}", i + 1)))?;
        let mut candidates = Vec::with_capacity(c.candidates.len());
        for k in &c.candidates {
            let standing = match k.standing.as_deref() {
                None | Some("new") => Standing::New,
                Some("kept") => Standing::Kept,
                Some("out") => Standing::Out,
                Some(other) => {
                    return Err(crate::error::bad_input(format!(
                        "stdin:{}: standing `{other}` of {} is not new, kept or out",
                        i + 1,
                        k.id
                    )))
                }
            };
            candidates.push(Candidate {
                id: &k.id,
                words: k.words,
                source_rank: k.source_rank,
                standing,
            });
        }
        if let Some(&(a, b)) = c
            .duplicates
            .iter()
            .find(|&&(a, b)| a as usize >= candidates.len() || b as usize >= candidates.len())
        {
            return Err(crate::error::bad_input(format!(
                "stdin:{}: duplicate pair ({a}, {b}) names a candidate past the {} given",
                i + 1,
                candidates.len()
            )));
        }
        let chosen = choose_kept(&candidates, &c.duplicates);
        for (k, d) in c.candidates.iter().zip(chosen) {
            let rec = serde_json::json!({
                "component": c.component,
                "id": k.id,
                "duplicate_of": d.map(|j| c.candidates[j as usize].id.as_str()),
            });
            writeln!(output, "{rec}")?;
        }
        n += 1;
    }
    output.flush()?;
    Ok(n)
}
