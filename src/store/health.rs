//! A look at a store file that changes nothing: whether SQLite finds it whole, whether the
//! schema is there, whether every row decodes; and what can still be read out of a damaged
//! store to rebuild from (`collect doctor`).

use super::kept::{kept_text, lives_in_docs, sha256_hex};
use super::signature::StoredSignature;
use super::text::StoredText;
use super::{At, Status, Store, StoreCorrupt, TABLES};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// At most this many problems of one kind are listed; the rest are counted.
const LISTED: usize = 10;

/// What [`examine`] found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Health {
    /// The store file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// What is wrong, one line each; empty when the store is sound.
    pub problems: Vec<String>,
    /// Documents whose row decodes and whose text (in the store, or in `docs/` for a kept one)
    /// matches its SHA-256, by status.
    pub documents: BTreeMap<String, u64>,
    /// Of those, documents held without their text: a rebuild found it nowhere (only the
    /// texts of kept documents live outside the store).
    pub without_text: u64,
    /// Pairs whose row decodes.
    pub pairs: u64,
    /// Review decisions recorded on pairs.
    pub decided_pairs: u64,
    /// Entries of the decision log.
    pub decisions: u64,
    /// Entries of the web frontier (`urls`).
    pub urls: u64,
}

impl Health {
    /// Whether nothing was found wrong.
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }
}

fn open_raw(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// Examines the store at `path` read-only: SQLite's own `integrity_check`, the schema, and a
/// decode of every document (its text checked against its SHA-256), pair and decision.
/// Never fails: what cannot be read is a problem found.
pub fn examine(path: &Path) -> Health {
    let mut h = Health {
        path: path.to_path_buf(),
        bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        ..Health::default()
    };
    if !path.is_file() {
        h.problems.push("the store file is missing".into());
        return h;
    }
    if h.bytes == 0 {
        h.problems
            .push("the file is empty (0 bytes): every table is gone".into());
        return h;
    }
    let store = match open_raw(path) {
        Ok(conn) => Store {
            conn,
            path: path.to_path_buf(),
        },
        Err(e) => {
            h.problems.push(format!("SQLite cannot open it: {e}"));
            return h;
        }
    };
    if let Err(e) = store.check_schema(false) {
        let what = match e.downcast_ref::<StoreCorrupt>() {
            Some(c) => c.what.clone(),
            None => format!("{e:#}"),
        };
        h.problems.push(what);
    }
    match integrity_check(&store.conn) {
        Ok(msgs) => {
            let n = msgs.len();
            for m in msgs.into_iter().take(LISTED) {
                h.problems.push(format!("integrity_check: {m}"));
            }
            if n > LISTED {
                h.problems
                    .push(format!("integrity_check: … and {} more", n - LISTED));
            }
        }
        Err(e) => {
            h.problems.push(format!("integrity_check cannot run: {e}"));
            // Not a database at all: nothing below can read it either.
            return h;
        }
    }
    check_documents(&store, &mut h);
    match store.figures_problem() {
        Ok(problem) => h.problems.extend(problem),
        Err(e) => h.problems.push(format!("{e:#}")),
    }
    check_pairs(&store, &mut h);
    check_signatures(&store, &mut h);
    h.decisions = count_or_problem(&store, "decisions", &mut h);
    h.urls = count_or_problem(&store, "urls", &mut h);
    h
}

/// SQLite's verdict on the file's structure: empty when it says `ok`.
fn integrity_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let msgs = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(msgs.into_iter().filter(|m| m != "ok").collect())
}

/// Decodes every document row the way the commands read it, and checks each text against
/// the SHA-256 stored with it (damage that leaves valid UTF-8 shows there).
fn check_documents(store: &Store, h: &mut Health) {
    let mut bad: Vec<String> = Vec::new();
    let docs = store.docs_dir();
    let result = (|| -> rusqlite::Result<()> {
        let mut stmt = store.conn.prepare(
            "SELECT d.num, id, source, source_rank, locator, url, title, lang, raw_bytes,
                    t.text, words, sha256, status, reason, duplicate_of, dropped_by
             FROM documents d LEFT JOIN texts t ON t.num = d.num ORDER BY d.num",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let num: i64 = r.get(0).unwrap_or(-1);
            let decoded = (|| -> rusqlite::Result<(String, Status, Option<String>, String)> {
                let id: String = r.get(1)?;
                let _: (String, u32, String) = (r.get(2)?, r.get(3)?, r.get(4)?);
                let _: (Option<String>, Option<String>, Option<String>) =
                    (r.get(5)?, r.get(6)?, r.get(7)?);
                let _: (i64, i64) = (r.get(8)?, r.get(10)?);
                let _: (Option<String>, Option<String>, Option<i64>) =
                    (r.get(13)?, r.get(14)?, r.get(15)?);
                let text: Option<StoredText> = r.get(9)?;
                Ok((id, r.get(12)?, text.map(|t| t.0), r.get(11)?))
            })();
            match decoded {
                Ok((id, status, None, sha)) if lives_in_docs(status) => {
                    match kept_text(&docs, &id, &sha) {
                        Ok(_) => {
                            *h.documents.entry(status.as_str().to_string()).or_default() += 1;
                        }
                        Err(e) => bad.push(format!("{e:#}")),
                    }
                }
                Ok((id, _, None, _)) => bad.push(format!(
                    "document {id} (row {num}): its text is missing from the store"
                )),
                Ok((_, status, Some(text), sha)) if text.is_empty() || sha256_hex(&text) == sha => {
                    if text.is_empty() && sha256_hex("") != sha {
                        h.without_text += 1;
                    }
                    *h.documents.entry(status.as_str().to_string()).or_default() += 1;
                }
                Ok((id, ..)) => bad.push(format!(
                    "document {id} (row {num}): its text does not match its SHA-256"
                )),
                Err(e) => bad.push(format!("document row {num}: {e}")),
            }
        }
        Ok(())
    })();
    list_problems(h, bad, "documents", result);
}

/// Lists the first [`LISTED`] of `bad` and how many more there are, and a read of `what` that
/// stopped early.
fn list_problems(h: &mut Health, bad: Vec<String>, what: &str, read: rusqlite::Result<()>) {
    let n = bad.len();
    h.problems.extend(bad.into_iter().take(LISTED));
    if n > LISTED {
        h.problems
            .push(format!("… and {} more damaged {what}", n - LISTED));
    }
    if let Err(e) = read {
        h.problems
            .push(format!("{what} cannot be read to the end: {e}"));
    }
}

fn check_pairs(store: &Store, h: &mut Health) {
    let result = (|| -> rusqlite::Result<()> {
        let mut stmt = store.conn.prepare(&format!(
            "SELECT {} FROM pairs ORDER BY id",
            super::queries::PAIR_COLS
        ))?;
        let mut rows = stmt.query([])?;
        let mut bad = 0u64;
        while let Some(r) = rows.next()? {
            match super::queries::pair_row(r) {
                Ok(p) => {
                    h.pairs += 1;
                    if p.decision.is_some() {
                        h.decided_pairs += 1;
                    }
                }
                Err(_) => bad += 1,
            }
        }
        if bad > 0 {
            h.problems.push(format!("{bad} pair rows do not decode"));
        }
        Ok(())
    })();
    if let Err(e) = result {
        h.problems
            .push(format!("pairs cannot be read to the end: {e}"));
    }
}

/// Every signature value decoded, and the fingerprint index's state and buckets read: a value
/// torn by damage that SQLite's structure check cannot see would otherwise surface only when an
/// update looks newcomers up.
fn check_signatures(store: &Store, h: &mut Health) {
    let mut bad: Vec<String> = Vec::new();
    let result = (|| -> rusqlite::Result<()> {
        let mut stmt = store
            .conn
            .prepare("SELECT doc, fps FROM signatures ORDER BY doc")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let doc: i64 = r.get(0).unwrap_or(-1);
            if let Err(e) = r.get::<_, StoredSignature>(1) {
                bad.push(format!("the signature of document row {doc}: {e}"));
            }
        }
        Ok(())
    })();
    list_problems(h, bad, "signatures", result);
    match store.fp_index_problems() {
        Ok(problems) => h.problems.extend(problems.into_iter().take(LISTED)),
        Err(e) => h.problems.push(format!("{e:#}")),
    }
}

fn count_or_problem(store: &Store, table: &str, h: &mut Health) -> u64 {
    if !TABLES.contains(&table) {
        return 0;
    }
    match store
        .conn
        .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        }) {
        Ok(n) => n as u64,
        Err(e) => {
            h.problems.push(format!("{table} cannot be counted: {e}"));
            0
        }
    }
}

/// What a damaged store still gives of one document, when its row decodes.
#[derive(Debug, Clone, PartialEq)]
pub struct SalvagedDoc {
    /// Cleaned text (the caller checks it against the manifest's SHA-256).
    pub text: String,
    /// Bytes before cleaning.
    pub raw_bytes: u64,
    /// Why it was rejected or dropped.
    pub reason: Option<String>,
}

/// A review decision read out of a damaged store.
#[derive(Debug, Clone, PartialEq)]
pub struct SalvagedDecision {
    /// First document id of the pair.
    pub a: String,
    /// Second document id.
    pub b: String,
    /// The decision.
    pub decision: String,
    /// The curator's note.
    pub note: Option<String>,
    /// When.
    pub decided_at: String,
}

/// Read access to whatever a damaged store still holds, row by row: a row that does not
/// decode is skipped, not fatal.
pub struct Salvage {
    store: Option<Store>,
}

impl Salvage {
    /// Opens the store at `path` read-only; a file SQLite cannot open gives nothing.
    pub fn open(path: &Path) -> Salvage {
        let usable = std::fs::metadata(path)
            .map(|m| m.is_file() && m.len() > 0)
            .unwrap_or(false);
        let store = usable
            .then(|| open_raw(path).ok())
            .flatten()
            .map(|conn| Store {
                conn,
                path: path.to_path_buf(),
            });
        Salvage { store }
    }

    /// A meta value, if it can be read.
    pub fn meta(&self, key: &str) -> Option<String> {
        let s = self.store.as_ref()?;
        s.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .ok()
            .flatten()
    }

    /// One document's row, if it decodes.
    pub fn document(&self, id: &str) -> Option<SalvagedDoc> {
        let s = self.store.as_ref()?;
        s.conn
            .query_row(
                "SELECT t.text, raw_bytes, reason FROM documents d JOIN texts t ON t.num = d.num
                 WHERE d.id = ?1",
                [id],
                |r| {
                    Ok(SalvagedDoc {
                        text: r.get::<_, StoredText>(0)?.0,
                        raw_bytes: r.get::<_, i64>(1)? as u64,
                        reason: r.get(2)?,
                    })
                },
            )
            .optional()
            .ok()
            .flatten()
    }

    /// The decided pairs whose rows decode, up to the first page SQLite cannot read.
    pub fn decisions(&self) -> Vec<SalvagedDecision> {
        let Some(s) = self.store.as_ref() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let _ = (|| -> rusqlite::Result<()> {
            let mut stmt = s.conn.prepare(
                "SELECT a, b, decision, note, decided_at FROM pairs
                 WHERE decision IS NOT NULL ORDER BY id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = (|| {
                    Ok::<_, rusqlite::Error>(SalvagedDecision {
                        a: r.get(0)?,
                        b: r.get(1)?,
                        decision: r.get(2)?,
                        note: r.get(3)?,
                        decided_at: r.get(4)?,
                    })
                })();
                if let Ok(d) = row {
                    out.push(d);
                }
            }
            Ok(())
        })();
        out
    }
}

impl Store {
    /// Records a review decision salvaged from a damaged store on the rebuilt pair (a, b),
    /// without applying it again: the statuses it set come from the manifest. Returns
    /// whether the pair is there. A dropped document gets the pair it was dropped by.
    pub fn restore_decision(&mut self, d: &SalvagedDecision) -> anyhow::Result<bool> {
        let path = self.path.clone();
        let tx = self.conn.transaction().at(&path)?;
        let pair: Option<i64> = tx
            .query_row(
                "SELECT id FROM pairs WHERE a = ?1 AND b = ?2",
                [&d.a, &d.b],
                |r| r.get(0),
            )
            .optional()
            .at(&path)?;
        let Some(pair) = pair else {
            return Ok(false);
        };
        tx.execute(
            "UPDATE pairs SET decision = ?1, note = ?2, decided_at = ?3 WHERE id = ?4",
            rusqlite::params![d.decision, d.note, d.decided_at, pair],
        )
        .at(&path)?;
        tx.execute(
            "INSERT INTO review_log(kind, target, decision, note, pairs, at)
             VALUES ('pair', ?1, ?2, ?3, 1, ?4)",
            rusqlite::params![pair.to_string(), d.decision, d.note, d.decided_at],
        )
        .at(&path)?;
        tx.execute(
            "INSERT INTO decisions(pair, decision, note, decided_at, entry)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                pair,
                d.decision,
                d.note,
                d.decided_at,
                tx.last_insert_rowid()
            ],
        )
        .at(&path)?;
        if d.decision != "keep-both" {
            tx.execute(
                "UPDATE documents SET dropped_by = ?1 WHERE id IN (?2, ?3) AND status = ?4",
                rusqlite::params![pair, d.a, d.b, Status::Dropped],
            )
            .at(&path)?;
        }
        tx.commit().at(&path)?;
        Ok(true)
    }

    /// Writes everything the WAL holds into the main file, so the file alone is the store
    /// (before it is renamed into place).
    pub fn checkpoint(&self) -> anyhow::Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .at(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sound_store_is_healthy_and_an_empty_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        Store::open(&p).unwrap();
        let h = examine(&p);
        assert!(h.healthy(), "{:?}", h.problems);
        std::fs::write(&p, b"").unwrap();
        let h = examine(&p);
        assert!(!h.healthy());
        assert!(h.problems[0].contains("empty"), "{:?}", h.problems);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0, "examine wrote");
    }

    #[test]
    fn garbage_is_not_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        std::fs::write(&p, vec![0xA5u8; 8192]).unwrap();
        let h = examine(&p);
        assert!(!h.healthy());
        assert!(
            h.problems.iter().any(|m| m.contains("not a database")),
            "{:?}",
            h.problems
        );
        assert!(Salvage::open(&p).meta("topic").is_none());
    }

    #[test]
    fn a_torn_signature_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        let store = Store::open(&p).unwrap();
        let run = store.begin_run("build", "{}").unwrap();
        store
            .conn
            .execute_batch(&format!(
                "INSERT INTO documents(num, id, source, source_rank, locator, raw_bytes, words,
                    sha256, status, added_run) VALUES (1, 'a', 's', 0, 'l', 0, 0, '', 'short', {run});
                 INSERT INTO texts(num, text) VALUES (1, '');
                 INSERT INTO signatures(doc, fps) VALUES (1, x'0100000000000000');"
            ))
            .unwrap();
        store.index_postings().unwrap();
        assert!(
            examine(&p).problems.is_empty(),
            "{:?}",
            examine(&p).problems
        );
        store
            .conn
            .execute("UPDATE signatures SET fps = x'01'", [])
            .unwrap();
        let h = examine(&p);
        assert!(
            h.problems
                .iter()
                .any(|m| m.contains("signature of document row 1") && m.contains("1 bytes")),
            "{:?}",
            h.problems
        );
    }
}
