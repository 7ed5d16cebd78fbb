//! `build`: topic → sources → clean → filter → sign → store → dedup → export.

pub mod update;

use crate::acquire::{self, AcquireEvents, AcquireReport, UrlState, WebSourceConfig};
use crate::canon::{count_words, CanonText, Canonicalizer, StopWords};
use crate::clean;
use crate::collection;
use crate::dedup::{self, EngineConfig};
use crate::readers::web::{wiki_language, WebSource};
use crate::readers::{local::LocalSource, RawDoc, Source};
use crate::sign::{build_detector, Detector, Full, Thresholds, Verdict};
use crate::store::{status, Document, Store, StoreFrontier, StoredPair};
use crate::topic::{SourceSpec, Topic};
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
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
}

/// The collection a build was refused over: it exists and `update` is the way to grow it.
#[derive(Debug)]
pub struct CollectionExists(pub PathBuf);

impl std::fmt::Display for CollectionExists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} already holds a built collection; use `collect update` to add to it, or `collect build --force` to rebuild it from scratch",
            self.0.display()
        )
    }
}

impl std::error::Error for CollectionExists {}

/// What a build did, for the summary line and `--json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    /// Output directory.
    pub out: PathBuf,
    /// Whether an interrupted build was resumed.
    pub resumed: bool,
    /// Documents read from the sources in this run (skipping ones already stored).
    pub read: usize,
    /// Figures of the whole collection (as in report.md).
    pub totals: collection::Counts,
}

/// Size of the batches stored in one transaction: a kill loses at most one batch of work.
pub const BATCH: usize = 256;

/// Stable document id: from where the document came from and its content.
pub fn document_id(locator: &str, body: &str) -> String {
    let mut h = Sha256::new();
    h.update(locator.as_bytes());
    h.update([0u8]);
    h.update(body.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// SHA-256 of a text, hex.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Default output directory of a topic.
pub fn default_out_dir(topic: &Topic) -> PathBuf {
    Path::new("collections").join(&topic.name)
}

/// The topic's detector and engine settings.
pub fn engine_of(topic: &Topic) -> Result<(Box<dyn Detector>, EngineConfig)> {
    let d = &topic.dedup;
    let detector = build_detector(&d.detector_params()).map_err(anyhow::Error::msg)?;
    Ok((
        detector,
        EngineConfig {
            thresholds: Thresholds {
                resemblance: d.resemblance,
                containment: d.containment,
            },
        },
    ))
}

/// The pipeline's sources, in priority order (shared by `build` and `update`): local ones
/// read files, web ones read what acquisition fetched.
pub fn sources_of(topic: &Topic, frontier: &Option<Arc<StoreFrontier>>) -> Vec<Box<dyn Source>> {
    topic
        .sources
        .iter()
        .zip(topic.source_names())
        .enumerate()
        .filter_map(|(rank, (spec, name))| -> Option<Box<dyn Source>> {
            let rank = rank as u32;
            match (spec, spec.web()) {
                (SourceSpec::Local(c), _) => Some(Box::new(LocalSource::new(
                    name,
                    rank,
                    topic.resolve(&c.path),
                ))),
                (_, Some(web)) => {
                    let lang = wiki_language(&web, topic.languages.first().map(String::as_str));
                    Some(Box::new(WebSource::new(
                        name,
                        rank,
                        frontier.clone()?,
                        lang,
                    )))
                }
                (_, None) => None,
            }
        })
        .collect()
}

/// The topic's web sources, each under its unique report name.
pub fn web_sources(topic: &Topic) -> Vec<WebSourceConfig> {
    topic
        .sources
        .iter()
        .zip(topic.source_names())
        .filter_map(|(spec, name)| spec.web().map(|w| w.with_name(name)))
        .collect()
}

/// Prints warnings and counts pages while acquisition runs.
struct AcquireProgress {
    progress: crate::progress::Progress,
    bar: indicatif::ProgressBar,
}

impl AcquireEvents for AcquireProgress {
    fn warning(&self, source: &str, msg: &str) {
        self.progress.warn(&format!("{source}: {msg}"));
    }

    fn url_done(&self, _source: &str, _url: &str, _state: &UrlState) {
        self.bar.inc(1);
    }
}

/// Runs the acquisition stage: every web source, politely, into the store's frontier.
/// Rerun after an interruption, it asks and fetches only what the frontier does not have.
pub fn acquire_web(
    topic: &Topic,
    frontier: &StoreFrontier,
    progress: &crate::progress::Progress,
) -> Result<AcquireReport> {
    let sources = web_sources(topic);
    let events = AcquireProgress {
        progress: progress.clone(),
        bar: progress.counter("fetching"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(acquire::acquire(
        &sources,
        &topic.keywords,
        &topic.crawl,
        frontier,
        &events,
    ))?;
    events.bar.finish_and_clear();
    Ok(report)
}

/// Builds (or resumes building) the collection of `topic`.
pub fn build(topic: &Topic, opts: &BuildOptions) -> Result<BuildSummary> {
    let out = opts.out.clone().unwrap_or_else(|| default_out_dir(topic));
    let store_path = out.join("collection.sqlite");
    let mut resumed = false;
    if store_path.exists() {
        let state = Store::open(&store_path)?.meta("build_state")?;
        if opts.force {
            collection::remove_collection_files(&out)?;
        } else if state.as_deref() == Some("complete") {
            return Err(CollectionExists(out).into());
        } else {
            resumed = true;
        }
    }
    std::fs::create_dir_all(&out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut store = Store::open(&store_path)?;
    let (mut detector, engine) = engine_of(topic)?;
    if let Some(key) = store.meta("detector")? {
        if key != detector.key() {
            bail!(
                "{}: an interrupted build used detector {key}, the topic now asks for {}; rerun with --force",
                store_path.display(),
                detector.key()
            );
        }
    }
    store.set_meta("topic", &topic.name)?;
    store.set_meta("detector", &detector.key())?;
    store.set_meta("build_state", "in-progress")?;
    let params = serde_json::json!({
        "topic": topic.name, "detector": detector.key(),
        "resemblance": engine.thresholds.resemblance, "containment": engine.thresholds.containment,
        "min_words": topic.filter.min_words, "resumed": resumed,
    });
    let run = store.begin_run("build", &params.to_string())?;

    let stop = StopWords::for_languages(&topic.languages).map_err(anyhow::Error::msg)?;
    let progress = crate::progress::Progress::new(opts.progress);
    let (read, _new) = store_new_documents(
        topic,
        &mut store,
        run,
        &stop,
        detector.as_ref(),
        &progress,
        BATCH,
        &mut || {},
    )?;

    dedup_all(&mut store, run, &stop, &mut detector, &engine)?;
    let totals = collection::write_collection(&store, topic, &out)?;
    store.set_meta("build_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(BuildSummary {
        out,
        resumed,
        read,
        totals,
    })
}

/// The stages shared by `build` and `update`: acquires the web sources into the frontier, then
/// reads every source and stores, cleaned, filtered and signed, each document the store does
/// not hold yet, `batch` at a time (a kill loses at most one batch; a rerun skips what is
/// stored). `after_batch` runs after each stored batch. Returns (documents read, new ones).
#[allow(clippy::too_many_arguments)]
pub fn store_new_documents(
    topic: &Topic,
    store: &mut Store,
    run: i64,
    stop: &StopWords,
    detector: &dyn Detector,
    progress: &crate::progress::Progress,
    batch: usize,
    after_batch: &mut dyn FnMut(),
) -> Result<(usize, usize)> {
    let frontier = if web_sources(topic).is_empty() {
        None
    } else {
        let f = Arc::new(StoreFrontier::open(store.path())?);
        acquire_web(topic, &f, progress)?;
        Some(f)
    };
    let (mut read, mut new) = (0usize, 0usize);
    for source in sources_of(topic, &frontier) {
        let bar = progress.counter(&format!("reading {}", source.name()));
        let mut pending: Vec<RawDoc> = Vec::new();
        let mut flush = |pending: &mut Vec<RawDoc>, store: &mut Store| -> Result<()> {
            if pending.is_empty() {
                return Ok(());
            }
            let ready = prepare_batch(topic, stop, detector, std::mem::take(pending));
            store.insert_documents(run, &ready)?;
            after_batch();
            Ok(())
        };
        source.collect(
            &mut |doc| {
                read += 1;
                bar.inc(1);
                if store.has_document(&document_id(&doc.locator, &doc.body))? {
                    return Ok(());
                }
                new += 1;
                pending.push(doc);
                if pending.len() >= batch {
                    flush(&mut pending, store)?;
                }
                Ok(())
            },
            &mut |w| progress.warn(&w),
        )?;
        flush(&mut pending, store)?;
        bar.finish();
    }
    Ok((read, new))
}

/// Cleans, filters, identifies and signs a batch of raw documents (in parallel).
pub fn prepare_batch(
    topic: &Topic,
    stop: &StopWords,
    detector: &dyn Detector,
    raw: Vec<RawDoc>,
) -> Vec<(Document, Vec<u64>)> {
    raw.into_par_iter()
        .map_init(
            || Canonicalizer::new(stop),
            |canon, r| {
                let id = document_id(&r.locator, &r.body);
                let ctx = clean::CleanContext {
                    url: r.url.as_deref(),
                    lang: r.lang.as_deref(),
                };
                let cleaned = clean::clean(r.payload, &r.body, &ctx);
                let words = count_words(&cleaned.text) as u64;
                let (st, reason) = filter_verdict(topic, words, cleaned.lang.as_deref());
                // Detectors weighing words by the collection are signed in `dedup_all`, once the
                // whole collection is known.
                let sig = if st == status::PENDING && !detector.needs_stats() {
                    detector.sign_doc(&cleaned.text, &canon.canonicalize(&cleaned.text))
                } else {
                    Vec::new()
                };
                let doc = Document {
                    id,
                    source: r.source,
                    source_rank: r.source_rank,
                    locator: r.locator,
                    url: r.url,
                    title: r.title.or(cleaned.title),
                    lang: cleaned.lang,
                    raw_bytes: r.raw_bytes,
                    sha256: sha256_hex(&cleaned.text),
                    text: cleaned.text,
                    words,
                    status: st.to_string(),
                    reason,
                    duplicate_of: None,
                };
                (doc, sig)
            },
        )
        .collect()
}

/// The filters of METHOD.md step 4 and the topic: status and reason of a cleaned text.
pub fn filter_verdict(
    topic: &Topic,
    words: u64,
    lang: Option<&str>,
) -> (&'static str, Option<String>) {
    let f = &topic.filter;
    if words < f.min_words as u64 {
        return (
            status::SHORT,
            Some(format!("{words} words < min_words {}", f.min_words)),
        );
    }
    if f.max_words > 0 && words > f.max_words as u64 {
        return (
            status::FILTERED,
            Some(format!("{words} words > max_words {}", f.max_words)),
        );
    }
    if f.language {
        if let Some(l) = lang {
            if !topic.languages.iter().any(|x| x == l) {
                return (
                    status::FILTERED,
                    Some(format!("language {l} not in topic languages")),
                );
            }
        }
    }
    (status::PENDING, None)
}

/// Prepares `detector` on the statistics of `docs` (df, cf, N, length) and signs them.
fn sign_with_stats(
    docs: &[Document],
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
) -> Result<Vec<Vec<u64>>> {
    let mut stats = crate::sign::CorpusStats::default();
    let mut c = Canonicalizer::new(stop);
    let canon: Vec<CanonText> = docs.iter().map(|d| c.canonicalize(&d.text)).collect();
    for (d, t) in docs.iter().zip(&canon) {
        stats.add(&detector.terms(&d.text, t));
    }
    detector.prepare(std::sync::Arc::new(stats));
    let detector: &dyn Detector = detector.as_ref();
    Ok(docs
        .par_iter()
        .zip(&canon)
        .map(|(d, t)| detector.sign_doc(&d.text, t))
        .collect())
}

/// All-vs-all dedup of every valid document in the store; writes statuses and pairs.
fn dedup_all(
    store: &mut Store,
    run: i64,
    stop: &StopWords,
    detector: &mut Box<dyn Detector>,
    engine: &EngineConfig,
) -> Result<()> {
    let docs: Vec<Document> = store
        .documents(None)?
        .into_iter()
        .filter(|d| d.status != status::SHORT && d.status != status::FILTERED)
        .collect();
    let sig_map: FxHashMap<String, Vec<u64>> = [status::PENDING, status::KEPT, status::DUPLICATE]
        .iter()
        .map(|s| store.signatures(s))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let sigs: Vec<Vec<u64>> = if detector.needs_stats() {
        sign_with_stats(&docs, stop, detector)?
    } else {
        docs.iter()
            .map(|d| sig_map.get(&d.id).cloned().unwrap_or_default())
            .collect()
    };
    let detector: &dyn Detector = detector.as_ref();
    let shared = detector.candidate_pairs(&sigs);
    let mut pairs = dedup::judge_pairs(&sigs, &shared, detector, engine);
    let need = dedup::unsure_docs(&pairs);
    if !need.is_empty() {
        let full = Full::new(detector.shingle());
        let index: FxHashMap<u32, Vec<u64>> = need
            .par_iter()
            .map_init(
                || (Canonicalizer::new(stop), CanonText::default()),
                |(c, buf), &i| {
                    c.canonicalize_into(&docs[i as usize].text, buf);
                    (i, full.sign(buf))
                },
            )
            .collect();
        dedup::verify_unsure(&mut pairs, &index, &full, engine);
    }
    let mut order: Vec<u32> = (0..docs.len() as u32).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&docs[x as usize], &docs[y as usize]);
        b.words
            .cmp(&a.words)
            .then(a.source_rank.cmp(&b.source_rank))
            .then(a.id.cmp(&b.id))
    });
    let dup_pairs: Vec<(u32, u32)> = pairs
        .iter()
        .filter(|p| p.verdict == Verdict::Duplicate)
        .map(|p| (p.a, p.b))
        .collect();
    let dup_of = dedup::choose_kept(docs.len(), &order, &dup_pairs);
    let outcomes: Vec<(String, &str, Option<String>)> = docs
        .iter()
        .zip(&dup_of)
        .map(|(d, dup)| match dup {
            Some(k) => (
                d.id.clone(),
                status::DUPLICATE,
                Some(docs[*k as usize].id.clone()),
            ),
            None => (d.id.clone(), status::KEPT, None),
        })
        .collect();
    let stored: Vec<StoredPair> = pairs
        .iter()
        .filter(|p| matches!(p.verdict, Verdict::Duplicate | Verdict::Contained))
        .map(|p| stored_pair(&docs[p.a as usize].id, &docs[p.b as usize].id, p))
        .collect();
    store.record_dedup(run, &outcomes, &stored)
}

/// A pair oriented by id (a < b), so stored pairs do not depend on input order.
pub fn stored_pair(id_a: &str, id_b: &str, p: &dedup::Pair) -> StoredPair {
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
        verdict: p.verdict.as_str().to_string(),
        verified: p.verified,
    }
}
