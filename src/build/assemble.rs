//! `collect spark-job`'s last step: the collection directory from what a distributed run
//! wrote (prepared documents, final pairs, the keep rule's choices), through the store and
//! [`collection::write_collection`] as `build` does, so both give the same manifest, `docs/`,
//! report and review queue.
//!
//! The parts directory holds three folders of JSON-line part files (Spark's `part-*`):
//! `documents` (the worker's records, and skipped lines), `pairs` (final recorded pairs) and
//! `keep` (`{component, id, duplicate_of}` from `collect keep`).

use super::{outcome_of, BuildSummary};
use crate::collection;
use crate::dedup::distributed::PairRecord;
use crate::error::{bad_input, Skip, SkipReason};
use crate::sign::Detector;
use crate::store::kept::PackedAhead;
use crate::store::{Document, Outcome, Status, Store, StoredPair};
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Documents inserted per transaction, as a build's ingest batches them.
const BATCH: usize = super::ingest::BATCH;

/// A skipped line as the worker (or the job, for an id repeated across partitions) wrote it.
#[derive(Debug, serde::Deserialize)]
struct SkippedLine {
    line: usize,
    #[serde(default)]
    column: Option<usize>,
    source: String,
    #[serde(default)]
    skipped: Option<String>,
    #[serde(default)]
    detail: Option<String>,
    /// A web archive's record: its offset, and the archive.
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    path: Option<PathBuf>,
    /// Set by the job for a record whose id an earlier partition has.
    #[serde(default)]
    duplicate_id: Option<String>,
}

/// One keep-rule choice.
#[derive(Debug, serde::Deserialize)]
struct KeepLine {
    id: String,
    duplicate_of: Option<String>,
}

/// The part files of `dir/name`, in name order (Spark numbers them in partition order).
fn part_files(dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    let folder = dir.join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .with_context(|| format!("{}: cannot read the job's output", folder.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("part-"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Calls `f(place, line)` on every non-blank line of the part files of `dir/name`.
fn each_line(dir: &Path, name: &str, mut f: impl FnMut(&str, &str) -> Result<()>) -> Result<()> {
    for file in part_files(dir, name)? {
        let reader = std::io::BufReader::new(
            std::fs::File::open(&file)
                .with_context(|| format!("{}: cannot open", file.display()))?,
        );
        for (i, line) in reader.lines().enumerate() {
            let place = format!("{}:{}", file.display(), i + 1);
            let line = line.with_context(|| format!("{place}: cannot read"))?;
            if !line.trim().is_empty() {
                f(&place, &line)?;
            }
        }
    }
    Ok(())
}

/// The path a build names a source's skipped lines by.
fn source_paths(topic: &Topic) -> FxHashMap<String, PathBuf> {
    topic
        .source_names()
        .into_iter()
        .zip(&topic.sources)
        .filter_map(|(name, spec)| match spec {
            SourceSpec::Local(l) => Some((name, topic.resolve(&l.path))),
            _ => None,
        })
        .collect()
}

/// What reading the job's documents stored.
struct Stored {
    /// Documents stored.
    read: usize,
    /// Inputs skipped that lose input.
    skipped: usize,
    /// Ids of the stored documents the dedup stage compares.
    compared: Vec<String>,
}

impl Stored {
    fn summary(&self, out: &Path, totals: collection::Counts) -> BuildSummary {
        BuildSummary {
            out: out.to_path_buf(),
            resumed: false,
            read: self.read,
            skipped: self.skipped,
            totals,
            stages: Vec::new(),
        }
    }
}

/// Stores the job's documents (in batches, as a build's ingest does) and each source's
/// skipped lines.
fn store_documents(
    store: &mut Store,
    run: i64,
    topic: &Topic,
    detector: &dyn Detector,
    parts: &Path,
) -> Result<Stored> {
    let paths = source_paths(topic);
    let mut skips: BTreeMap<String, Vec<Skip>> = BTreeMap::new();
    let mut batch: Vec<(Document, Vec<u64>)> = Vec::with_capacity(BATCH);
    let mut read = 0usize;
    let mut compared: Vec<String> = Vec::new();
    each_line(parts, "documents", |place, line| {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| bad_input(format!("{place}: {e}")))?;
        if v.get("id").is_some() {
            let rec: super::worker::PreparedRecord =
                serde_json::from_value(v).map_err(|e| bad_input(format!("{place}: {e}")))?;
            let (doc, sig) = rec
                .into_stored()
                .map_err(|e| bad_input(format!("{place}: {e}")))?;
            read += 1;
            if !doc.status.is_filtered_out() {
                compared.push(doc.id.clone());
            }
            batch.push((doc, sig));
            if batch.len() >= BATCH {
                store.insert_documents(run, std::mem::take(&mut batch), Some(detector))?;
            }
            return Ok(());
        }
        let s: SkippedLine =
            serde_json::from_value(v).map_err(|e| bad_input(format!("{place}: {e}")))?;
        let path = s
            .path
            .clone()
            .or_else(|| paths.get(&s.source).cloned())
            .ok_or_else(|| {
                bad_input(format!(
                    "{place}: the topic has no local source `{}`",
                    s.source
                ))
            })?;
        let skip = match (&s.duplicate_id, &s.skipped) {
            (Some(id), _) => crate::readers::local::duplicate_id_skip(&path, s.line, id),
            (None, Some(reason)) => Skip {
                path,
                line: (s.offset.is_none()).then_some(s.line),
                column: s.column,
                offset: s.offset,
                reason: SkipReason::parse(reason)
                    .ok_or_else(|| bad_input(format!("{place}: unknown skip reason `{reason}`")))?,
                detail: s.detail.clone().unwrap_or_default(),
            },
            (None, None) => {
                return Err(bad_input(format!(
                    "{place}: neither a document nor a skipped line"
                )))
            }
        };
        skips.entry(s.source).or_default().push(skip);
        Ok(())
    })?;
    store.insert_documents(run, batch, Some(detector))?;
    let mut skipped = 0;
    for name in topic.source_names() {
        let mut list = skips.remove(&name).unwrap_or_default();
        list.sort_by(|x, y| (&x.path, x.line, x.offset).cmp(&(&y.path, y.line, y.offset)));
        skipped += list.iter().filter(|s| s.reason.loses_input()).count();
        store.replace_skipped(&name, &list)?;
    }
    Ok(Stored {
        read,
        skipped,
        compared,
    })
}

/// The job's recorded pairs, in the order a build stores them: by the ids of both documents.
fn read_pairs(parts: &Path) -> Result<Vec<StoredPair>> {
    let mut pairs: Vec<StoredPair> = Vec::new();
    each_line(parts, "pairs", |place, line| {
        let p: PairRecord =
            serde_json::from_str(line).map_err(|e| bad_input(format!("{place}: {e}")))?;
        if p.recorded {
            pairs.push(StoredPair {
                id: 0,
                a: p.a,
                b: p.b,
                inter: p.inter,
                resemblance: p.resemblance,
                cont_a_in_b: p.cont_a_in_b,
                cont_b_in_a: p.cont_b_in_a,
                verdict: p.verdict,
                verified: p.verified,
                shared: p.shared,
            });
        }
        Ok(())
    })?;
    pairs.sort_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
    Ok(pairs)
}

/// The status of every compared newcomer from the keep rule's choices: every one it did not
/// drop stays, as `build`'s settle decides.
fn read_choices(parts: &Path, compared: Vec<String>) -> Result<Vec<Outcome>> {
    let mut duplicate_of: FxHashMap<String, String> = FxHashMap::default();
    each_line(parts, "keep", |place, line| {
        let k: KeepLine =
            serde_json::from_str(line).map_err(|e| bad_input(format!("{place}: {e}")))?;
        if let Some(d) = k.duplicate_of {
            duplicate_of.insert(k.id, d);
        }
        Ok(())
    })?;
    let outcomes = compared
        .into_iter()
        .map(|id| {
            let dup = duplicate_of.remove(&id);
            outcome_of(id, dup)
        })
        .collect();
    if let Some((id, _)) = duplicate_of.into_iter().next() {
        return Err(bad_input(format!(
            "{}: the keep rule drops {id}, which is no newcomer the job compared",
            parts.join("keep").display()
        )));
    }
    Ok(outcomes)
}

/// Whether `out` holds a complete collection (a build or an assembly that ran to its end).
pub fn is_complete(out: &Path) -> Result<bool> {
    let store_path = collection::store_path(out);
    if !store_path.exists() {
        return Ok(false);
    }
    let state = Store::open_read_only(&store_path)?.meta("build_state")?;
    Ok(state.as_deref() == Some("complete"))
}

/// Writes the collection of `topic` into `out` from the job's `parts`, as `collect build`.
pub fn assemble(topic: &Topic, parts: &Path, out: &Path, force: bool) -> Result<BuildSummary> {
    let store_path = collection::store_path(out);
    if store_path.exists() {
        if !force && is_complete(out)? {
            return Err(crate::error::CollectionExists(out.to_path_buf()).into());
        }
        // An assembly that stopped half-way starts over: the job's output is all there.
        collection::remove_collection_files(out)?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut store = Store::open(&store_path)?;
    let detector = super::detector_of(topic)?;
    let key = topic.dedup.signature_key(detector.as_ref());
    store.set_meta("topic", &topic.name)?;
    store.set_meta("detector", &key)?;
    store.set_meta("build_state", "in-progress")?;
    let thresholds = topic.dedup.thresholds();
    let params = serde_json::json!({
        "topic": topic.name, "detector": key,
        "resemblance": thresholds.resemblance, "containment": thresholds.containment,
        "min_words": topic.filter.min_words, "parts": parts,
    });
    let run = store.begin_run("spark-job", &params.to_string())?;
    store.defer_postings_index()?;
    let mut stored = store_documents(&mut store, run, topic, detector.as_ref(), parts)?;
    let pairs = read_pairs(parts)?;
    let outcomes = read_choices(parts, std::mem::take(&mut stored.compared))?;
    store.record_dedup(run, &outcomes, &pairs)?;
    store.index_postings()?;
    crate::review::queue::apply_standing_rules(&mut store, &topic.review.rules)?;
    let totals = collection::write_collection(&store, topic, out, PackedAhead::default())?;
    store.set_meta("build_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(stored.summary(out, totals))
}

/// Grows the collection in `out` with the newcomers of a job run with `--update`, as
/// `collect update` does: they are stored, then settled in one transaction with the job's
/// pairs and choices, and the collection directory is brought up to date.
pub fn assemble_update(topic: &Topic, parts: &Path, out: &Path) -> Result<BuildSummary> {
    let mut store = open_built(topic, out)?;
    collection::remember_topic(&store, topic)?;
    store.set_meta("update_state", "in-progress")?;
    let params = serde_json::json!({"topic": topic.name, "parts": parts});
    let run = store.begin_run("spark-job --update", &params.to_string())?;
    store.index_postings()?;
    let detector = super::detector_of(topic)?;
    let mut stored = store_documents(&mut store, run, topic, detector.as_ref(), parts)?;
    let pairs = read_pairs(parts)?;
    let outcomes = read_choices(parts, std::mem::take(&mut stored.compared))?;
    store.record_update(&outcomes, &pairs, run)?;
    crate::review::queue::apply_standing_rules(&mut store, &topic.review.rules)?;
    let totals = collection::sync_collection(&store, out)?;
    store.set_meta("update_state", "complete")?;
    store.finish_run(run, "ok")?;
    Ok(stored.summary(out, totals))
}

/// The complete collection in `out` an update grows, built with the topic's detector.
pub fn open_built(topic: &Topic, out: &Path) -> Result<Store> {
    let store_path = collection::store_path(out);
    if !store_path.exists() {
        return Err(bad_input(format!(
            "{}: no collection here; build it first with `collect spark-job`",
            out.display()
        )));
    }
    collection::refuse_emptied_store(out)?;
    let store = Store::open(&store_path)?;
    if store.meta("build_state")?.as_deref() != Some("complete") {
        return Err(bad_input(format!(
            "{}: the build of this collection was interrupted; run it again",
            out.display()
        )));
    }
    let detector = super::detector_of(topic)?;
    let key = topic.dedup.signature_key(detector.as_ref());
    if let Some(stored) = store.meta("detector")? {
        if stored != key {
            return Err(bad_input(format!(
                "{}: the collection was built with detector {stored}, the topic now asks for {key}",
                store_path.display()
            )));
        }
    }
    Ok(store)
}

/// Writes `id<TAB>kept|out` for every settled document of the store: how each stands when
/// an update's keep rule meets it (a stored kept text stays; any other never drops a newcomer).
pub fn write_standing(store: &Store, path: &Path) -> Result<()> {
    use std::io::Write;
    let cannot = || format!("{}: cannot write", path.display());
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).with_context(cannot)?);
    for m in store.document_metas()? {
        let standing = match m.status {
            Status::Kept => "kept",
            Status::Pending => continue,
            _ => "out",
        };
        writeln!(w, "{}\t{standing}", m.id).with_context(cannot)?;
    }
    w.flush().with_context(cannot)?;
    Ok(())
}
