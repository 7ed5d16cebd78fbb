//! `build` and `update`: the orchestration of the pipeline's stages over one collection.
//!
//! `build` runs topic → acquire → read → clean → filter → sign → store (in [`ingest`]), then
//! dedup of the whole collection and the collection directory. [`update`] shares the ingest
//! and compares only the newcomers with the store. Both settle documents with the same
//! [`settle`]: the dedup engine's pairs and its keep rule, turned into statuses and stored pairs.

pub mod assemble;
pub mod clean_files;
pub mod ingest;
pub mod multi;
pub mod rebuild;
pub mod spark;
pub mod update;
pub mod worker;

use crate::canon::{CanonText, Canonicalizer, StopWords};
use crate::collection;
use crate::dedup::{self, Candidate, Pair, Standing};
use crate::error::CollectionExists;
use crate::sign::{build_detector, CorpusStats, DedupSettings, Detector, ShingleSeq, Verdict};
use crate::store::kept::{PackedAhead, TextRow, FETCH_CHUNK, READ_CHUNK};
use crate::store::{HeldSignatures, Outcome, Status, Store, StoredPair};
use crate::topic::Topic;
use anyhow::{bail, Context, Result};
use ingest::{Ingest, Preparer};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How `build` runs.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Output directory (default `collections/<name>`).
    pub out: Option<PathBuf>,
    /// Replace an existing collection.
    pub force: bool,
    /// Show progress bars.
    pub progress: bool,
    /// Stop at the first bad input (the topic's `strict: true` does too).
    pub strict: bool,
}

/// What a build did, for the summary line and `--json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    /// Output directory.
    pub out: PathBuf,
    /// Whether an interrupted build was resumed.
    pub resumed: bool,
    /// Documents read from the sources in this run (skipping ones already stored).
    pub read: usize,
    /// Inputs skipped in this run (unreadable files, malformed records…), recorded in the
    /// store and listed by `collect stats DIR --skipped`.
    pub skipped: usize,
    /// Figures of the whole collection (as in report.md).
    pub totals: collection::Counts,
    /// Each stage's wall and CPU seconds, as its line on stderr gives them.
    pub stages: Vec<crate::progress::StageTime>,
}

/// Default output directory of a topic.
pub fn default_out_dir(topic: &Topic) -> PathBuf {
    Path::new("collections").join(&topic.name)
}

/// The topic's detector.
fn detector_of(topic: &Topic) -> Result<Box<dyn Detector>> {
    build_detector(&topic.dedup).map_err(anyhow::Error::msg)
}

/// The name of the stage that compares the texts and ends with the collection written, in a
/// build and in an update alike: their stage times are read side by side under it.
pub const DEDUP_STAGE: &str = "dedup";

/// Builds (or resumes building) the collection of `topic`.
pub fn build(topic: &Topic, opts: &BuildOptions) -> Result<BuildSummary> {
    build_in(topic, opts, None)
}

/// [`build`], acquiring through `shared` when several topics are built in one run.
fn build_in(
    topic: &Topic,
    opts: &BuildOptions,
    shared: Option<&multi::SharedWeb>,
) -> Result<BuildSummary> {
    let out = opts.out.clone().unwrap_or_else(|| default_out_dir(topic));
    let store_path = collection::store_path(&out);
    let mut resumed = false;
    if store_path.exists() {
        if opts.force {
            // Asked for in so many words: the old store goes, sound or not.
            collection::remove_collection_files(&out)?;
        } else {
            collection::refuse_emptied_store(&out)?;
            let state = Store::open(&store_path)?.meta("build_state")?;
            if state.as_deref() == Some("complete") {
                return Err(CollectionExists(out).into());
            }
            resumed = true;
        }
    }
    std::fs::create_dir_all(&out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut store = Store::open(&store_path)?;
    let mut detector = detector_of(topic)?;
    if let Some(key) = store.meta("detector")? {
        if key != topic.dedup.signature_key(detector.as_ref()) {
            bail!(
                "{}: an interrupted build used detector {key}, the topic now asks for {}; rerun with --force",
                store_path.display(),
                topic.dedup.signature_key(detector.as_ref())
            );
        }
    }
    store.set_meta("topic", &topic.name)?;
    store.set_meta("detector", &topic.dedup.signature_key(detector.as_ref()))?;
    store.set_meta("build_state", "in-progress")?;
    let thresholds = topic.dedup.thresholds();
    let params = serde_json::json!({
        "topic": topic.name, "detector": topic.dedup.signature_key(detector.as_ref()),
        "resemblance": thresholds.resemblance, "containment": thresholds.containment,
        "min_words": topic.filter.min_words, "resumed": resumed,
    });
    let run = store.begin_run("build", &params.to_string())?;
    store.defer_postings_index()?;

    let stop = topic
        .dedup
        .canon_words(&topic.languages)
        .map_err(anyhow::Error::msg)?;
    let progress = crate::progress::Progress::new(opts.progress);
    let mut first_batch = true;
    let docs_dir = store.docs_dir();
    std::fs::create_dir_all(&docs_dir)
        .with_context(|| format!("{}: cannot create", docs_dir.display()))?;
    let mut signed = ingest::Signatures::default();
    let ingested = ingest::store_new_documents(
        topic,
        Ingest {
            store: &mut store,
            run,
            preparer: Preparer::of(topic, &stop, detector.as_ref()),
            progress: &progress,
            batch: ingest::Batches::growing(),
            after_batch: &mut || {
                if std::mem::take(&mut first_batch) {
                    crate::testhooks::pause("build-batch");
                }
            },
            strict: opts.strict || topic.strict,
            shared,
            docs_dir: Some(&docs_dir),
            signatures: Some(&mut signed),
        },
    )?;

    let started = crate::progress::Started::now();
    let (outcomes, pairs) = dedup_outcomes(&store, &stop, &mut detector, &topic.dedup, signed)?;
    // The texts of the documents that leave `docs/` are read and packed on this thread while
    // a second one records the verdicts: one writer, on one core, which left the other idle.
    let leaving: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.status != Status::Kept)
        .map(|o| o.id.as_str())
        .collect();
    let (ruled, ahead) = std::thread::scope(|scope| -> Result<_> {
        let recording = scope.spawn(|| -> Result<_> {
            store.record_dedup(run, &outcomes, &pairs)?;
            crate::review::queue::apply_standing_rules(&mut store, &topic.review.rules)
        });
        let ahead = PackedAhead::read(&store_path, &leaving);
        let ruled = joined(recording)?;
        Ok((ruled, ahead))
    })?;
    let totals = collection::write_collection(&store, topic, &out, ahead)?;
    progress.stage(
        DEDUP_STAGE,
        &format!(
            "{} texts compared, {} duplicates, {} contained pairs{}; {} in the collection",
            totals.kept + totals.duplicates + totals.dropped,
            totals.duplicates,
            totals.contained_pairs,
            crate::review::queue::standing_summary(&ruled),
            totals.kept
        ),
        started,
        None,
    );
    store.set_meta("build_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(BuildSummary {
        out,
        resumed,
        read: ingested.read,
        skipped: ingested.skipped,
        totals,
        stages: progress.stage_times(),
    })
}

/// Prepares `detector` on the statistics of `texts` (df, cf, N, length) and signs them.
fn sign_with_stats(
    texts: &[String],
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
) -> Vec<Vec<u64>> {
    let mut stats = CorpusStats::default();
    let mut c = Canonicalizer::new(stop);
    let canon: Vec<CanonText> = texts.iter().map(|t| c.canonicalize(t)).collect();
    for (t, ct) in texts.iter().zip(&canon) {
        stats.add(&detector.terms(t, ct));
    }
    detector.prepare(Arc::new(stats));
    let detector: &dyn Detector = detector.as_ref();
    texts
        .par_iter()
        .zip(&canon)
        .map(|(t, ct)| detector.sign_doc(t, ct))
        .collect()
}

/// All-vs-all dedup of every valid document in the store: the statuses and pairs to write.
/// Only reads: texts are read from the store only for the pairs the engine verifies, a chunk
/// at a time, so memory follows the signatures, not the collection's text.
///
/// The fingerprint index (for later updates) is made beside the engine, on a connection of its
/// own, from the signatures the engine holds when they are the store's, in the time the engine
/// leaves a core idle; the outcome is written once both are done.
fn dedup_outcomes(
    store: &Store,
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
    settings: &DedupSettings,
    signed: ingest::Signatures,
) -> Result<(Vec<Outcome>, Vec<StoredPair>)> {
    let docs: Vec<_> = store
        .all_partners()?
        .into_iter()
        .filter(|d| !d.status.is_filtered_out())
        .collect();
    let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    let (path, docs_dir) = (store.path().to_path_buf(), store.docs_dir());
    let gone = |id: &str| format!("{}: document {id} has gone", path.display());
    let texts = Texts {
        fetch: &|need| {
            let nums: Vec<i64> = need.iter().map(|&i| docs[i].num).collect();
            store
                .text_rows(&nums)?
                .into_iter()
                .zip(need)
                .map(|(row, &i)| row.with_context(|| gone(ids[i])).map(Some))
                .collect()
        },
        read: &|rows: Vec<TextRow>| {
            let texts = TextRow::texts(&rows, &path, &docs_dir)?;
            rows.iter()
                .zip(texts)
                .map(|(row, text)| text.with_context(|| gone(&row.id)).map(Some))
                .collect()
        },
    };
    let sigs = signatures_among(store, &ids, &texts, stop, detector, signed)?;
    // A detector weighing words by the collection signed the texts anew, not as stored.
    let held = (!detector.needs_stats()).then(|| {
        HeldSignatures::new(
            docs.iter()
                .map(|d| d.num)
                .zip(sigs.iter().map(Vec::as_slice)),
        )
    });
    let pairs = std::thread::scope(|scope| -> Result<_> {
        let indexing = scope.spawn(|| {
            yield_to_other_threads();
            let store = Store::open(&path)?;
            match &held {
                Some(held) => store.index_postings_held(held),
                None => store.index_postings(),
            }
        });
        let pairs = judge_among(&sigs, &texts, stop, detector.as_ref(), settings);
        let indexed = joined(indexing);
        let pairs = pairs?;
        indexed?;
        Ok(pairs)
    })?;
    // Freed before the verdicts are made: 42 MB on the 80k dev corpus, which freed after them
    // stayed in the build's peak (the allocator cannot hand back memory below live blocks).
    drop(held);
    drop(sigs);
    let candidates: Vec<Candidate> = docs
        .iter()
        .map(|d| candidate(&d.id, d.words, d.source_rank, Standing::New))
        .collect();
    Ok(settle(&candidates, &pairs))
}

/// Where the engine finds the text of its i-th document, in two steps: `fetch` on the
/// calling thread (the store rows of the documents asked for, in their order: the connection is
/// not shared), then `read` on any core (the file in `docs/` read and checked, or the frame
/// unpacked; a few rows at a time, in their order). None: no text to give.
pub(crate) struct Texts<'a, T> {
    pub fetch: &'a dyn Fn(&[usize]) -> Result<Found<T>>,
    pub read: &'a (dyn Fn(Vec<T>) -> Result<Found<String>> + Sync),
}

/// What [`Texts`] found for each document asked for, in their order (None: nothing to give).
pub(crate) type Found<T> = Vec<Option<T>>;

/// Lowers the calling thread's scheduling priority to the least, so that it runs when the
/// process's other threads leave a core idle. Making the fingerprint index at the engine's
/// priority took a core from it (80k build: the engine's candidate pairs 0.80–0.87 s against
/// 0.62–0.67 s at the least priority, where the index is still done before the engine).
fn yield_to_other_threads() {
    // On Linux a thread's nice value is its own (elsewhere it would be the whole process's).
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` cannot fail; `setpriority` on the calling thread only changes its
    // scheduling, and a refusal leaves it as it was, which is harmless.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
}

/// The engine's pairs among the documents `ids` (stored, not filtered out): [`judge_among`]
/// their [`signatures_among`].
fn pairs_among<T: Send>(
    store: &Store,
    ids: &[&str],
    texts: &Texts<'_, T>,
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
    settings: &DedupSettings,
    signed: ingest::Signatures,
) -> Result<Vec<Pair>> {
    let sigs = signatures_among(store, ids, texts, stop, detector, signed)?;
    judge_among(&sigs, texts, stop, detector.as_ref(), settings)
}

/// The signatures of the documents `ids` (stored, not filtered out), as the store holds them
/// (`signed`, where the caller kept them as it stored them; the store is read for any missing)
/// or, for detectors that weigh words by the collection, made over their texts now; `texts`
/// gives the text of `ids[i]`.
fn signatures_among<T>(
    store: &Store,
    ids: &[&str],
    texts: &Texts<'_, T>,
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
    signed: ingest::Signatures,
) -> Result<Vec<Vec<u64>>> {
    if detector.needs_stats() {
        let all = (0..ids.len())
            .map(|i| {
                let text = match (texts.fetch)(&[i])?.pop().flatten() {
                    Some(row) => (texts.read)(vec![row])?.pop().flatten(),
                    None => None,
                };
                text.with_context(|| format!("document {} has no text to sign", ids[i]))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(sign_with_stats(&all, stop, detector));
    }
    let mut stored = signed;
    // A resumed build stored some documents in an earlier run, and a store rebuilt by
    // `collect doctor` may hold dropped ones (a build holds none).
    let missing = ids.iter().any(|id| !stored.contains_key(*id));
    for st in [
        Status::Pending,
        Status::Kept,
        Status::Duplicate,
        Status::Dropped,
    ]
    .into_iter()
    .filter(|_| missing)
    {
        stored.extend(store.signatures(st)?);
    }
    Ok(ids
        .iter()
        .map(|id| stored.remove(*id).unwrap_or_default())
        .collect())
}

/// The engine's pairs among documents signed `sigs`, whose texts `texts` gives.
fn judge_among<T: Send>(
    sigs: &[Vec<u64>],
    texts: &Texts<'_, T>,
    stop: &StopWords,
    detector: &dyn Detector,
    settings: &DedupSettings,
) -> Result<Vec<Pair>> {
    let engine = dedup::Engine {
        detector,
        thresholds: &settings.thresholds(),
        grey: &settings.grey_zone(),
        wanted: dedup::Wanted::Flagged,
    };
    let found = engine.find(sigs, sigs.len(), &mut |need, shingle, sink| {
        feed_texts(need, shingle, sink, stop, texts)
    })?;
    Ok(found.pairs)
}

/// The engine's [`dedup::TextSource`] over `texts` (None: no text to give, the engine leaves
/// that document's pairs as judged): `FETCH_CHUNK` texts fetched in order, then read,
/// canonicalised and made into `shingle`-word sequences on all cores, `READ_CHUNK` at a time,
/// so only a chunk of texts is ever held, or two: the rows of a chunk are fetched while the
/// chunk before is read (the fetch, on the store's one connection, was 15 % of the CPU of
/// verifying an update's 4,000 texts, both cores waiting on it).
fn feed_texts<T: Send>(
    need: &[u32],
    shingle: usize,
    sink: &mut dedup::SequenceSink,
    stop: &StopWords,
    texts: &Texts<'_, T>,
) -> Result<()> {
    let read = texts.read;
    std::thread::scope(|scope| -> Result<()> {
        let mut reading = None;
        for chunk in need.chunks(FETCH_CHUNK) {
            let asked: Vec<usize> = chunk.iter().map(|&i| i as usize).collect();
            let rows: Vec<(u32, T)> = chunk
                .iter()
                .zip((texts.fetch)(&asked)?)
                .filter_map(|(&i, row)| Some((i, row?)))
                .collect();
            if let Some(before) =
                reading.replace(scope.spawn(move || sequences(rows, shingle, stop, read)))
            {
                sink(joined(before)?)?;
            }
        }
        match reading {
            Some(last) => sink(joined(last)?),
            None => Ok(()),
        }
    })
}

/// What a scoped thread gave, its panic passed on.
fn joined<R>(handle: std::thread::ScopedJoinHandle<'_, R>) -> R {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The shingle sequences of the texts of `rows`, read by `read` and canonicalised on all cores,
/// [`READ_CHUNK`] rows at a time.
fn sequences<T: Send>(
    rows: Vec<(u32, T)>,
    shingle: usize,
    stop: &StopWords,
    read: &(dyn Fn(Vec<T>) -> Result<Found<String>> + Sync),
) -> Result<Vec<(u32, ShingleSeq)>> {
    let sequences: Vec<Vec<(u32, ShingleSeq)>> = rows
        .into_par_iter()
        .chunks(READ_CHUNK)
        .map_init(
            || (Canonicalizer::new(stop), CanonText::default()),
            |(c, buf), rows| {
                let (at, rows): (Vec<u32>, Vec<T>) = rows.into_iter().unzip();
                let texts = read(rows)?;
                Ok(at
                    .into_iter()
                    .zip(texts)
                    .filter_map(|(i, text)| {
                        c.canonicalize_into(&text?, buf);
                        Some((i, ShingleSeq::new(buf, shingle)))
                    })
                    .collect())
            },
        )
        .collect::<Result<_>>()?;
    Ok(sequences.into_iter().flatten().collect())
}

/// What the keep rule reads of a document.
fn candidate(id: &str, words: u64, source_rank: u32, standing: Standing) -> Candidate<'_> {
    Candidate {
        id,
        words,
        source_rank,
        standing,
    }
}

/// Turns the engine's pairs over `candidates` into what the store records: the status of
/// every new candidate by the keep rule, and the duplicate and contained pairs (in `pairs`'
/// order), oriented by id.
fn settle(candidates: &[Candidate], pairs: &[Pair]) -> (Vec<Outcome>, Vec<StoredPair>) {
    let duplicates: Vec<(u32, u32)> = pairs
        .iter()
        .filter(|p| p.verdict == Verdict::Duplicate)
        .map(|p| (p.a, p.b))
        .collect();
    let duplicate_of = dedup::choose_kept(candidates, &duplicates);
    let outcomes = candidates
        .iter()
        .zip(&duplicate_of)
        .filter(|(c, _)| c.standing == Standing::New)
        .map(|(c, dup)| {
            outcome_of(
                c.id.to_string(),
                dup.map(|k| candidates[k as usize].id.to_string()),
            )
        })
        .collect();
    let stored = pairs
        .iter()
        .filter(|p| p.verdict.is_recorded())
        .map(|p| stored_pair(candidates[p.a as usize].id, candidates[p.b as usize].id, p))
        .collect();
    (outcomes, stored)
}

/// The status a settled document takes: a duplicate of the kept text the keep rule names, or
/// kept.
fn outcome_of(id: String, duplicate_of: Option<String>) -> Outcome {
    Outcome {
        id,
        status: if duplicate_of.is_some() {
            Status::Duplicate
        } else {
            Status::Kept
        },
        duplicate_of,
    }
}

/// A pair oriented by id (a < b), so stored pairs do not depend on input order.
fn stored_pair(id_a: &str, id_b: &str, p: &Pair) -> StoredPair {
    let (a, b, ab, ba) = if id_a <= id_b {
        (id_a, id_b, p.scores.cont_a_in_b, p.scores.cont_b_in_a)
    } else {
        (id_b, id_a, p.scores.cont_b_in_a, p.scores.cont_a_in_b)
    };
    StoredPair {
        id: 0,
        a: a.to_string(),
        b: b.to_string(),
        inter: p.scores.inter,
        resemblance: p.scores.resemblance,
        cont_a_in_b: ab,
        cont_b_in_a: ba,
        verdict: p.verdict,
        verified: p.verified,
        shared: p.shared,
    }
}
