//! The review log: every decision a curator (or a standing rule) takes is one entry — on one
//! pair, on a cluster, or on every pair a rule picks — and an entry can be undone as one.
//!
//! What a pair's decision is, and which documents review drops, is derived from the log in one
//! place ([`settle`]): a pair's decision is its latest decision whose entry is not undone, and a
//! document is out of the collection while any decided pair drops it. So deciding, changing a
//! decision, bulk rules and undo can never disagree about a document, whatever their order.

use crate::sign::Verdict;
use crate::store::queries::{pairs_of, Decision, ReviewPair};
use crate::store::{now, store_error, At, Status, Store};
use anyhow::{Context, Result};
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::FxHashSet;
use serde::Serialize;
use std::path::Path;

/// What an entry of the log decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// One pair (`review decide ID`, the page's pair view).
    Pair,
    /// The pending pairs of a cluster.
    Cluster,
    /// The pending pairs a `--where` rule picked.
    Rule,
    /// The pending pairs a standing rule of the topic picked, applied by build or update.
    Standing,
    /// The undoing of another entry.
    Undo,
}

impl EntryKind {
    /// The name stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Pair => "pair",
            EntryKind::Cluster => "cluster",
            EntryKind::Rule => "rule",
            EntryKind::Standing => "standing",
            EntryKind::Undo => "undo",
        }
    }

    fn parse(s: &str) -> Option<EntryKind> {
        Some(match s {
            "pair" => EntryKind::Pair,
            "cluster" => EntryKind::Cluster,
            "rule" => EntryKind::Rule,
            "standing" => EntryKind::Standing,
            "undo" => EntryKind::Undo,
            _ => return None,
        })
    }
}

/// One entry of the review log.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// Entry id (what `review undo` takes).
    pub id: i64,
    /// What it decided on.
    pub kind: EntryKind,
    /// The pair id, the cluster id, the rule as written, or the entry undone.
    pub target: String,
    /// The decision; `None` for an undo.
    pub decision: Option<String>,
    /// The curator's note.
    pub note: Option<String>,
    /// Pairs it decided (or, for an undo, pairs it gave back their earlier state).
    pub pairs: i64,
    /// When (seconds since the epoch).
    pub at: String,
    /// The entry that undid this one.
    pub undone_by: Option<i64>,
}

/// What deciding or undoing changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// The log entry written.
    pub entry: i64,
    /// Pairs decided (or restored).
    pub pairs: usize,
    /// Documents that left the collection.
    pub dropped: usize,
    /// Documents that came back.
    pub restored: usize,
}

fn bad(msg: String) -> anyhow::Error {
    anyhow::Error::new(crate::error::BadInput(msg))
}

impl Store {
    /// Records one decision on many pairs as one log entry and applies it, in one transaction.
    /// Every pair must be a contained pair.
    pub fn record_decisions(
        &mut self,
        kind: EntryKind,
        target: &str,
        decision: Decision,
        note: Option<&str>,
        pairs: &[i64],
    ) -> Result<Applied> {
        let path = self.path.clone();
        let tx = self.conn.transaction().at(&path)?;
        for &id in pairs {
            let verdict: Option<Verdict> = tx
                .query_row("SELECT verdict FROM pairs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .at(&path)?;
            match verdict {
                None => return Err(bad(format!("{}: no pair {id}", path.display()))),
                Some(Verdict::Contained) => {}
                Some(v) => {
                    return Err(bad(format!(
                        "pair {id} is a {} pair, not one for review (only contained pairs are)",
                        v.as_str()
                    )))
                }
            }
        }
        let at = now();
        tx.execute(
            "INSERT INTO review_log(kind, target, decision, note, pairs, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                kind.as_str(),
                target,
                decision.as_str(),
                note,
                pairs.len() as i64,
                at
            ],
        )
        .at(&path)?;
        let entry = tx.last_insert_rowid();
        {
            let mut ins = tx
                .prepare_cached(
                    "INSERT INTO decisions(pair, decision, note, decided_at, entry)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .at(&path)?;
            for &id in pairs {
                ins.execute(params![id, decision.as_str(), note, at, entry])
                    .at(&path)?;
            }
        }
        let (dropped, restored) = settle(&tx, &path, pairs)?;
        tx.commit()
            .map_err(|e| store_error(&path, e))
            .with_context(|| format!("{}: cannot save the decision", path.display()))?;
        Ok(Applied {
            entry,
            pairs: pairs.len(),
            dropped,
            restored,
        })
    }

    /// Undoes an entry: each of its pairs goes back to its latest decision from an entry still
    /// standing (or to undecided), and documents follow. The undo is itself an entry.
    pub fn undo_entry(&mut self, entry: i64) -> Result<Applied> {
        let path = self.path.clone();
        let e = self
            .log_entry(entry)?
            .ok_or_else(|| bad(format!("{}: no review log entry {entry}", path.display())))?;
        if let Some(by) = e.undone_by {
            return Err(bad(format!(
                "entry {entry} was already undone by entry {by}"
            )));
        }
        if e.kind == EntryKind::Undo {
            return Err(bad(format!(
                "entry {entry} is an undo; decide again instead of undoing an undo"
            )));
        }
        let tx = self.conn.transaction().at(&path)?;
        let pairs: Vec<i64> = {
            let mut stmt = tx
                .prepare("SELECT DISTINCT pair FROM decisions WHERE entry = ?1 ORDER BY pair")
                .at(&path)?;
            let rows = stmt.query_map([entry], |r| r.get(0)).at(&path)?;
            rows.collect::<rusqlite::Result<Vec<i64>>>().at(&path)?
        };
        tx.execute(
            "INSERT INTO review_log(kind, target, decision, note, pairs, at)
             VALUES (?1, ?2, NULL, NULL, ?3, ?4)",
            params![
                EntryKind::Undo.as_str(),
                entry.to_string(),
                pairs.len() as i64,
                now()
            ],
        )
        .at(&path)?;
        let undo = tx.last_insert_rowid();
        tx.execute(
            "UPDATE review_log SET undone_by = ?1 WHERE id = ?2",
            params![undo, entry],
        )
        .at(&path)?;
        let (dropped, restored) = settle(&tx, &path, &pairs)?;
        tx.commit()
            .map_err(|e| store_error(&path, e))
            .with_context(|| format!("{}: cannot save the undo", path.display()))?;
        Ok(Applied {
            entry: undo,
            pairs: pairs.len(),
            dropped,
            restored,
        })
    }

    /// The review log, oldest first.
    pub fn review_log(&self) -> Result<Vec<LogEntry>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {LOG_COLS} FROM review_log ORDER BY id"))
            .at(&self.path)?;
        let rows = stmt.query_map([], log_row).at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }

    /// One entry of the review log.
    fn log_entry(&self, id: i64) -> Result<Option<LogEntry>> {
        self.conn
            .query_row(
                &format!("SELECT {LOG_COLS} FROM review_log WHERE id = ?1"),
                [id],
                log_row,
            )
            .optional()
            .at(&self.path)
    }
}

const LOG_COLS: &str = "id, kind, target, decision, note, pairs, at, undone_by";

fn log_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LogEntry> {
    let kind: String = r.get(1)?;
    Ok(LogEntry {
        id: r.get(0)?,
        kind: EntryKind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                1,
                rusqlite::types::Type::Text,
                format!("unknown review log kind {kind:?}").into(),
            )
        })?,
        target: r.get(2)?,
        decision: r.get(3)?,
        note: r.get(4)?,
        pairs: r.get(5)?,
        at: r.get(6)?,
        undone_by: r.get(7)?,
    })
}

/// The document a decided pair takes out of the collection, if any.
pub fn dropped_by_decision(p: &ReviewPair) -> Option<&str> {
    match p.decision.as_deref().and_then(Decision::parse)? {
        Decision::KeepBoth => None,
        Decision::DropContained => Some(p.contained()),
        Decision::DropContainer => Some(p.container()),
    }
}

/// Brings the given pairs' decisions and their documents' statuses in line with the log.
/// Returns (documents dropped, documents restored).
fn settle(conn: &Connection, path: &Path, pairs: &[i64]) -> Result<(usize, usize)> {
    let mut docs: Vec<String> = Vec::new();
    let mut seen: FxHashSet<String> = FxHashSet::default();
    {
        let mut latest = conn
            .prepare_cached(
                "SELECT d.decision, d.note, d.decided_at FROM decisions d
                 LEFT JOIN review_log e ON e.id = d.entry
                 WHERE d.pair = ?1 AND e.undone_by IS NULL ORDER BY d.id DESC LIMIT 1",
            )
            .at(path)?;
        let mut set = conn
            .prepare_cached(
                "UPDATE pairs SET decision = ?1, note = ?2, decided_at = ?3 WHERE id = ?4",
            )
            .at(path)?;
        let mut ends = conn
            .prepare_cached("SELECT a, b FROM pairs WHERE id = ?1")
            .at(path)?;
        for &id in pairs {
            let now: Option<(String, Option<String>, String)> = latest
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional()
                .at(path)?;
            let (d, n, at) = match now {
                Some((d, n, at)) => (Some(d), n, Some(at)),
                None => (None, None, None),
            };
            set.execute(params![d, n, at, id]).at(path)?;
            let (a, b): (String, String) = ends
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .at(path)?;
            for x in [a, b] {
                if seen.insert(x.clone()) {
                    docs.push(x);
                }
            }
        }
    }
    let (mut dropped, mut restored) = (0, 0);
    for doc in &docs {
        let state: Option<(Status, Option<i64>)> = conn
            .query_row(
                "SELECT status, dropped_by FROM documents WHERE id = ?1",
                [doc],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .at(path)?;
        let Some((status, by)) = state else { continue };
        let droppers: Vec<ReviewPair> = pairs_of(conn, path, doc)?
            .into_iter()
            .filter(|p| p.pair.verdict == Verdict::Contained && dropped_by_decision(p) == Some(doc))
            .collect();
        let still_dropped_by_same = by.is_some_and(|b| droppers.iter().any(|p| p.pair.id == b));
        match droppers.first() {
            // Only a text in the collection can be dropped: a duplicate is out already.
            Some(p)
                if status == Status::Kept
                    || (status == Status::Dropped && !still_dropped_by_same) =>
            {
                let decision = p.decision.as_deref().unwrap_or_default();
                let other = if p.contained() == doc {
                    p.container()
                } else {
                    p.contained()
                };
                conn.execute(
                    "UPDATE documents SET status = ?1, dropped_by = ?2, reason = ?3 WHERE id = ?4",
                    params![
                        Status::Dropped,
                        p.pair.id,
                        format!("review pair {}: {decision} (other text {other})", p.pair.id),
                        doc
                    ],
                )
                .at(path)?;
                if status == Status::Kept {
                    dropped += 1;
                }
            }
            None if status == Status::Dropped && by.is_some() => {
                conn.execute(
                    "UPDATE documents SET status = ?1, dropped_by = NULL, reason = NULL
                     WHERE id = ?2",
                    params![Status::Kept, doc],
                )
                .at(path)?;
                restored += 1;
            }
            _ => {}
        }
    }
    Ok((dropped, restored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Outcome, StoredPair};

    /// A store where `x` is contained in `y` (pair 1) and in `z` (pair 2), and `y` in `z` (pair 3).
    fn chain() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let docs: Vec<_> = ["x", "y", "z"]
            .iter()
            .map(|id| (crate::store::tests::doc(id, "t"), vec![1]))
            .collect();
        s.insert_documents(run, docs, None).unwrap();
        let contained = |a: &str, b: &str| StoredPair {
            id: 0,
            a: a.into(),
            b: b.into(),
            inter: 30,
            resemblance: 0.3,
            cont_a_in_b: 0.9,
            cont_b_in_a: 0.2,
            verdict: Verdict::Contained,
            verified: false,
            shared: 750,
        };
        let kept = |id: &str| Outcome {
            id: id.into(),
            status: Status::Kept,
            duplicate_of: None,
        };
        s.record_dedup(
            run,
            &[kept("x"), kept("y"), kept("z")],
            &[
                contained("x", "y"),
                contained("x", "z"),
                contained("y", "z"),
            ],
        )
        .unwrap();
        (dir, s)
    }

    fn status(s: &Store, id: &str) -> (Status, Option<i64>) {
        let m = s.document_meta(id).unwrap().unwrap();
        (m.status, m.dropped_by)
    }

    #[test]
    fn a_text_stays_out_while_any_decision_drops_it() {
        let (_d, mut s) = chain();
        let one = s
            .record_decisions(EntryKind::Pair, "1", Decision::DropContained, None, &[1])
            .unwrap();
        assert_eq!((one.dropped, one.restored), (1, 0));
        assert_eq!(status(&s, "x"), (Status::Dropped, Some(1)));
        // Pair 2 drops x as well; changing pair 1 to keep-both must not bring x back.
        s.record_decisions(EntryKind::Pair, "2", Decision::DropContained, None, &[2])
            .unwrap();
        let back = s
            .record_decisions(EntryKind::Pair, "1", Decision::KeepBoth, None, &[1])
            .unwrap();
        assert_eq!(back.restored, 0);
        assert_eq!(status(&s, "x"), (Status::Dropped, Some(2)));
        s.record_decisions(EntryKind::Pair, "2", Decision::KeepBoth, None, &[2])
            .unwrap();
        assert_eq!(status(&s, "x"), (Status::Kept, None));
    }

    #[test]
    fn a_bulk_entry_is_undone_as_one_and_earlier_decisions_return() {
        let (_d, mut s) = chain();
        s.record_decisions(
            EntryKind::Pair,
            "3",
            Decision::KeepBoth,
            Some("chapters"),
            &[3],
        )
        .unwrap();
        let bulk = s
            .record_decisions(
                EntryKind::Rule,
                "cont >= 0.9",
                Decision::DropContained,
                None,
                &[1, 2, 3],
            )
            .unwrap();
        assert_eq!((bulk.pairs, bulk.dropped), (3, 2));
        assert_eq!(status(&s, "y").0, Status::Dropped);
        let undo = s.undo_entry(bulk.entry).unwrap();
        assert_eq!((undo.pairs, undo.restored), (3, 2));
        assert_eq!(status(&s, "x"), (Status::Kept, None));
        // Pair 3 goes back to the decision before the rule, with its note; 1 and 2 to pending.
        let p3 = s.review_pair(3).unwrap().unwrap();
        assert_eq!(p3.decision.as_deref(), Some("keep-both"));
        assert_eq!(p3.note.as_deref(), Some("chapters"));
        assert!(s.review_pair(1).unwrap().unwrap().decision.is_none());
        let log = s.review_log().unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(log[1].undone_by, Some(undo.entry));
        assert_eq!(log[2].kind, EntryKind::Undo);
        assert_eq!(log[2].target, bulk.entry.to_string());
        // History keeps the undone decisions, marked.
        let hist = s.decision_log(1).unwrap();
        assert_eq!(hist.len(), 1);
        assert_eq!(hist[0].undone_by, Some(undo.entry));
        // Twice, or an undo itself: refused, nothing changes.
        assert!(s.undo_entry(bulk.entry).is_err());
        assert!(s.undo_entry(undo.entry).is_err());
        assert!(s.undo_entry(99).is_err());
    }

    #[test]
    fn decisions_of_an_older_store_become_entries_that_undo() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        {
            let c = Connection::open(&p).unwrap();
            for sql in &crate::store::MIGRATIONS[..6] {
                c.execute_batch(sql).unwrap();
            }
            c.pragma_update(None, "user_version", 6).unwrap();
            c.execute_batch(
                "INSERT INTO runs(id, command, params, started_at, status)
                    VALUES (1, 'build', '{}', '0', 'done');
                 INSERT INTO documents(id, source, source_rank, locator, raw_bytes, text, words,
                    sha256, status, added_run, dropped_by)
                    VALUES ('x', 'local', 0, 'x.txt', 3, 'x y', 2, '00', 'dropped', 1, 1),
                           ('y', 'local', 0, 'y.txt', 3, 'x y z', 3, '01', 'kept', 1, NULL);
                 INSERT INTO pairs(id, a, b, inter, resemblance, cont_a_in_b, cont_b_in_a,
                    verdict, verified, decision, decided_at, run)
                    VALUES (1, 'x', 'y', 9, 0.6, 1.0, 0.6, 'contained', 0, 'drop-contained', '5', 1);
                 INSERT INTO decisions(pair, decision, decided_at) VALUES (1, 'drop-contained', '5');",
            )
            .unwrap();
        }
        let mut s = Store::open(&p).unwrap();
        let log = s.review_log().unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(
            (log[0].kind, log[0].target.as_str()),
            (EntryKind::Pair, "1")
        );
        // The stored pair has no shared-shingle figure: its shared elements stand in.
        assert_eq!(s.review_pair(1).unwrap().unwrap().pair.shared, 9);
        s.undo_entry(log[0].id).unwrap();
        assert_eq!(status(&s, "x"), (Status::Kept, None));
    }

    #[test]
    fn only_contained_pairs_are_decided_and_a_refusal_changes_nothing() {
        let (_d, mut s) = chain();
        assert!(s
            .record_decisions(
                EntryKind::Rule,
                "r",
                Decision::DropContained,
                None,
                &[1, 42]
            )
            .is_err());
        assert_eq!(status(&s, "x").0, Status::Kept);
        assert!(s.review_log().unwrap().is_empty());
    }

    #[test]
    fn kinds_round_trip() {
        for k in [
            EntryKind::Pair,
            EntryKind::Cluster,
            EntryKind::Rule,
            EntryKind::Standing,
            EntryKind::Undo,
        ] {
            assert_eq!(EntryKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(EntryKind::parse("bulk"), None);
    }
}
