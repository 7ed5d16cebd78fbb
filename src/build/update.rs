//! `update`: grows a built collection with the documents its sources deliver that the store has
//! not seen, comparing them against the store (new-vs-store) and against each other.
//!
//! Stored documents keep their status and the curator's decisions stay; a newcomer that
//! duplicates a kept document is recorded with `duplicate_of`, new contained pairs join the
//! review queue. Newcomers are stored as `pending` in batches, and only one final transaction
//! settles them, so a run killed anywhere and rerun settles exactly the same set.

use super::ingest::{self, Ingest, Preparer};
use super::{candidate, default_out_dir, detector_of, settle};
use crate::canon::StopWords;
use crate::collection;
use crate::dedup::{self, Candidate, Standing};
use crate::sign::{DedupSettings, Detector, SigSize, Verdict};
use crate::store::kept::TextRow;
use crate::store::queries::StoredPartner;
use crate::store::{Status, Store};
use crate::testhooks;
use crate::topic::Topic;
use anyhow::Result;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;

/// How newcomers are looked up in the store's signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lookup {
    /// The newcomers' fingerprints looked up in the store's fingerprint index.
    Sql,
    /// Load every stored posting into an in-memory index once.
    Memory,
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
    /// Stop at the first bad input (the topic's `strict: true` does too).
    pub strict: bool,
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
    /// Inputs skipped in this run, recorded in the store.
    pub skipped: usize,
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
    /// Each stage's wall and CPU seconds, as its line on stderr gives them.
    pub stages: Vec<crate::progress::StageTime>,
}

/// Adds what the topic's sources deliver anew to the built collection.
pub fn update(topic: &Topic, opts: &UpdateOptions) -> Result<UpdateSummary> {
    let out = opts.out.clone().unwrap_or_else(|| default_out_dir(topic));
    let store_path = collection::store_path(&out);
    if !store_path.exists() {
        return Err(crate::error::bad_input(format!(
            "{}: no collection here; build it first with `collect build`",
            out.display()
        )));
    }
    collection::refuse_emptied_store(&out)?;
    let mut store = Store::open(&store_path)?;
    store.keep_temporary_files_in_memory()?;
    if store.meta("build_state")?.as_deref() != Some("complete") {
        return Err(crate::error::bad_input(format!(
            "{}: the build of this collection was interrupted; rerun `collect build` to finish it",
            out.display()
        )));
    }
    let detector = detector_of(topic)?;
    if let Some(key) = store.meta("detector")? {
        if key != topic.dedup.signature_key(detector.as_ref()) {
            return Err(crate::error::bad_input(format!(
                "{}: the collection was built with detector {key}, the topic now asks for {}; \
                 signatures would not compare (rebuild with `collect build --force`)",
                store_path.display(),
                topic.dedup.signature_key(detector.as_ref())
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
    let params = serde_json::json!({"topic": topic.name, "detector": topic.dedup.signature_key(detector.as_ref())});
    let run = store.begin_run("update", &params.to_string())?;
    // A store whose build was killed before its end has no fingerprint index yet.
    store.index_postings()?;

    let stop = topic
        .dedup
        .canon_words(&topic.languages)
        .map_err(anyhow::Error::msg)?;
    let progress = crate::progress::Progress::new(opts.progress);
    let mut first_batch = true;
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
                    testhooks::pause("read-batch");
                }
            },
            strict: opts.strict || topic.strict,
            shared: None,
            docs_dir: None,
            signatures: None,
        },
    )?;
    testhooks::pause("read");

    let started = crate::progress::Started::now();
    let settled = settle_pending(
        &mut store,
        run,
        &stop,
        detector.as_ref(),
        &topic.dedup,
        opts.lookup,
    )?;
    let compare_seconds = started.secs();
    testhooks::pause("dedup");
    let ruled = crate::review::queue::apply_standing_rules(&mut store, &topic.review.rules)?;
    let totals = collection::sync_collection(&store, &out)?;
    progress.stage(
        super::DEDUP_STAGE,
        &format!(
            "{} newcomers compared with the store and each other, {} duplicates, {} new contained pairs{}; {} in the collection",
            settled.settled,
            settled.duplicates,
            settled.contained,
            crate::review::queue::standing_summary(&ruled),
            totals.kept
        ),
        started,
        Some(settled.settled as u64),
    );
    store.set_meta("update_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(UpdateSummary {
        out,
        read: ingested.read,
        new: ingested.new,
        skipped: ingested.skipped,
        settled: settled.settled,
        kept: settled.kept,
        duplicates: settled.duplicates,
        new_review_pairs: settled.contained,
        compare_seconds,
        totals,
        stages: progress.stage_times(),
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

/// Compares every pending document with the settled store and with each other, and settles
/// them in one transaction. Cost follows the pending documents and their partners, not the store
/// (with `Lookup::Sql`).
///
/// The newcomers come first and the stored texts sharing a fingerprint with one of them after,
/// so the engine judges newcomer × newcomer and newcomer × stored pairs, never two stored
/// texts again; the keep rule sees stored kept texts as staying.
fn settle_pending(
    store: &mut Store,
    run: i64,
    stop: &StopWords,
    detector: &dyn Detector,
    settings: &DedupSettings,
    lookup: Lookup,
) -> Result<Settled> {
    let docs = store.document_metas_with_status(Status::Pending)?;
    if docs.is_empty() {
        return Ok(Settled::default());
    }
    let mut sig_map: FxHashMap<String, Vec<u64>> =
        store.signatures(Status::Pending)?.into_iter().collect();
    let mut sigs: Vec<Vec<u64>> = docs
        .iter()
        .map(|d| sig_map.remove(&d.id).unwrap_or_default())
        .collect();
    let mut partners = stored_partners(store, &sigs, detector, lookup)?;
    let n_new = docs.len();
    let mut sizes: Vec<Option<SigSize>> = sigs.iter().map(|s| detector.size_of(s)).collect();
    sizes.extend(partners.iter().map(|p| p.row.size));
    // Moved, not copied: a partner loaded whole (an older store) holds its whole signature.
    sigs.extend(partners.iter_mut().map(|p| std::mem::take(&mut p.sig)));
    let mut candidates: Vec<Candidate> = docs
        .iter()
        .map(|d| candidate(&d.id, d.words, d.source_rank, Standing::New))
        .collect();
    for p in &partners {
        let standing = if p.row.status == Status::Kept {
            Standing::Kept
        } else {
            Standing::Out
        };
        candidates.push(candidate(
            &p.row.id,
            p.row.words,
            p.row.source_rank,
            standing,
        ));
    }
    let engine = dedup::Engine {
        detector,
        thresholds: &settings.thresholds(),
        grey: &settings.grey_zone(),
        wanted: dedup::Wanted::Flagged,
    };
    let (path, docs_dir) = (store.path().to_path_buf(), store.docs_dir());
    let texts = super::Texts {
        fetch: &|need| {
            let num = |i: usize| match i.checked_sub(n_new) {
                None => docs[i].num,
                Some(stored) => partners[stored].row.num,
            };
            store.text_rows(&need.iter().map(|&i| num(i)).collect::<Vec<_>>())
        },
        read: &|rows: Vec<TextRow>| TextRow::texts(&rows, &path, &docs_dir),
    };
    let found = engine.find_sized(&sigs, sizes, n_new, &mut |need, shingle, sink| {
        super::feed_texts(need, shingle, sink, stop, &texts)
    })?;
    let (outcomes, mut stored) = settle(&candidates, &found.pairs);
    stored.sort_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
    let duplicates = outcomes
        .iter()
        .filter(|o| o.status == Status::Duplicate)
        .count();
    let result = Settled {
        settled: docs.len(),
        kept: docs.len() - duplicates,
        duplicates,
        contained: stored
            .iter()
            .filter(|p| p.verdict == Verdict::Contained)
            .count(),
    };
    store.record_update(&outcomes, &stored, run)?;
    Ok(result)
}

/// A stored (already settled) document that shares fingerprints with a newcomer.
struct Partner {
    row: StoredPartner,
    /// The fingerprints it shares with the newcomers when its sizes are known (all the engine
    /// reads of it, `Engine::find_sized`), else its whole signature; moved to the engine's
    /// list of signatures once read.
    sig: Vec<u64>,
}

/// The settled documents sharing at least one fingerprint with a newcomer, by row number.
///
/// Their whole signatures are loaded only where the store lacks their sizes: 1,000 newcomers to
/// a 100,000-document store share 51,000 postings with 12,000 stored documents, whose
/// signatures hold 743,000.
fn stored_partners(
    store: &mut Store,
    sigs: &[Vec<u64>],
    detector: &dyn Detector,
    lookup: Lookup,
) -> Result<Vec<Partner>> {
    let pending: FxHashSet<i64> = store
        .nums_with_status(Status::Pending)?
        .into_iter()
        .collect();
    // Near-copies among the newcomers share fingerprints: each is looked up once.
    let mut fps: Vec<u64> = sigs.iter().flatten().copied().collect();
    fps.sort_unstable();
    fps.dedup();
    let mut shared: Vec<(i64, u64)> = match lookup {
        Lookup::Sql => store.postings_of_fingerprints(&fps)?,
        Lookup::Memory => {
            let mut index: FxHashMap<u64, Vec<i64>> = FxHashMap::default();
            for (fp, num) in store.settled_postings()? {
                index.entry(fp).or_default().push(num);
            }
            let mut found: Vec<(i64, u64)> = fps
                .iter()
                .flat_map(|&fp| index.get(&fp).into_iter().flatten().map(move |&n| (n, fp)))
                .collect();
            found.sort_unstable();
            found
        }
    };
    shared.retain(|(n, _)| !pending.contains(n));
    let mut nums: Vec<i64> = shared.iter().map(|&(n, _)| n).collect();
    nums.dedup();
    let rows = store.partners(&nums)?;
    if rows.len() != nums.len() {
        anyhow::bail!("{}: posting of a missing document", store.path().display());
    }
    let unsized_nums: Vec<i64> = rows
        .iter()
        .filter(|r| r.size.is_none())
        .map(|r| r.num)
        .collect();
    let mut whole: FxHashMap<i64, Vec<u64>> =
        store.signatures_of(&unsized_nums)?.into_iter().collect();
    let mut partners = Vec::with_capacity(rows.len());
    let mut learnt = Vec::new();
    let mut at = 0;
    for mut row in rows {
        let start = at;
        while shared.get(at).is_some_and(|&(n, _)| n == row.num) {
            at += 1;
        }
        let sig = match row.size {
            Some(_) => shared[start..at].iter().map(|&(_, fp)| fp).collect(),
            None => {
                let sig = whole.remove(&row.num).unwrap_or_default();
                // Stored before the sizes were: they are filled in now, so the next update
                // loads less.
                row.size = detector.size_of(&sig);
                if let Some(size) = row.size {
                    learnt.push((row.num, size));
                }
                sig
            }
        };
        partners.push(Partner { row, sig });
    }
    if !learnt.is_empty() {
        store.record_signature_sizes(&learnt)?;
    }
    Ok(partners)
}
