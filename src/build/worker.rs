//! `collect worker`: the per-document part of a build — clean, filter, relevance, sign — over
//! JSONL records on stdin, one JSON record per document on stdout. What a distributed run (an
//! executor of a Spark job, `RDD.pipe`) calls on each partition, so that the documents are
//! prepared by the very code `build` runs ([`Preparer`]), with the same ids, statuses and
//! signatures.
//!
//! A record is a line of the topic's JSONL local source, and becomes the document that source
//! would give: the same source name, rank and locator, so the same stable id. Duplicate JSONL
//! ids are checked within the input a worker gets (a partition), not across partitions.

use super::ingest::{document_ids, Preparer};
use crate::readers::local::{
    duplicate_id_skip, json_raw_doc, jsonl_records_in, parse_json_record, DEFAULT_MAX_FILE_BYTES,
};
use crate::readers::warc::{archive_raw_doc, Event};
use crate::readers::RawDoc;
use crate::sign::SigSize;
use crate::store::{Document, Status};
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
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
    /// The line number of the first input line in its file (a partition of a larger file
    /// starts further in), so that lines are named as a build names them.
    pub first_line: usize,
}

/// One output record: a prepared document, or a line that was not one.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Out<'a> {
    Doc(Box<DocRecord<'a>>),
    Skipped {
        line: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        column: Option<usize>,
        /// Where in an archive (its records have no lines), and the archive.
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<&'a str>,
        source: &'a str,
        skipped: &'a str,
        detail: &'a str,
    },
}

/// A prepared document as the worker writes it.
#[derive(Debug, Serialize)]
struct DocRecord<'a> {
    line: usize,
    /// The JSONL record's own id (what a reader checks for repeats).
    record: &'a str,
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
    date: Option<&'a str>,
    relevance_terms: Option<&'a str>,
    format: Option<&'a str>,
    /// Whether the dedup stage compares it (not filtered out).
    compared: bool,
    /// The signature: fingerprints as signed 64-bit integers (their bit patterns, as the
    /// store keeps them), which JVM and SQL engines read as longs.
    sig: Vec<i64>,
    /// Whether `sig` is the text's full shingle index (the small-signature rule scores such
    /// pairs exactly).
    exact: bool,
    /// What the pair judge reads of the signature (`None`: the detector reads whole
    /// signatures, so pairs cannot be judged from sizes).
    size: Option<SigSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

/// A worker's document record read back (by `collect assemble`).
#[derive(Debug, Deserialize)]
pub struct PreparedRecord {
    /// The record's line in its input file.
    pub line: usize,
    /// The document as a build stores it.
    #[serde(flatten)]
    pub doc: PreparedDoc,
    /// Its signature.
    pub sig: Vec<i64>,
}

/// The stored fields of a prepared document.
#[derive(Debug, Deserialize)]
pub struct PreparedDoc {
    id: String,
    source: String,
    source_rank: u32,
    locator: String,
    url: Option<String>,
    title: Option<String>,
    status: String,
    reason: Option<String>,
    words: u64,
    lang: Option<String>,
    relevance: Option<f64>,
    sha256: String,
    raw_bytes: u64,
    date: Option<String>,
    relevance_terms: Option<String>,
    format: Option<String>,
    text: Option<String>,
}

impl PreparedRecord {
    /// The document and signature a build would have stored.
    pub fn into_stored(self) -> Result<(Document, Vec<u64>)> {
        let d = self.doc;
        let status = Status::parse(&d.status).ok_or_else(|| {
            crate::error::bad_input(format!("line {}: unknown status `{}`", self.line, d.status))
        })?;
        let text = d.text.ok_or_else(|| {
            crate::error::bad_input(format!(
                "line {}: document {} has no text (the worker runs with --text)",
                self.line, d.id
            ))
        })?;
        Ok((
            Document {
                id: d.id,
                source: d.source,
                source_rank: d.source_rank,
                locator: d.locator,
                url: d.url,
                title: d.title,
                lang: d.lang,
                raw_bytes: d.raw_bytes,
                text,
                words: d.words,
                sha256: d.sha256,
                status,
                reason: d.reason,
                duplicate_of: None,
                date: d.date,
                relevance: d.relevance,
                relevance_terms: d.relevance_terms,
                format: d.format,
            },
            self.sig.into_iter().map(|f| f as u64).collect(),
        ))
    }
}

/// One output record and its newline.
fn write_line(output: &mut dyn Write, rec: &Out<'_>) -> Result<()> {
    serde_json::to_writer(&mut *output, rec)?;
    output.write_all(b"\n")?;
    Ok(())
}

/// The name and rank of the source the records belong to.
fn source_of(topic: &Topic, wanted: Option<&str>, archive: bool) -> Result<(String, u32)> {
    let names = topic.source_names();
    let pick =
        topic
            .sources
            .iter()
            .zip(&names)
            .enumerate()
            .find(|(_, (spec, name))| match wanted {
                Some(w) => name.as_str() == w,
                None if archive => matches!(spec, SourceSpec::Warc(_)),
                None => matches!(spec, SourceSpec::Local(_)),
            });
    match pick {
        Some((rank, (_, name))) => Ok((name.clone(), rank as u32)),
        None => Err(crate::error::bad_input(match wanted {
            Some(w) => format!(
                "the topic has no source `{w}` (its sources: {})",
                names.join(", ")
            ),
            None if archive => "the topic has no warc source; name the source with --source".into(),
            None => "the topic has no local source; name the source with --source".into(),
        })),
    }
}

/// The detector and canonical words of a topic's pair steps
/// ([`crate::dedup::distributed`]); refuses a detector whose pairs cannot be judged from
/// signature sizes.
pub fn pair_steps_of(
    topic: &Topic,
) -> Result<(Box<dyn crate::sign::Detector>, crate::canon::StopWords)> {
    let (detector, stop) = worker_context(topic)?;
    if detector.size_of(&[]).is_none() {
        return Err(crate::error::bad_input(format!(
            "detector {} reads whole signatures to judge a pair; a distributed run judges pairs from signature sizes, which modm (the default) and full allow",
            topic.dedup.signature_key(detector.as_ref())
        )));
    }
    Ok((detector, stop))
}

/// The detector and canonical words of a worker, refusing a detector that cannot sign a
/// document alone.
fn worker_context(
    topic: &Topic,
) -> Result<(Box<dyn crate::sign::Detector>, crate::canon::StopWords)> {
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
    Ok((detector, stop))
}

/// Prepares raw documents in batches and writes their records, and skipped inputs in their
/// place, in input order.
struct Emitter<'a> {
    preparer: Preparer<'a>,
    detector: &'a dyn crate::sign::Detector,
    opts: &'a WorkerOptions,
    source: String,
    /// (line, record key) and the raw document, waiting for the next batch.
    batch: Vec<((usize, String), RawDoc)>,
    /// Documents and skips written.
    counts: (usize, usize),
}

impl<'a> Emitter<'a> {
    fn new(
        topic: &'a Topic,
        detector: &'a dyn crate::sign::Detector,
        stop: &'a crate::canon::StopWords,
        opts: &'a WorkerOptions,
        source: &str,
    ) -> Self {
        Emitter {
            preparer: Preparer::of(topic, stop, detector),
            detector,
            opts,
            source: source.to_string(),
            batch: Vec::new(),
            counts: (0, 0),
        }
    }

    fn push(
        &mut self,
        line: usize,
        record: String,
        raw: RawDoc,
        output: &mut dyn Write,
    ) -> Result<()> {
        self.counts.0 += 1;
        self.batch.push(((line, record), raw));
        if self.batch.len() >= self.opts.batch {
            self.flush(output)?;
        }
        Ok(())
    }

    fn skip(&mut self, skip: &crate::error::Skip, output: &mut dyn Write) -> Result<()> {
        // Records leave in input order: what is prepared before this skip goes first.
        self.flush(output)?;
        self.counts.1 += 1;
        let path = skip.offset.map(|_| skip.path.to_string_lossy());
        let rec = Out::Skipped {
            line: skip.line.unwrap_or(0),
            column: skip.column,
            offset: skip.offset,
            path: path.as_deref(),
            source: &self.source,
            skipped: skip.reason.as_str(),
            detail: &skip.detail,
        };
        write_line(output, &rec)
    }

    fn flush(&mut self, output: &mut dyn Write) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        let ids = document_ids(
            batch
                .iter()
                .map(|(_, r): &(_, RawDoc)| (r.locator.as_str(), r.body.as_str())),
        );
        let (lines, raw): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .zip(ids)
            .map(|((line, r), id)| (line, (id, r)))
            .unzip();
        for ((line, record), (doc, sig)) in lines.into_iter().zip(self.preparer.prepare(raw)) {
            let rec = DocRecord {
                line,
                record: &record,
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
                date: doc.date.as_deref(),
                relevance_terms: doc.relevance_terms.as_deref(),
                format: doc.format.as_deref(),
                compared: !doc.status.is_filtered_out(),
                sig: sig.iter().map(|&f| f as i64).collect(),
                exact: self.detector.is_exact(&sig),
                size: self.detector.size_of(&sig),
                text: self.opts.text.then_some(doc.text.as_str()),
            };
            write_line(output, &Out::Doc(Box::new(rec)))?;
        }
        Ok(())
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
    let (detector, stop) = worker_context(topic)?;
    let (source, rank) = source_of(topic, opts.source.as_deref(), false)?;
    let mut e = Emitter::new(topic, detector.as_ref(), &stop, opts, &source);
    let label = Path::new("stdin");
    let mut seen = std::collections::HashSet::new();
    jsonl_records_in(
        input,
        label,
        DEFAULT_MAX_FILE_BYTES,
        opts.first_line.saturating_sub(1) as u64,
        |line_no, line| {
            let parsed = line.and_then(|l| parse_json_record(label, line_no, l).map(|d| (d, l)));
            let (doc, line) = match parsed {
                Ok(d) => d,
                Err(skip) => return e.skip(&skip, output),
            };
            let id = doc.id.clone().into_string();
            if !seen.insert(id.clone()) {
                return e.skip(&duplicate_id_skip(label, line_no, &id), output);
            }
            let raw = json_raw_doc(&source, rank, &id, doc, line);
            e.push(line_no, id, raw, output)
        },
    )
    .context("reading JSONL records on stdin")?;
    e.flush(output)?;
    output.flush()?;
    Ok(e.counts)
}

/// Reads one web archive (WARC or WET, plain or gzipped) from `input` and writes one line per
/// document (or skipped record) to `output`: the documents the topic's warc source gives for
/// the archive at `path`, whose locators start with `label` (as `collect build` labels it).
pub fn run_archive(
    topic: &Topic,
    opts: &WorkerOptions,
    path: &Path,
    label: &str,
    mut input: impl std::io::Read,
    output: &mut dyn Write,
) -> Result<(usize, usize)> {
    let (detector, stop) = worker_context(topic)?;
    let (source, rank) = source_of(topic, opts.source.as_deref(), true)?;
    let max_record_bytes = match topic.sources.get(rank as usize) {
        Some(SourceSpec::Warc(c)) => c.options().max_record_bytes,
        _ => {
            return Err(crate::error::bad_input(format!(
                "source `{source}` is not a warc source; --archive reads web archives"
            )))
        }
    };
    // The reader seeks back after a bad record, so the archive is held whole; a distributed
    // run hands over one archive file at a time, which it holds whole already.
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}: cannot read the archive on stdin", path.display()))?;
    let mut e = Emitter::new(topic, detector.as_ref(), &stop, opts, &source);
    crate::readers::warc::read_archive_from(
        std::io::Cursor::new(bytes),
        path,
        max_record_bytes,
        &mut |ev| match ev {
            Event::Doc(d) => {
                let raw = archive_raw_doc(d, &source, rank, label, &mut |_| Ok(()))?;
                let key = raw.locator.clone();
                e.push(0, key, raw, output)
            }
            Event::Skipped(s) => e.skip(&s, output),
            Event::Passed(_) => Ok(()),
        },
    )?;
    e.flush(output)?;
    output.flush()?;
    Ok(e.counts)
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
