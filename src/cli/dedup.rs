//! `collect dedup INPUT`: the standalone engine over a JSONL file or a directory of `.txt`.

use crate::canon::{CanonText, Canonicalizer, StopWords};
use crate::dedup::{self, EngineConfig, Pair};
use crate::error::bad_input;
use crate::readers::local::{for_each_jsonl_line, list_files, parse_json_line, read_text_file};
use crate::sign::{build_detector, Detector, DetectorParams, Full, Verdict};
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Options of `collect dedup`.
#[derive(Debug, Clone)]
pub struct DedupOptions {
    /// JSONL of `{"id","text"}` or a directory of `.txt` files.
    pub input: PathBuf,
    /// Detector parameters.
    pub params: DetectorParams,
    /// Thresholds and the small-signature floor.
    pub engine: EngineConfig,
    /// Print every pair sharing an element, not only duplicates and contained pairs.
    pub all_pairs: bool,
    /// Stop-word languages.
    pub stop_langs: Vec<String>,
}

/// Figures of one dedup run, for `--json`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DedupSummary {
    /// Documents read.
    pub documents: usize,
    /// Bytes of text read.
    pub bytes: u64,
    /// Signature elements over all documents.
    pub signature_elements: usize,
    /// Pairs sharing at least one element.
    pub candidate_pairs: usize,
    /// Pairs judged duplicate.
    pub duplicate_pairs: usize,
    /// Pairs judged contained.
    pub contained_pairs: usize,
    /// Pairs re-judged on the full shingle index because a signature was too small.
    pub verified_pairs: usize,
    /// Pairs left without a verdict.
    pub unsure_pairs: usize,
}

/// The result of the engine: ids, pairs and figures.
pub struct DedupResult {
    /// Document ids in input order.
    pub ids: Vec<String>,
    /// Judged pairs, by index into `ids`.
    pub pairs: Vec<Pair>,
    /// Figures.
    pub summary: DedupSummary,
}

/// Lines handed to the workers at once: large enough to keep both cores busy, small enough
/// that texts never pile up in memory (only signatures are kept).
const CHUNK_BYTES: usize = 8 << 20;

/// Reads the input, calling `f` on chunks of `(index, id, text)`.
fn read_chunks(
    input: &Path,
    mut f: impl FnMut(Vec<(usize, String, String)>) -> Result<()>,
) -> Result<()> {
    if input.is_dir() {
        let files = list_files(input, &[".txt"])?;
        let mut chunk = Vec::new();
        let mut bytes = 0;
        for (i, file) in files.iter().enumerate() {
            let (text, raw) = read_text_file(file, &mut |w| eprintln!("warning: {w}"))?;
            let id = file
                .strip_prefix(input)
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/");
            bytes += raw as usize;
            chunk.push((i, id, text));
            if bytes >= CHUNK_BYTES {
                f(std::mem::take(&mut chunk))?;
                bytes = 0;
            }
        }
        return f(chunk);
    }
    if !input.is_file() {
        return Err(bad_input(format!(
            "{}: no such file or directory",
            input.display()
        )));
    }
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut bytes = 0;
    let mut index = 0;
    let mut flush = |lines: Vec<(usize, String)>, index: &mut usize| -> Result<()> {
        let parsed: Vec<Result<(String, String)>> = lines
            .par_iter()
            .map(|(line_no, line)| {
                let d = parse_json_line(input, *line_no, line)?;
                Ok((d.id.into_string(), d.text.into_owned()))
            })
            .collect();
        let mut chunk = Vec::with_capacity(parsed.len());
        for p in parsed {
            let (id, text) = p?;
            chunk.push((*index, id, text));
            *index += 1;
        }
        f(chunk)
    };
    for_each_jsonl_line(input, |line_no, line| {
        bytes += line.len();
        lines.push((line_no, line.to_string()));
        if bytes >= CHUNK_BYTES {
            flush(std::mem::take(&mut lines), &mut index)?;
            bytes = 0;
        }
        Ok(())
    })?;
    flush(lines, &mut index)
}

/// First pass for detectors that weigh words by the collection: df, cf, N and lengths.
pub fn gather_stats(
    input: &Path,
    stop: &StopWords,
    detector: &dyn Detector,
) -> Result<crate::sign::CorpusStats> {
    let mut stats = crate::sign::CorpusStats::default();
    read_chunks(input, |chunk| {
        let part = chunk
            .par_iter()
            .fold(
                || {
                    (
                        crate::sign::CorpusStats::default(),
                        Canonicalizer::new(stop),
                        CanonText::default(),
                    )
                },
                |(mut st, mut c, mut buf), (_, _, text)| {
                    c.canonicalize_into(text, &mut buf);
                    st.add(&detector.terms(text, &buf));
                    (st, c, buf)
                },
            )
            .map(|(st, _, _)| st)
            .reduce(crate::sign::CorpusStats::default, |mut a, b| {
                a.merge(b);
                a
            });
        stats.merge(part);
        Ok(())
    })?;
    Ok(stats)
}

/// Signs every document of `chunk` in parallel.
fn sign_chunk(
    chunk: &[(usize, String, String)],
    stop: &StopWords,
    detector: &dyn Detector,
) -> Vec<Vec<u64>> {
    chunk
        .par_iter()
        .map_init(
            || (Canonicalizer::new(stop), CanonText::default()),
            |(c, buf), (_, _, text)| {
                c.canonicalize_into(text, buf);
                detector.sign_doc(text, buf)
            },
        )
        .collect()
}

/// Runs the engine over the input.
pub fn run(opts: &DedupOptions) -> Result<DedupResult> {
    let mut detector = build_detector(&opts.params).map_err(bad_input)?;
    let stop = StopWords::for_languages(&opts.stop_langs).map_err(bad_input)?;
    if detector.needs_stats() {
        let stats = gather_stats(&opts.input, &stop, detector.as_ref())?;
        detector.prepare(std::sync::Arc::new(stats));
    }
    let mut ids: Vec<String> = Vec::new();
    let mut sigs: Vec<Vec<u64>> = Vec::new();
    let mut summary = DedupSummary::default();
    let mut seen: FxHashSet<String> = FxHashSet::default();
    read_chunks(&opts.input, |chunk| {
        let chunk_sigs = sign_chunk(&chunk, &stop, detector.as_ref());
        for ((_, id, text), sig) in chunk.into_iter().zip(chunk_sigs) {
            if !seen.insert(id.clone()) {
                return Err(bad_input(format!(
                    "{}: id `{id}` appears twice",
                    opts.input.display()
                )));
            }
            summary.bytes += text.len() as u64;
            summary.signature_elements += sig.len();
            ids.push(id);
            sigs.push(sig);
        }
        Ok(())
    })?;
    summary.documents = ids.len();
    let shared = detector.candidate_pairs(&sigs);
    summary.candidate_pairs = shared.len();
    let mut pairs = dedup::judge_pairs(&sigs, &shared, detector.as_ref(), &opts.engine);
    drop(shared);
    let need = dedup::unsure_docs(&pairs);
    if !need.is_empty() {
        // Second pass over the input: full indexes only for the documents that need them.
        let want: FxHashSet<usize> = need.iter().map(|&i| i as usize).collect();
        let full = Full::new(detector.shingle());
        let mut index: FxHashMap<u32, Vec<u64>> = FxHashMap::default();
        read_chunks(&opts.input, |chunk| {
            let chunk: Vec<_> = chunk
                .into_iter()
                .filter(|(i, _, _)| want.contains(i))
                .collect();
            let full_sigs = sign_chunk(&chunk, &stop, &full);
            for ((i, _, _), sig) in chunk.iter().zip(full_sigs) {
                index.insert(*i as u32, sig);
            }
            Ok(())
        })?;
        dedup::verify_unsure(&mut pairs, &index, &full, &opts.engine);
    }
    for p in &pairs {
        match p.verdict {
            Verdict::Duplicate => summary.duplicate_pairs += 1,
            Verdict::Contained => summary.contained_pairs += 1,
            Verdict::Unsure => summary.unsure_pairs += 1,
            Verdict::Different => {}
        }
        summary.verified_pairs += p.verified as usize;
    }
    Ok(DedupResult {
        ids,
        pairs,
        summary,
    })
}

fn fmt_score(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else {
        format!("{x:.6}")
    }
}

/// Writes the TSV: header, then one row per pair oriented and sorted by id.
pub fn write_tsv(result: &DedupResult, all_pairs: bool, out: &mut dyn Write) -> Result<()> {
    let mut rows: Vec<(&str, &str, f64, f64, f64, Verdict)> = result
        .pairs
        .iter()
        .filter(|p| all_pairs || matches!(p.verdict, Verdict::Duplicate | Verdict::Contained))
        .map(|p| {
            let (a, b) = (&result.ids[p.a as usize], &result.ids[p.b as usize]);
            let s = &p.scores;
            if a <= b {
                (
                    a.as_str(),
                    b.as_str(),
                    s.resemblance,
                    s.cont_a_in_b,
                    s.cont_b_in_a,
                    p.verdict,
                )
            } else {
                (
                    b.as_str(),
                    a.as_str(),
                    s.resemblance,
                    s.cont_b_in_a,
                    s.cont_a_in_b,
                    p.verdict,
                )
            }
        })
        .collect();
    rows.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let mut w = std::io::BufWriter::new(out);
    writeln!(w, "a\tb\tresemblance\tcont_a_in_b\tcont_b_in_a\tverdict")?;
    for (a, b, r, ab, ba, v) in rows {
        writeln!(
            w,
            "{a}\t{b}\t{}\t{}\t{}\t{}",
            fmt_score(r),
            fmt_score(ab),
            fmt_score(ba),
            v.as_str()
        )?;
    }
    w.flush().context("cannot write output")?;
    Ok(())
}
