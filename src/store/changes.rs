//! What changed in the store since the collection directory was last brought in line with it.
//!
//! A sync that read every document to rewrite `manifest.jsonl` cost a 100,000-document
//! collection 0.5 s, whatever the update or review decision had changed. Once a sync has
//! written the directory whole, it leaves a *stamp* (the meta key `manifest_stamp`: what the
//! manifest file and `docs/` looked like when it ended), and from then on triggers on
//! `documents` list in `manifest_changes` every document inserted, deleted or changed in a
//! field its manifest line shows. The next sync rewrites only those lines and files, if the
//! directory still matches the stamp; any other directory is synced whole.
//!
//! The triggers are created in the transaction that first sets the stamp, and a stamp is never
//! removed, so they stand exactly when a stamp does (schema v15; in v13 and v14 they stood
//! always and asked for the stamp on every row, which cost a build's writes before its first
//! sync as much as the writes themselves).
//!
//! Each listed document carries a count of its changes, so a sync clears only what it has
//! seen: a change made while it was writing (another process's review decision) stays listed
//! for the next one.

use super::queries::DocMeta;
use super::{At, Store};
use anyhow::Result;
use rusqlite::params;

/// A document listed as changed: its id and how many changes were counted when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The document's id.
    pub id: String,
    /// Changes counted for it.
    pub n: i64,
}

const STAMP_KEY: &str = "manifest_stamp";

/// The triggers that list changed documents, created with the first stamp.
const TRIGGERS: &str = r#"
CREATE TRIGGER IF NOT EXISTS manifest_change_insert AFTER INSERT ON documents
BEGIN
    INSERT INTO manifest_changes(id) VALUES (NEW.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS manifest_change_update AFTER UPDATE OF id, source, locator, url,
    title, lang, words, sha256, status, reason, duplicate_of, date, relevance, format ON documents
BEGIN
    INSERT INTO manifest_changes(id) VALUES (OLD.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
    INSERT INTO manifest_changes(id) VALUES (NEW.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS manifest_change_delete AFTER DELETE ON documents
BEGIN
    INSERT INTO manifest_changes(id) VALUES (OLD.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
"#;

/// In the migration to v15: the triggers again, on a store that a sync has stamped.
pub(super) fn restore_triggers(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
) -> Result<()> {
    let stamped: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM meta WHERE key = ?1)",
            [STAMP_KEY],
            |r| r.get(0),
        )
        .at(path)?;
    if stamped {
        tx.execute_batch(TRIGGERS).at(path)?;
    }
    Ok(())
}

impl Store {
    /// The documents changed since the last sync, in id order.
    pub fn manifest_changes(&self) -> Result<Vec<Change>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, n FROM manifest_changes ORDER BY id")
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Change {
                    id: r.get(0)?,
                    n: r.get(1)?,
                })
            })
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }

    /// The stamp the last complete sync left (None: the directory is to be synced whole).
    pub fn manifest_stamp(&self) -> Result<Option<String>> {
        self.meta(STAMP_KEY)
    }

    /// Records a complete sync, in one transaction: its stamp, and the changes it wrote out
    /// are cleared (a change counted since it read them stays).
    pub fn record_sync(&self, stamp: &str, written: &[Change]) -> Result<()> {
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        {
            let mut clear = tx
                .prepare_cached("DELETE FROM manifest_changes WHERE id = ?1 AND n = ?2")
                .at(&self.path)?;
            for c in written {
                clear.execute(params![c.id, c.n]).at(&self.path)?;
            }
        }
        // On the transaction's connection, so the stamp commits with the clearing and with
        // the triggers that must stand wherever a stamp does.
        tx.execute_batch(TRIGGERS).at(&self.path)?;
        self.set_meta(STAMP_KEY, stamp)?;
        tx.commit().at(&self.path)
    }

    /// Metadata of the listed documents the store still holds, in id order (the changes'
    /// order); a deleted document is left out.
    pub fn document_metas_of(&self, changes: &[Change]) -> Result<Vec<DocMeta>> {
        changes
            .iter()
            .filter_map(|c| self.document_meta(&c.id).transpose())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::doc;
    use crate::store::{Outcome, Status};

    fn kept(id: &str) -> Outcome {
        Outcome {
            id: id.into(),
            status: Status::Kept,
            duplicate_of: None,
        }
    }

    fn triggers(s: &Store) -> i64 {
        s.conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    }

    /// A v14 store (triggers that asked for the stamp on every row) is migrated with its
    /// triggers only when a sync had stamped it, and a stamped one goes on listing changes.
    #[test]
    fn the_v15_migration_gives_the_triggers_back_only_to_a_stamped_store() {
        let dir = tempfile::tempdir().unwrap();
        for stamped in [false, true] {
            let p = dir.path().join(format!("v14-{stamped}.sqlite"));
            {
                let c = rusqlite::Connection::open(&p).unwrap();
                crate::store::text::register_pack(&c).unwrap();
                for sql in &crate::store::MIGRATIONS[..14] {
                    c.execute_batch(sql).unwrap();
                }
                c.pragma_update(None, "user_version", 14).unwrap();
                if stamped {
                    c.execute(
                        "INSERT INTO meta(key, value) VALUES (?1, 'stamp-0')",
                        [STAMP_KEY],
                    )
                    .unwrap();
                }
            }
            let mut s = Store::open(&p).unwrap();
            assert_eq!(triggers(&s), if stamped { 3 } else { 0 }, "{stamped}");
            let run = s.begin_run("update", "{}").unwrap();
            s.insert_documents(run, vec![(doc("a", "text"), vec![1])], None)
                .unwrap();
            s.record_dedup(run, &[kept("a")], &[]).unwrap();
            let listed = s.manifest_changes().unwrap();
            if stamped {
                assert_eq!(
                    listed,
                    vec![Change {
                        id: "a".into(),
                        n: 3
                    }]
                );
            } else {
                assert!(listed.is_empty(), "{listed:?}");
            }
        }
    }

    #[test]
    fn changes_are_listed_only_once_a_stamp_stands_and_cleared_only_as_seen() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        s.insert_documents(
            run,
            vec![(doc("a", "text"), vec![1]), (doc("b", "text"), vec![2])],
            None,
        )
        .unwrap();
        assert!(s.manifest_changes().unwrap().is_empty(), "no stamp yet");
        assert_eq!(triggers(&s), 0, "no triggers to ask each row");

        s.record_sync("stamp-1", &[]).unwrap();
        assert_eq!(triggers(&s), 3);
        s.record_sync("stamp-1", &[]).unwrap();
        assert_eq!(triggers(&s), 3, "a second stamp leaves them as they are");
        s.record_dedup(run, &[kept("b")], &[]).unwrap();
        s.insert_documents(run, vec![(doc("c", "text"), vec![3])], None)
            .unwrap();
        let seen = s.manifest_changes().unwrap();
        assert_eq!(
            seen,
            vec![
                Change {
                    id: "b".into(),
                    n: 2
                },
                Change {
                    id: "c".into(),
                    n: 1
                }
            ],
            "an update lists the id as both old and new row"
        );
        // A change after the sync read the list stays for the next sync.
        s.record_dedup(run, &[kept("c")], &[]).unwrap();
        s.record_sync("stamp-2", &seen).unwrap();
        assert_eq!(s.manifest_stamp().unwrap().as_deref(), Some("stamp-2"));
        assert_eq!(
            s.manifest_changes().unwrap(),
            vec![Change {
                id: "c".into(),
                n: 3
            }]
        );
        let metas = s.document_metas_of(&s.manifest_changes().unwrap()).unwrap();
        assert_eq!(metas.len(), 1);
        assert_eq!(metas[0].status, Status::Kept);
    }
}
