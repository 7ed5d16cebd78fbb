//! The report's figures by source and status — documents, bytes before and after cleaning —
//! kept in a table of their own instead of counted over every document at each sync.
//!
//! Counting them by source and status read all 100,000 rows of an index (schema v14 to v19,
//! `documents_figures`) at every sync: 18–30 ms of an update of 1,000 documents, its whole cost
//! when nothing had changed, and the index itself was made again at the end of every build
//! (0.18 s at 100,000 documents) and moved by every status an update wrote.
//!
//! The first sync of a collection counts them once into `figures` and, in the same
//! transaction, creates the triggers that keep the table in step with every insert, delete and
//! change of a document's source, status or sizes, whoever makes it (build, update, review,
//! clean, doctor). Before that sync there are no triggers, so a build's writes pay nothing for
//! them (they cost 5 µs a row: 1.0 s over a build's 200,000 inserts and status changes), and
//! the figures are counted over the documents. The triggers themselves say whether the table
//! is kept: it cannot be believed kept while they are missing.

use super::{At, Status, Store};
use anyhow::Result;

/// The documents of one source with one status, and their bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusFigures {
    /// Report name of the source.
    pub source: String,
    /// Their status.
    pub status: Status,
    /// How many.
    pub documents: u64,
    /// Bytes before cleaning.
    pub raw_bytes: u64,
    /// Bytes of the cleaned texts.
    pub text_bytes: u64,
}

/// The triggers that keep `figures`, created by [`Store::keep_figures`]. A group that empties
/// keeps its row at zero; readers leave such rows out.
const TRIGGERS: &str = r#"
CREATE TRIGGER figures_insert AFTER INSERT ON documents
BEGIN
    INSERT INTO figures(source, status, documents, raw_bytes, text_bytes)
        VALUES (NEW.source, NEW.status, 1, NEW.raw_bytes, NEW.text_bytes)
    ON CONFLICT(source, status) DO UPDATE SET documents = documents + 1,
        raw_bytes = raw_bytes + excluded.raw_bytes, text_bytes = text_bytes + excluded.text_bytes;
END;
CREATE TRIGGER figures_update AFTER UPDATE OF source, status, raw_bytes, text_bytes ON documents
BEGIN
    UPDATE figures SET documents = documents - 1, raw_bytes = raw_bytes - OLD.raw_bytes,
        text_bytes = text_bytes - OLD.text_bytes
    WHERE source = OLD.source AND status = OLD.status;
    INSERT INTO figures(source, status, documents, raw_bytes, text_bytes)
        VALUES (NEW.source, NEW.status, 1, NEW.raw_bytes, NEW.text_bytes)
    ON CONFLICT(source, status) DO UPDATE SET documents = documents + 1,
        raw_bytes = raw_bytes + excluded.raw_bytes, text_bytes = text_bytes + excluded.text_bytes;
END;
CREATE TRIGGER figures_delete AFTER DELETE ON documents
BEGIN
    UPDATE figures SET documents = documents - 1, raw_bytes = raw_bytes - OLD.raw_bytes,
        text_bytes = text_bytes - OLD.text_bytes
    WHERE source = OLD.source AND status = OLD.status;
END;
"#;

/// The figures counted over the documents themselves: what fills the table, and what is read
/// where it is not kept.
const COUNTED: &str = "SELECT source, status, COUNT(*), SUM(raw_bytes), SUM(text_bytes)
     FROM documents GROUP BY source, status ORDER BY source, status";

/// The figures as the table keeps them, in the order of [`COUNTED`].
const KEPT: &str = "SELECT source, status, documents, raw_bytes, text_bytes
     FROM figures WHERE documents > 0 ORDER BY source, status";

impl Store {
    /// Documents and bytes per source and status, ordered by source and status: from the table
    /// where it is kept, else counted over the documents.
    pub fn status_figures(&self) -> Result<Vec<StatusFigures>> {
        let sql = if self.figures_kept()? { KEPT } else { COUNTED };
        self.figures_of(sql)
    }

    /// The figures counted over the documents, whether or not the table is kept (the doctor
    /// compares the two).
    fn counted_figures(&self) -> Result<Vec<StatusFigures>> {
        self.figures_of(COUNTED)
    }

    fn figures_of(&self, sql: &str) -> Result<Vec<StatusFigures>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(StatusFigures {
                    source: r.get(0)?,
                    status: r.get(1)?,
                    documents: r.get::<_, i64>(2)? as u64,
                    raw_bytes: r.get::<_, i64>(3)? as u64,
                    text_bytes: r.get::<_, i64>(4)? as u64,
                })
            })
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }

    /// Whether the triggers that keep the table stand.
    pub fn figures_kept(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master
                 WHERE type = 'trigger' AND name = 'figures_insert')",
                [],
                |r| r.get(0),
            )
            .at(&self.path)
    }

    /// Counts the figures into the table and creates the triggers that keep it from then on,
    /// unless they stand already. One immediate transaction: no other writer's change can
    /// fall between the count and the first trigger.
    pub fn keep_figures(&self) -> Result<()> {
        if self.figures_kept()? {
            return Ok(());
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )
        .at(&self.path)?;
        // Asked again under the lock: another process may have created them meanwhile.
        if !self.figures_kept()? {
            tx.execute_batch(&format!(
                "DELETE FROM figures;
                 INSERT INTO figures(source, status, documents, raw_bytes, text_bytes) {COUNTED};
                 {TRIGGERS}"
            ))
            .at(&self.path)?;
        }
        tx.commit().at(&self.path)
    }

    /// Whether the kept figures differ from those counted over the documents (None: not kept).
    pub fn figures_problem(&self) -> Result<Option<String>> {
        if !self.figures_kept()? {
            return Ok(None);
        }
        let (kept, counted) = (self.figures_of(KEPT)?, self.counted_figures()?);
        Ok((kept != counted).then(|| {
            format!(
                "the report's figures by source and status ({} groups) differ from those counted \
                 over the documents ({} groups); `collect doctor --rebuild` counts them again",
                kept.len(),
                counted.len()
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::doc;
    use crate::store::Outcome;

    fn outcome(id: &str, status: Status) -> Outcome {
        Outcome {
            id: id.into(),
            status,
            duplicate_of: None,
        }
    }

    #[test]
    fn kept_figures_follow_every_change_as_a_count_over_the_documents_would() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let docs = ["a", "b", "c"].map(|id| (doc(id, &format!("text of {id}")), vec![]));
        s.insert_documents(run, docs.to_vec(), None).unwrap();
        assert!(!s.figures_kept().unwrap());
        let before = s.status_figures().unwrap();
        assert_eq!(before, s.counted_figures().unwrap());
        assert_eq!(before.len(), 1);
        assert_eq!(before[0].documents, 3);

        s.keep_figures().unwrap();
        assert!(s.figures_kept().unwrap());
        assert_eq!(s.status_figures().unwrap(), before);
        // Kept twice is kept once: the count is not added again.
        s.keep_figures().unwrap();
        assert_eq!(s.status_figures().unwrap(), before);

        // Inserts, status changes, a source and a size changed, a delete: after each, the
        // table reads as the count does, and a group that empties is not listed.
        s.insert_documents(run, vec![(doc("d", "another text here"), vec![])], None)
            .unwrap();
        s.record_dedup(
            run,
            &[
                outcome("a", Status::Kept),
                outcome("b", Status::Duplicate),
                outcome("c", Status::Kept),
                outcome("d", Status::Kept),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(s.status_figures().unwrap(), s.counted_figures().unwrap());
        assert!(s
            .status_figures()
            .unwrap()
            .iter()
            .all(|f| f.status != Status::Pending));
        for sql in [
            "UPDATE documents SET source = 'web' WHERE id = 'c'",
            "UPDATE documents SET raw_bytes = raw_bytes + 100, text_bytes = 7 WHERE id = 'a'",
            // The text and signature rows point at the document; only its row matters here.
            "PRAGMA foreign_keys = OFF; DELETE FROM documents WHERE id = 'b'",
        ] {
            s.conn.execute_batch(sql).unwrap();
            let kept = s.status_figures().unwrap();
            assert_eq!(kept, s.counted_figures().unwrap(), "after {sql}");
            assert_eq!(s.figures_problem().unwrap(), None);
        }
        let kept = s.status_figures().unwrap();
        assert_eq!(
            kept.iter()
                .map(|f| (f.source.as_str(), f.status, f.documents))
                .collect::<Vec<_>>(),
            [("local", Status::Kept, 2), ("web", Status::Kept, 1)]
        );

        // A table changed behind the triggers' back is a problem the doctor names.
        s.conn
            .execute("UPDATE figures SET documents = documents + 1", [])
            .unwrap();
        let problem = s.figures_problem().unwrap().unwrap();
        assert!(problem.contains("differ"), "{problem}");
    }
}
