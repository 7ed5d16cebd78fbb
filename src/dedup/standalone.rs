//! The standalone engine behind `collect dedup INPUT`: a JSONL file or a directory of `.txt`,
//! read in chunks so that only signatures stay in memory, and read a second time for the few
//! documents whose full shingle index the small-signature rule needs.

use super::{Engine, Pair, Wanted};
use crate::canon::{CanonText, Canonicalizer, StopWords};
use crate::error::{bad_input, Skip};
use crate::readers::local::{
    for_each_jsonl_block, list_files, open_regular, parse_json_line, read_text_file, JsonlBlock,
    LinePlace,
};
use crate::sign::{build_detector, DedupSettings, Detector, ShingleSeq, Verdict};
use anyhow::Result;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Options of `collect dedup`.
#[derive(Debug, Clone)]
pub struct DedupOptions {
    /// JSONL of `{"id","text"}` or a directory of `.txt` files.
    pub input: PathBuf,
    /// Detector, parameters and thresholds.
    pub settings: DedupSettings,
    /// Stop-word languages.
    pub stop_langs: Vec<String>,
    /// Keep every pair sharing an element, `different` ones too (else only the flagged).
    pub all_pairs: bool,
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
    /// Pairs contained by their scores that share too few shingles to be reviewed.
    pub weak_pairs: usize,
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

/// Where the lines of a JSONL input are, from one read of it to the next.
enum Places<'a> {
    /// Not kept.
    Unrecorded,
    /// Recorded by this read: a place per document, by index.
    Record(&'a mut Vec<LinePlace>),
    /// Recorded by an earlier read of the file: the lines wanted are read alone, the others
    /// not at all (the second pass of the 80k dev corpus wants 23,000 lines of 80,000).
    Known(&'a [LinePlace]),
}

/// Reads the input, calling `f` on chunks of what `map` makes of each document whose index
/// `keep` accepts (the others are neither read, for files, nor parsed, for JSONL lines). `map`
/// is given the document's index, id and text, and a state of the worker's own from `init`,
/// and runs in the same task that parsed the line: a text is parsed, used and dropped on one
/// core, with no wait between parsing a chunk and using it (both cores sat idle a seventh of
/// the time signing the 80k corpus when the two were separate steps). `places` applies to
/// JSONL input.
fn read_mapped<S, T: Send>(
    input: &Path,
    keep: &(dyn Fn(usize) -> bool + Sync),
    places: Places<'_>,
    init: &(dyn Fn() -> S + Sync),
    map: &(dyn Fn(&mut S, usize, String, &str) -> T + Sync),
    mut f: impl FnMut(Vec<T>) -> Result<()>,
) -> Result<()> {
    if input.is_dir() {
        let files = list_files(input, &[".txt"], &mut |w| eprintln!("warning: {w}"))?;
        let mut chunk = Vec::new();
        let mut bytes = 0;
        let mut flush = |chunk: Vec<(usize, String, String)>| {
            f(chunk
                .into_par_iter()
                .map_init(init, |s, (index, id, text)| map(s, index, id, &text))
                .collect())
        };
        for (i, file) in files.iter().enumerate().filter(|(i, _)| keep(*i)) {
            let (text, raw) = read_text_file(file, &mut |w| eprintln!("warning: {w}"))?;
            let id = file
                .strip_prefix(input)
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/");
            bytes += raw as usize;
            chunk.push((i, id, text));
            if bytes >= CHUNK_BYTES {
                flush(std::mem::take(&mut chunk))?;
                bytes = 0;
            }
        }
        return flush(chunk);
    }
    if !input.is_file() {
        return Err(bad_input(format!(
            "{}: no such file or directory",
            input.display()
        )));
    }
    // A block of lines, and of its lines those kept, each with its document's index.
    type Batch = (JsonlBlock, Vec<(usize, usize)>);
    let flush = |(block, kept): Batch| -> Result<()> {
        let mapped: Vec<Result<T>> = kept
            .par_iter()
            .map_init(init, |s, &(index, k)| {
                let d = parse_json_line(input, block.place(k).line_no, block.text(input, k)?)?;
                Ok(map(s, index, d.id.into_string(), &d.text))
            })
            .collect();
        f(mapped.into_iter().collect::<Result<_>>()?)
    };
    // The file is read on a thread of its own, a block ahead of the workers that parse and
    // sign the block before it.
    std::thread::scope(|scope| {
        let (blocks, received) = std::sync::mpsc::sync_channel(1);
        // A closed channel means the workers stopped on an error of their own, which is the
        // one reported.
        let stopped = |_| anyhow::anyhow!("stopped");
        let reader = scope.spawn(move || -> Result<()> {
            match places {
                Places::Known(known) => {
                    let (mut file, _) = open_regular(input).map_err(Skip::into_error)?;
                    let mut batch: Batch = Default::default();
                    for (index, &place) in known.iter().enumerate().filter(|(i, _)| keep(*i)) {
                        if batch.0.len_bytes() + place.len > CHUNK_BYTES && !batch.1.is_empty() {
                            blocks.send(std::mem::take(&mut batch)).map_err(stopped)?;
                        }
                        if batch.1.is_empty() {
                            batch.0 = JsonlBlock::with_capacity(CHUNK_BYTES.max(place.len));
                        }
                        batch.1.push((index, batch.1.len()));
                        batch.0.read_line_at(&mut file, input, place)?;
                    }
                    blocks.send(batch).map_err(stopped)
                }
                other => {
                    // Places not asked for are recorded all the same (a few bytes a line).
                    let mut unasked = Vec::new();
                    let recorded = match other {
                        Places::Record(recorded) => recorded,
                        _ => &mut unasked,
                    };
                    recorded.clear();
                    // A document's index is its line's rank among the lines read, known
                    // before parsing.
                    for_each_jsonl_block(input, CHUNK_BYTES, |block| {
                        let mut kept = Vec::new();
                        for (k, place) in block.places().enumerate() {
                            if keep(recorded.len()) {
                                kept.push((recorded.len(), k));
                            }
                            recorded.push(place);
                        }
                        blocks.send((block, kept)).map_err(stopped)
                    })
                }
            }
        });
        let worked = received.into_iter().try_for_each(flush);
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("{}: the reader failed", input.display())));
        worked.and(read)
    })
}

/// First pass for detectors that weigh words by the collection: df, cf, N and lengths.
pub fn gather_stats(
    input: &Path,
    stop: &StopWords,
    detector: &dyn Detector,
) -> Result<crate::sign::CorpusStats> {
    let mut stats = crate::sign::CorpusStats::default();
    read_mapped(
        input,
        &|_| true,
        Places::Unrecorded,
        &|| (Canonicalizer::new(stop), CanonText::default()),
        &|(c, buf), _, _, text| {
            c.canonicalize_into(text, buf);
            detector.terms(text, buf)
        },
        |chunk| {
            let part = chunk
                .par_iter()
                .fold(crate::sign::CorpusStats::default, |mut st, terms| {
                    st.add(terms);
                    st
                })
                .reduce(crate::sign::CorpusStats::default, |mut a, b| {
                    a.merge(b);
                    a
                });
            stats.merge(part);
            Ok(())
        },
    )?;
    Ok(stats)
}

/// Runs the engine over the input.
pub fn run(opts: &DedupOptions) -> Result<DedupResult> {
    let mut detector = build_detector(&opts.settings).map_err(bad_input)?;
    let stop = opts
        .settings
        .canon_words(&opts.stop_langs)
        .map_err(bad_input)?;
    if detector.needs_stats() {
        let stats = gather_stats(&opts.input, &stop, detector.as_ref())?;
        detector.prepare(std::sync::Arc::new(stats));
    }
    let mut ids: Vec<String> = Vec::new();
    let mut sigs: Vec<Vec<u64>> = Vec::new();
    let mut summary = DedupSummary::default();
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut places = Vec::new();
    read_mapped(
        &opts.input,
        &|_| true,
        Places::Record(&mut places),
        &|| (Canonicalizer::new(&stop), CanonText::default()),
        &|(c, buf), _, id, text| {
            c.canonicalize_into(text, buf);
            (id, text.len(), detector.sign_doc(text, buf))
        },
        |chunk| {
            for (id, bytes, sig) in chunk {
                if !seen.insert(id.clone()) {
                    return Err(bad_input(format!(
                        "{}: id `{id}` appears twice",
                        opts.input.display()
                    )));
                }
                summary.bytes += bytes as u64;
                summary.signature_elements += sig.len();
                ids.push(id);
                sigs.push(sig);
            }
            Ok(())
        },
    )?;
    summary.documents = ids.len();
    let detector = detector.as_ref();
    let engine = Engine {
        detector,
        thresholds: &opts.settings.thresholds(),
        grey: &opts.settings.grey_zone(),
        wanted: if opts.all_pairs {
            Wanted::All
        } else {
            Wanted::Flagged
        },
    };
    let found = engine.find(
        &sigs,
        sigs.len(),
        // A second pass over the input: texts only for the documents that need them, each
        // chunk handed on as it is read.
        &mut |need, shingle, sink| {
            let wanted = |i: usize| need.binary_search(&(i as u32)).is_ok();
            read_mapped(
                &opts.input,
                &wanted,
                Places::Known(&places),
                &|| (Canonicalizer::new(&stop), CanonText::default()),
                &|(c, buf), i, _, text| {
                    c.canonicalize_into(text, buf);
                    (i as u32, ShingleSeq::new(buf, shingle))
                },
                &mut *sink,
            )
        },
    )?;
    summary.candidate_pairs = found.candidates;
    summary.verified_pairs = found.verified;
    let pairs = found.pairs;
    for p in &pairs {
        match p.verdict {
            Verdict::Duplicate => summary.duplicate_pairs += 1,
            Verdict::Contained => summary.contained_pairs += 1,
            Verdict::Unsure => summary.unsure_pairs += 1,
            Verdict::Weak => summary.weak_pairs += 1,
            Verdict::Different => {}
        }
    }
    Ok(DedupResult {
        ids,
        pairs,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(index, id)` of every document `read_mapped` hands over with `keep`.
    fn read_kept(input: &Path, keep: &(dyn Fn(usize) -> bool + Sync)) -> Vec<(usize, String)> {
        let mut got = Vec::new();
        read_mapped(
            input,
            keep,
            Places::Unrecorded,
            &|| (),
            &|_, i, id, _| (i, id),
            |chunk| {
                got.extend(chunk);
                Ok(())
            },
        )
        .unwrap();
        got
    }

    #[test]
    fn second_pass_reads_only_the_documents_asked_for_under_their_first_pass_index() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("in.jsonl");
        // The middle line is not valid JSON: left unparsed, it cannot fail the second pass.
        std::fs::write(
            &jsonl,
            "{\"id\":\"a\",\"text\":\"x\"}\n{broken\n{\"id\":\"c\",\"text\":\"y\"}\n",
        )
        .unwrap();
        assert_eq!(
            read_kept(&jsonl, &|i| i != 1),
            vec![(0, "a".into()), (2, "c".into())]
        );
        let txt = dir.path().join("txt");
        std::fs::create_dir(&txt).unwrap();
        for name in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(txt.join(name), "words").unwrap();
        }
        assert_eq!(read_kept(&txt, &|i| i == 2), vec![(2, "c.txt".into())]);
    }

    #[test]
    fn a_second_read_at_the_recorded_places_gives_the_lines_the_first_read_gave() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("in.jsonl");
        // A byte order mark, a CRLF ending, blank lines and a text beyond ASCII: each moves the
        // places of the lines after it.
        std::fs::write(
            &jsonl,
            "\u{FEFF}{\"id\":\"a\",\"text\":\"x\"}\r\n\n  \n{\"id\":\"b\",\"text\":\"ёж\"}\n\
             {\"id\":\"c\",\"text\":\"y\"}\n{\"id\":\"d\",\"text\":\"z\"}",
        )
        .unwrap();
        let read = |keep: &(dyn Fn(usize) -> bool + Sync), places: Places<'_>| {
            let mut got = Vec::new();
            read_mapped(
                &jsonl,
                keep,
                places,
                &|| (),
                &|_, i, id, text| (i, id, text.to_string()),
                |chunk| {
                    got.extend(chunk);
                    Ok(())
                },
            )
            .map(|_| got)
        };
        let mut places = Vec::new();
        let first = read(&|_| true, Places::Record(&mut places)).unwrap();
        assert_eq!(places.len(), 4);
        assert_eq!(
            places.iter().map(|p| p.line_no).collect::<Vec<_>>(),
            [1, 4, 5, 6]
        );
        let second = read(&|i| i != 2, Places::Known(&places)).unwrap();
        let mut want = first.clone();
        want.remove(2);
        assert_eq!(second, want);
        assert_eq!(second[1], (1, "b".into(), "ёж".into()));
        // A file cut short since its first read: the line no longer there is named.
        let bytes = std::fs::read(&jsonl).unwrap();
        std::fs::write(&jsonl, &bytes[..bytes.len() - 10]).unwrap();
        let err = read(&|_| true, Places::Known(&places)).unwrap_err();
        assert!(
            format!("{err:#}").contains("in.jsonl:6: cannot read again"),
            "{err:#}"
        );
    }

    #[test]
    fn a_bad_line_stops_the_read_of_a_long_file_and_is_named() {
        // Three chunks of lines; the bad one is in the first, while the reader is ahead.
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("in.jsonl");
        let text = "word ".repeat(200);
        let mut lines: Vec<String> = (0..3 * CHUNK_BYTES / text.len())
            .map(|i| format!("{{\"id\":\"d{i}\",\"text\":\"{text}\"}}"))
            .collect();
        lines[7] = "{broken".into();
        std::fs::write(&jsonl, lines.join("\n")).unwrap();
        let mut chunks = 0;
        let err = read_mapped(
            &jsonl,
            &|_| true,
            Places::Unrecorded,
            &|| (),
            &|_, _, _, _| (),
            |_| {
                chunks += 1;
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(chunks, 0);
        assert!(format!("{err:#}").contains("in.jsonl:8:"), "{err:#}");
        // The same file without the bad line: every document, in order, across chunks.
        lines.remove(7);
        std::fs::write(&jsonl, lines.join("\n")).unwrap();
        let got = read_kept(&jsonl, &|_| true);
        assert_eq!(got.len(), lines.len());
        assert!(got.iter().enumerate().all(|(i, (at, _))| i == *at));
    }
}
