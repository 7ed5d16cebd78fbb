//! `update`: grows a built collection with the documents its sources deliver that the store has
//! not seen, comparing them against the store (new-vs-store) and against each other.
//!
//! Stored documents keep their status and the curator's decisions stay; a newcomer that
//! duplicates a kept document is recorded with `duplicate_of`, new contained pairs join the
//! review queue. Newcomers are stored as `pending` in batches, and only one final transaction
//! settles them, so a run killed anywhere and rerun settles exactly the same set.

use crate::build::{self, engine_of, BATCH};
use crate::canon::{Canonicalizer, StopWords};
use crate::collection;
use crate::dedup::{self, EngineConfig};
use crate::sign::{Detector, Full, Verdict};
use crate::store::{status, Store, StoredPair};
use crate::topic::Topic;
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::time::Instant;

/// How newcomers are looked up in the store's signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// One indexed SQL lookup per newcomer fingerprint in the `postings` table.
    Sql,
    /// Load every stored posting into an in-memory index once.
    Memory,
}

impl Lookup {
    /// Parses `sql` or `memory`.
    pub fn parse(s: &str) -> Option<Lookup> {
        match s {
            "sql" => Some(Lookup::Sql),
            "memory" => Some(Lookup::Memory),
            _ => None,
        }
    }
}

/// How `update` runs.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// Collection directory (default `collections/<name>`).
    pub out: Option<PathBuf>,
    /// Show progress bars.
    pub progress: bool,
    /// How to find stored partners.
    pub lookup: Lookup,
}

/// What an update did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpdateSummary {
    /// Collection directory.
    pub out: PathBuf,
    /// Documents the sources delivered.
    pub read: usize,
    /// Of those, documents the store had not seen.
    pub new: usize,
    /// Newcomers settled in this run (includes ones stored by an interrupted earlier run).
    pub settled: usize,
    /// Settled newcomers that entered the collection.
    pub kept: usize,
    /// Settled newcomers that duplicate a kept text.
    pub duplicates: usize,
    /// New contained pairs for review.
    pub new_review_pairs: usize,
    /// Seconds spent comparing newcomers with the store and each other.
    pub compare_seconds: f64,
    /// Figures of the whole collection.
    pub totals: collection::Counts,
}

/// Test hook: when `COLLECT_TEST_PAUSE_AFTER` names this stage, stop here until killed, so the
/// kill-and-rerun tests can interrupt the real binary at a known point.
pub fn test_pause(stage: &str) {
    if std::env::var("COLLECT_TEST_PAUSE_AFTER").as_deref() == Ok(stage) {
        eprintln!("collect: paused after {stage}");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

fn batch_size() -> usize {
    // Tests shrink batches to interrupt between two of them on small inputs.
    std::env::var("COLLECT_TEST_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(BATCH)
}

/// Adds what the topic's sources deliver anew to the built collection.
pub fn update(topic: &Topic, opts: &UpdateOptions) -> Result<UpdateSummary> {
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| build::default_out_dir(topic));
    let store_path = out.join("collection.sqlite");
    if !store_path.exists() {
        return Err(crate::error::bad_input(format!(
            "{}: no collection here; build it first with `collect build`",
            out.display()
        )));
    }
    let mut store = Store::open(&store_path)?;
    if store.meta("build_state")?.as_deref() != Some("complete") {
        return Err(crate::error::bad_input(format!(
            "{}: the build of this collection was interrupted; rerun `collect build` to finish it",
            out.display()
        )));
    }
    let (detector, engine) = engine_of(topic)?;
    if let Some(key) = store.meta("detector")? {
        if key != detector.key() {
            return Err(crate::error::bad_input(format!(
                "{}: the collection was built with detector {key}, the topic now asks for {}; \
                 signatures would not compare (rebuild with `collect build --force`)",
                store_path.display(),
                detector.key()
            )));
        }
    }
    collection::remember_topic(&store, topic)?;
    // A new discovery round: searches and sitemaps are asked again, pages already fetched are
    // not. An update that was interrupted keeps its round, so paid queries are not repeated.
    let resuming = store.meta("update_state")?.as_deref() == Some("in-progress");
    if !resuming {
        store.forget_listings()?;
    }
    store.set_meta("update_state", "in-progress")?;
    let params = serde_json::json!({"topic": topic.name, "detector": detector.key()});
    let run = store.begin_run("update", &params.to_string())?;

    let stop = StopWords::for_languages(&topic.languages).map_err(anyhow::Error::msg)?;
    let progress = crate::progress::Progress::new(opts.progress);
    let mut first_batch = true;
    let (read, new) = build::store_new_documents(
        topic,
        &mut store,
        run,
        &stop,
        detector.as_ref(),
        &progress,
        batch_size(),
        &mut || {
            if std::mem::take(&mut first_batch) {
                test_pause("read-batch");
            }
        },
    )?;
    test_pause("read");

    let started = Instant::now();
    let settled = settle_pending(
        &mut store,
        run,
        &stop,
        detector.as_ref(),
        &engine,
        opts.lookup,
    )?;
    let compare_seconds = started.elapsed().as_secs_f64();
    test_pause("dedup");
    let totals = collection::sync_collection(&store, &out)?;
    store.set_meta("update_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(UpdateSummary {
        out,
        read,
        new,
        settled: settled.settled,
        kept: settled.kept,
        duplicates: settled.duplicates,
        new_review_pairs: settled.contained,
        compare_seconds,
        totals,
    })
}

/// What settling the pending documents decided.
#[derive(Debug, Default, Clone, Copy)]
pub struct Settled {
    /// Pending documents settled.
    pub settled: usize,
    /// Of them, kept.
    pub kept: usize,
    /// Of them, duplicates.
    pub duplicates: usize,
    /// New contained pairs.
    pub contained: usize,
}

/// A stored (already settled) document that shares fingerprints with a newcomer.
struct Partner {
    id: String,
    status: String,
    words: u64,
    rank: u32,
    sig: Vec<u64>,
}

/// Compares every pending document with the settled store and with each other, and settles
/// them in one transaction. Cost follows the pending documents and their partners, not the store
/// (with `Lookup::Sql`).
pub fn settle_pending(
    store: &mut Store,
    run: i64,
    stop: &StopWords,
    detector: &dyn Detector,
    engine: &EngineConfig,
    lookup: Lookup,
) -> Result<Settled> {
    let docs = store.documents(Some(status::PENDING))?;
    if docs.is_empty() {
        return Ok(Settled::default());
    }
    let sig_map: FxHashMap<String, Vec<u64>> =
        store.signatures(status::PENDING)?.into_iter().collect();
    let sigs: Vec<Vec<u64>> = docs
        .iter()
        .map(|d| sig_map.get(&d.id).cloned().unwrap_or_default())
        .collect();
    let pending_nums: rustc_hash::FxHashSet<i64> = store
        .nums_with_status(status::PENDING)?
        .into_iter()
        .collect();

    // Newcomer × stored: |A∩B| by counting hits over the newcomers' fingerprints.
    let mut hits: Vec<FxHashMap<i64, u32>> = vec![FxHashMap::default(); docs.len()];
    match lookup {
        Lookup::Sql => {
            for (i, sig) in sigs.iter().enumerate() {
                for &fp in sig {
                    for num in store.docs_with_fingerprint(fp)? {
                        if !pending_nums.contains(&num) {
                            *hits[i].entry(num).or_default() += 1;
                        }
                    }
                }
            }
        }
        Lookup::Memory => {
            let mut index: FxHashMap<u64, Vec<i64>> = FxHashMap::default();
            for (fp, num) in store.settled_postings()? {
                index.entry(fp).or_default().push(num);
            }
            for (i, sig) in sigs.iter().enumerate() {
                for fp in sig {
                    for &num in index.get(fp).map(Vec::as_slice).unwrap_or(&[]) {
                        *hits[i].entry(num).or_default() += 1;
                    }
                }
            }
        }
    }
    let mut partners: FxHashMap<i64, Partner> = FxHashMap::default();
    for num in hits.iter().flat_map(|h| h.keys()).copied() {
        if partners.contains_key(&num) {
            continue;
        }
        let meta = store.document_meta_by_num(num)?.with_context(|| {
            format!("{}: posting of a missing document", store.path().display())
        })?;
        partners.insert(
            num,
            Partner {
                id: meta.id,
                status: meta.status,
                words: meta.words,
                rank: meta.source_rank,
                sig: store.signature_of(num)?,
            },
        );
    }

    // Judge newcomer × stored pairs; unsure ones go to the full shingle indexes below.
    struct Cross {
        new: usize,
        num: i64,
        pair: dedup::Pair,
    }
    let mut cross: Vec<Cross> = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        let mut nums: Vec<(&i64, &u32)> = h.iter().collect();
        nums.sort_unstable();
        for (&num, &inter) in nums {
            let p = &partners[&num];
            let (scores, verdict) =
                detector.judge_pair(&sigs[i], &p.sig, inter as usize, &engine.thresholds);
            cross.push(Cross {
                new: i,
                num,
                pair: dedup::Pair {
                    a: 0,
                    b: 1,
                    scores,
                    verdict,
                    verified: false,
                },
            });
        }
    }
    // Newcomer × newcomer: the build's all-vs-all engine on the newcomers alone.
    let postings = dedup::Postings::build(&sigs);
    let shared = dedup::shared_pairs(&sigs, &postings);
    let mut inner = dedup::judge_pairs(&sigs, &shared, detector, engine);

    let full = Full::new(detector.shingle());
    let need_new = dedup::unsure_docs(&inner);
    let unsure_cross: Vec<usize> = (0..cross.len())
        .filter(|&k| cross[k].pair.verdict == Verdict::Unsure)
        .collect();
    if !need_new.is_empty() || !unsure_cross.is_empty() {
        let mut texts: FxHashMap<String, String> = FxHashMap::default();
        let mut want: Vec<usize> = need_new.iter().map(|&i| i as usize).collect();
        want.extend(unsure_cross.iter().map(|&k| cross[k].new));
        want.sort_unstable();
        want.dedup();
        for &i in &want {
            texts.insert(docs[i].id.clone(), docs[i].text.clone());
        }
        for &k in &unsure_cross {
            let id = &partners[&cross[k].num].id;
            if !texts.contains_key(id) {
                if let Some(t) = store.document_text(id)? {
                    texts.insert(id.clone(), t);
                }
            }
        }
        let index: FxHashMap<String, Vec<u64>> = texts
            .par_iter()
            .map_init(
                || Canonicalizer::new(stop),
                |c, (id, text)| (id.clone(), full.sign(&c.canonicalize(text))),
            )
            .collect();
        let by_pos: FxHashMap<u32, Vec<u64>> = need_new
            .iter()
            .filter_map(|&i| index.get(&docs[i as usize].id).map(|s| (i, s.clone())))
            .collect();
        dedup::verify_unsure(&mut inner, &by_pos, &full, engine);
        for &k in &unsure_cross {
            let c = &mut cross[k];
            let a = index.get(&docs[c.new].id);
            let b = index.get(&partners[&c.num].id);
            if let (Some(a), Some(b)) = (a, b) {
                let mut one = FxHashMap::default();
                one.insert(0u32, a.clone());
                one.insert(1u32, b.clone());
                dedup::verify_unsure(std::slice::from_mut(&mut c.pair), &one, &full, engine);
            }
        }
    }

    // Which newcomers stay: the build's order (most words, earlier source, smaller id). A stored
    // kept text always outranks a newcomer, since stored documents keep their status.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&docs[x], &docs[y]);
        b.words
            .cmp(&a.words)
            .then(a.source_rank.cmp(&b.source_rank))
            .then(a.id.cmp(&b.id))
    });
    let mut rank = vec![0usize; docs.len()];
    for (r, &d) in order.iter().enumerate() {
        rank[d] = r;
    }
    let mut stored_dups: Vec<Vec<i64>> = vec![Vec::new(); docs.len()];
    for c in &cross {
        if c.pair.verdict == Verdict::Duplicate && partners[&c.num].status == status::KEPT {
            stored_dups[c.new].push(c.num);
        }
    }
    let mut new_dups: Vec<Vec<usize>> = vec![Vec::new(); docs.len()];
    for p in &inner {
        if p.verdict == Verdict::Duplicate {
            new_dups[p.a as usize].push(p.b as usize);
            new_dups[p.b as usize].push(p.a as usize);
        }
    }
    let mut kept = vec![false; docs.len()];
    let mut outcomes: Vec<(String, &str, Option<String>)> = Vec::with_capacity(docs.len());
    let mut result = Settled {
        settled: docs.len(),
        ..Settled::default()
    };
    for &d in &order {
        let best_stored = stored_dups[d]
            .iter()
            .map(|n| &partners[n])
            .min_by(|a, b| {
                b.words
                    .cmp(&a.words)
                    .then(a.rank.cmp(&b.rank))
                    .then(a.id.cmp(&b.id))
            })
            .map(|p| p.id.clone());
        let best_new = new_dups[d]
            .iter()
            .copied()
            .filter(|&p| kept[p])
            .min_by_key(|&p| rank[p])
            .map(|p| docs[p].id.clone());
        match best_stored.or(best_new) {
            Some(of) => {
                result.duplicates += 1;
                outcomes.push((docs[d].id.clone(), status::DUPLICATE, Some(of)));
            }
            None => {
                kept[d] = true;
                result.kept += 1;
                outcomes.push((docs[d].id.clone(), status::KEPT, None));
            }
        }
    }
    let mut stored: Vec<StoredPair> = Vec::new();
    for c in &cross {
        if matches!(c.pair.verdict, Verdict::Duplicate | Verdict::Contained) {
            stored.push(build::stored_pair(
                &docs[c.new].id,
                &partners[&c.num].id,
                &c.pair,
            ));
        }
    }
    for p in &inner {
        if matches!(p.verdict, Verdict::Duplicate | Verdict::Contained) {
            stored.push(build::stored_pair(
                &docs[p.a as usize].id,
                &docs[p.b as usize].id,
                p,
            ));
        }
    }
    stored.sort_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
    result.contained = stored.iter().filter(|p| p.verdict == "contained").count();
    store.record_update(&outcomes, &stored, run)?;
    Ok(result)
}
