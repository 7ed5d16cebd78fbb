//! `collect doctor DIR --rebuild`: a new store from `manifest.jsonl` and `docs/` (plus
//! whatever rows the damaged store still gives), signed and paired by the same code as a build,
//! written under a temporary name and renamed into place; the damaged store is kept aside.

use super::ingest::{Preparer, BATCH};
use super::{detector_of, pairs_among, stored_pair};
use crate::canon::{CanonText, Canonicalizer};
use crate::collection::doctor::{diagnose, find_text, read_manifest, ManifestEntry, TextSource};
use crate::collection::{self, store_path, STORE_FILE};
use crate::error::bad_input;
use crate::store::health::Salvage;
use crate::store::{Document, Status, Store};
use crate::topic::Topic;
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a rebuild did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RebuildSummary {
    /// Whether a new store was written (not when the store was sound).
    pub rebuilt: bool,
    /// Where the damaged store was moved (none when it was missing).
    pub kept_aside: Option<PathBuf>,
    /// Documents in the new store, by status.
    pub documents: BTreeMap<String, u64>,
    /// Texts taken from `docs/`.
    pub texts_from_docs: u64,
    /// Texts read out of the damaged store.
    pub texts_from_store: u64,
    /// Documents stored without their text (not kept; their standing comes from the manifest).
    pub texts_lost: u64,
    /// Kept documents left out because their text is nowhere: `collect update` reads them
    /// again from the topic's sources.
    pub kept_left_out: Vec<String>,
    /// Duplicate and contained pairs found again among the texts there are.
    pub pairs: u64,
    /// Review decisions carried over from the damaged store.
    pub decisions_restored: u64,
}

/// Where the rebuild writes before the rename.
fn temp_path(dir: &Path) -> PathBuf {
    dir.join(format!("{STORE_FILE}.rebuilding"))
}

fn sidecars(p: &Path) -> [PathBuf; 2] {
    let s = p.as_os_str().to_string_lossy();
    [
        PathBuf::from(format!("{s}-wal")),
        PathBuf::from(format!("{s}-shm")),
    ]
}

/// The detector key a collection's files record: the damaged store's meta if it still reads,
/// else the header of `report.md`.
fn recorded_detector(dir: &Path, salvage: &Salvage) -> Option<String> {
    salvage.meta("detector").or_else(|| {
        let report = std::fs::read_to_string(dir.join("report.md")).ok()?;
        let rest = report.split("Detector `").nth(1)?;
        Some(rest.split('`').next()?.to_string())
    })
}

/// Rebuilds the store of the collection in `dir` with `topic`'s settings, when it is damaged
/// or missing; a sound store is left alone.
pub fn rebuild(dir: &Path, topic: &Topic) -> Result<RebuildSummary> {
    let diag = diagnose(dir)?;
    if diag.healthy() {
        return Ok(RebuildSummary::default());
    }
    let Some(manifest) = read_manifest(dir)? else {
        return Err(bad_input(format!(
            "{}: no {} to rebuild the store from",
            dir.display(),
            collection::MANIFEST_FILE
        )));
    };
    let path = store_path(dir);
    let salvage = Salvage::open(&path);
    let mut detector = detector_of(topic)?;
    if let Some(key) = recorded_detector(dir, &salvage) {
        if key != topic.dedup.signature_key(detector.as_ref()) {
            return Err(bad_input(format!(
                "{}: the collection was built with detector {key}, the topic asks for {}; \
                 give the topic file the collection was built from",
                dir.display(),
                topic.dedup.signature_key(detector.as_ref())
            )));
        }
    }
    let stop = topic
        .dedup
        .canon_words(&topic.languages)
        .map_err(anyhow::Error::msg)?;
    let mut summary = RebuildSummary {
        rebuilt: true,
        ..RebuildSummary::default()
    };
    let docs = documents(dir, topic, &salvage, &manifest.entries, &mut summary);

    let tmp = temp_path(dir);
    // Left by a rebuild that was stopped: ours, and never the store itself.
    for p in [tmp.clone()].iter().chain(sidecars(&tmp).iter()) {
        if p.exists() {
            std::fs::remove_file(p).with_context(|| format!("{}: cannot remove", p.display()))?;
        }
    }
    {
        let mut store = Store::open(&tmp)?;
        let run = store.begin_run(
            "doctor-rebuild",
            &serde_json::json!({"topic": topic.name, "detector": topic.dedup.signature_key(detector.as_ref())}).to_string(),
        )?;
        store.defer_postings_index()?;
        let preparer = Preparer::of(topic, &stop, detector.as_ref());
        for chunk in docs.chunks(BATCH) {
            let signed: Vec<(Document, Vec<u64>)> = chunk
                .par_iter()
                .map_init(
                    || (Canonicalizer::new(&stop), CanonText::default()),
                    |(canon, canonical), d| {
                        let sig = if d.text.is_empty() {
                            Vec::new()
                        } else {
                            preparer.signature(canon, canonical, &d.text, d.status)
                        };
                        (d.clone(), sig)
                    },
                )
                .collect();
            store.insert_documents(run, signed, Some(preparer.detector))?;
        }
        store.index_postings()?;
        let with_text: Vec<Document> = docs
            .iter()
            .filter(|d| !d.text.is_empty() && !d.status.is_filtered_out())
            .cloned()
            .collect();
        let ids: Vec<&str> = with_text.iter().map(|d| d.id.as_str()).collect();
        let pairs = pairs_among(
            &store,
            &ids,
            &super::Texts {
                fetch: &|need| Ok(need.iter().copied().map(Some).collect()),
                read: &|is: Vec<usize>| {
                    Ok(is
                        .into_iter()
                        .map(|i| Some(with_text[i].text.clone()))
                        .collect())
                },
            },
            &stop,
            &mut detector,
            &topic.dedup,
            Default::default(),
        )?;
        let stored: Vec<_> = pairs
            .iter()
            .filter(|p| p.verdict.is_recorded())
            .map(|p| stored_pair(&with_text[p.a as usize].id, &with_text[p.b as usize].id, p))
            .collect();
        summary.pairs = stored.len() as u64;
        store.record_update(&[], &stored, run)?;
        for d in salvage.decisions() {
            if store.restore_decision(&d)? {
                summary.decisions_restored += 1;
            }
        }
        collection::remember_topic(&store, topic)?;
        store.set_meta("topic", &topic.name)?;
        store.set_meta("detector", &topic.dedup.signature_key(detector.as_ref()))?;
        // The kept texts were read from their files in `docs/`: one copy is enough.
        collection::release_kept_texts(&store, &Default::default(), None, None)?;
        store.set_meta("build_state", "complete")?;
        store.finish_run(run, "ok")?;
        store.checkpoint()?;
    }
    summary.kept_aside = put_aside(&path)?;
    std::fs::rename(&tmp, &path).with_context(|| {
        format!(
            "{}: cannot move the rebuilt store into place (it is at {})",
            path.display(),
            tmp.display()
        )
    })?;
    for d in &docs {
        *summary
            .documents
            .entry(d.status.as_str().to_string())
            .or_default() += 1;
    }
    Ok(summary)
}

/// The documents of the new store, from the manifest: texts from `docs/` or the damaged
/// store; what the manifest does not record (source rank, filter reason, bytes before
/// cleaning) from the damaged store, the topic, or the filter rerun on the manifest's figures.
fn documents(
    dir: &Path,
    topic: &Topic,
    salvage: &Salvage,
    entries: &[ManifestEntry],
    summary: &mut RebuildSummary,
) -> Vec<Document> {
    let names = topic.source_names();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let Some(status) = e.status() else { continue };
        let text = match find_text(dir, salvage, e) {
            TextSource::Docs(t) => {
                summary.texts_from_docs += 1;
                t
            }
            TextSource::Store(t) => {
                summary.texts_from_store += 1;
                t
            }
            TextSource::Lost if status == Status::Kept => {
                summary.kept_left_out.push(e.id.clone());
                continue;
            }
            TextSource::Lost => {
                summary.texts_lost += 1;
                String::new()
            }
        };
        let row = salvage.document(&e.id);
        let raw_bytes = row
            .as_ref()
            .map(|r| r.raw_bytes)
            .unwrap_or(text.len() as u64);
        let reason = row
            .and_then(|r| r.reason)
            .or_else(|| e.reason.clone())
            .or_else(|| {
                // The manifest does not say whether the cleaner found a defect: none is assumed.
                let (st, why) = crate::filter::verdict(
                    &topic.filter,
                    &topic.languages,
                    e.words,
                    e.lang.as_deref(),
                    None,
                );
                if st == status {
                    why
                } else if status == Status::Dropped {
                    Some("dropped in review (decision not recoverable)".into())
                } else {
                    None
                }
            });
        out.push(Document {
            id: e.id.clone(),
            source: e.source.clone(),
            source_rank: names
                .iter()
                .position(|n| n == &e.source)
                .unwrap_or(names.len()) as u32,
            locator: e.locator.clone(),
            url: e.url.clone(),
            title: e.title.clone(),
            lang: e.lang.clone(),
            raw_bytes,
            text,
            words: e.words,
            sha256: e.sha256.clone(),
            status,
            reason,
            duplicate_of: e.duplicate_of.clone(),
            date: e.date.clone(),
            // The terms are not in the manifest; `collect explain` shows the score alone.
            relevance: e.relevance,
            relevance_terms: None,
            format: e.format.clone(),
        });
    }
    out
}

/// Moves the damaged store (and its WAL, which may hold committed pages) aside under a name
/// with the time; nothing of it is deleted.
fn put_aside(path: &Path) -> Result<Option<PathBuf>> {
    if !path.exists() {
        return Ok(None);
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = path.as_os_str().to_string_lossy().into_owned();
    let mut aside = PathBuf::from(format!("{base}.corrupt-{secs}"));
    let mut k = 2;
    while aside.exists() {
        aside = PathBuf::from(format!("{base}.corrupt-{secs}-{k}"));
        k += 1;
    }
    std::fs::rename(path, &aside).with_context(|| {
        format!(
            "{}: cannot move the damaged store aside to {}",
            path.display(),
            aside.display()
        )
    })?;
    for (from, to) in sidecars(path).iter().zip(sidecars(&aside).iter()) {
        if from.exists() {
            std::fs::rename(from, to)
                .with_context(|| format!("{}: cannot move aside", from.display()))?;
        }
    }
    Ok(Some(aside))
}
