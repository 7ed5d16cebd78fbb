//! The fingerprint index of the postings (fingerprint → documents), through which an update
//! finds the stored documents sharing a fingerprint with a newcomer.
//!
//! Fingerprints are hashes, so a newcomer's postings land on pages spread over the whole
//! index: adding 1 % of documents to a 100,000-document store touched nearly every page of a
//! single index (70 MB written to the journal and again to the file, 0.5 s of the update's
//! time), and that cost grew with the store, not with the update. So the index is kept in two
//! parts, as partial indexes split at a document number: the main part covers the documents up
//! to the split, the recent part those after it. New documents enter only the small recent part;
//! a lookup asks both. When the recent part outgrows a share of the main one, the next
//! [`Store::index_postings`] folds it in by building the main part again up to the newest
//! document (one sorted pass: 2.2 s at 100,000 documents), at most once every
//! [`RECENT_SHARE`] updates of 1 %.
//!
//! The split lives in the index's own definition (`WHERE doc <= N`), so it can never disagree
//! with the index. The v11 migration drops the whole index of older stores; the next
//! `index_postings` makes the two parts (a whole index, should one be found, is replaced too).

use crate::store::{At, Store};
use anyhow::Result;

const MAIN: &str = "postings_fp";
const RECENT: &str = "postings_fp_recent";

/// The temporary table of the fingerprints a lookup asks for.
const LOOKUP: &str = "lookup_fps";

/// The recent part is folded into the main one once it indexes more than one document in this
/// many of those the main part indexes.
const RECENT_SHARE: i64 = 8;

/// How the fingerprint index stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Split {
    /// No index: a build is storing documents, or was killed before making it.
    Missing,
    /// One index over every posting, as stores before the split have it.
    Whole,
    /// A main part up to this document number and a recent part after it.
    At(i64),
}

impl Store {
    fn fp_split(&self) -> Result<Split> {
        let sql: Option<String> = rusqlite::OptionalExtension::optional(self.conn.query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
            [MAIN],
            |r| r.get(0),
        ))
        .at(&self.path)?;
        let Some(sql) = sql else {
            return Ok(Split::Missing);
        };
        Ok(match sql.split_once(" WHERE doc <= ") {
            None => Split::Whole,
            Some((_, n)) => Split::At(n.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "{}: the fingerprint index has an unreadable definition: {sql}",
                    self.path.display()
                )
            })?),
        })
    }

    /// Drops the fingerprint index while a build stores documents: kept up to date, it costs a
    /// build most of its writes (see the v8 migration).
    pub fn defer_postings_index(&self) -> Result<()> {
        // The main part first: a kill between the two leaves no main part, which the next
        // `index_postings` sees as missing and makes whole again.
        self.conn
            .execute_batch(&format!(
                "DROP INDEX IF EXISTS {MAIN}; DROP INDEX IF EXISTS {RECENT};"
            ))
            .at(&self.path)
    }

    /// Makes the fingerprint index if it is missing (one sorted pass), replaces a whole index
    /// of an older store by the two parts, and folds the recent part into the main one when it
    /// has outgrown [`RECENT_SHARE`]. A no-op otherwise.
    pub fn index_postings(&self) -> Result<()> {
        let rebuild = match self.fp_split()? {
            Split::Missing | Split::Whole => true,
            Split::At(split) => {
                let recent: i64 = self
                    .conn
                    .query_row(
                        "SELECT COUNT(*) FROM documents WHERE num > ?1",
                        [split],
                        |r| r.get(0),
                    )
                    .at(&self.path)?;
                // Numbers are given in order and documents are not deleted, so the main part
                // holds `split` documents: counting them read the whole table (50 ms of an
                // update at 100,000 documents).
                recent * RECENT_SHARE > split.max(1)
            }
        };
        if !rebuild {
            return Ok(());
        }
        let newest: i64 = self
            .conn
            .query_row("SELECT COALESCE(MAX(num), 0) FROM documents", [], |r| {
                r.get(0)
            })
            .at(&self.path)?;
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        tx.execute_batch(&format!(
            "DROP INDEX IF EXISTS {MAIN}; DROP INDEX IF EXISTS {RECENT};
             CREATE INDEX {MAIN} ON postings(fp) WHERE doc <= {newest};
             CREATE INDEX {RECENT} ON postings(fp) WHERE doc > {newest};"
        ))
        .at(&self.path)?;
        tx.commit().at(&self.path)
    }

    /// The documents holding any of `fps`, each once, in number order. The fingerprints go into
    /// a temporary table joined to both parts of the index: one statement instead of two
    /// lookups per fingerprint (the 40,000 fingerprints of 1,000 newcomers to a 100,000-document
    /// store: 0.12 s before, 0.04 s).
    pub fn docs_with_fingerprints(&self, fps: &[u64]) -> Result<Vec<i64>> {
        // SQLite integers are signed: the u64 bit pattern is kept as is.
        self.fill_temp(LOOKUP, fps.iter().map(|&fp| fp as i64))?;
        let sql = lookup_sql(self.fp_split()?);
        let mut stmt = self.conn.prepare(&sql).at(&self.path)?;
        let rows = stmt.query_map([], |r| r.get(0)).at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }
}

/// The statement of a lookup. The split is written into it: SQLite uses a partial index only
/// for a query whose WHERE implies the index's, which a bound parameter cannot show. `CROSS
/// JOIN` keeps the fingerprints the outer loop: knowing nothing of the temporary table's size,
/// the planner may otherwise scan every posting.
fn lookup_sql(split: Split) -> String {
    match split {
        Split::At(split) => format!(
            "SELECT p.doc FROM temp.{LOOKUP} q CROSS JOIN postings p ON p.fp = q.n AND p.doc <= {split}
             UNION SELECT p.doc FROM temp.{LOOKUP} q CROSS JOIN postings p
             ON p.fp = q.n AND p.doc > {split} ORDER BY 1"
        ),
        Split::Whole | Split::Missing => format!(
            "SELECT DISTINCT p.doc FROM temp.{LOOKUP} q CROSS JOIN postings p ON p.fp = q.n ORDER BY 1"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(store: &Store, sql: &str) -> String {
        let mut stmt = store
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    }

    fn add(store: &Store, num: i64, fps: &[i64]) {
        let run = store.begin_run("build", "{}").unwrap();
        store
            .conn
            .execute(
                "INSERT INTO documents(num, id, source, source_rank, locator, raw_bytes, words,
                    sha256, status, added_run) VALUES (?1, ?2, 's', 0, 'l', 0, 0, '', 'kept', ?3)",
                rusqlite::params![num, format!("d{num}"), run],
            )
            .unwrap();
        for fp in fps {
            store
                .conn
                .execute(
                    "INSERT INTO postings(fp, doc) VALUES (?1, ?2)",
                    rusqlite::params![fp, num],
                )
                .unwrap();
        }
    }

    fn lookup(store: &Store, fp: u64) -> Vec<i64> {
        store.docs_with_fingerprints(&[fp]).unwrap()
    }

    #[test]
    fn newcomers_enter_the_recent_part_and_lookups_see_both_parts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=16 {
            add(&store, num, &[7, 100 + num]);
        }
        store.index_postings().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::At(16));
        add(&store, 17, &[7, 8]);
        add(&store, 18, &[8]);
        store.index_postings().unwrap();
        // Two recent documents against sixteen: within the share, no rebuild.
        assert_eq!(store.fp_split().unwrap(), Split::At(16));
        assert_eq!(lookup(&store, 7), (1..=17).collect::<Vec<_>>());
        assert_eq!(lookup(&store, 8), vec![17, 18]);
        assert_eq!(lookup(&store, 105), vec![5]);
        assert!(lookup(&store, 9).is_empty());
        assert_eq!(
            store.docs_with_fingerprints(&[8, 105, 9, 7]).unwrap(),
            (1..=18).collect::<Vec<_>>(),
            "each document once, in number order"
        );
        let both = plan(&store, &lookup_sql(Split::At(16)));
        assert!(both.contains(MAIN) && both.contains(RECENT), "{both}");
    }

    #[test]
    fn an_outgrown_recent_part_is_folded_in() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=8 {
            add(&store, num, &[num]);
        }
        store.index_postings().unwrap();
        add(&store, 9, &[1]);
        add(&store, 10, &[1]);
        store.index_postings().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::At(10));
        assert_eq!(lookup(&store, 1), vec![1, 9, 10]);
    }

    #[test]
    fn a_whole_index_of_an_older_store_is_split() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        add(&store, 1, &[5]);
        store
            .conn
            .execute_batch(&format!("CREATE INDEX {MAIN} ON postings(fp)"))
            .unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::Whole);
        assert_eq!(lookup(&store, 5), vec![1]);
        store.index_postings().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::At(1));
        add(&store, 2, &[5]);
        assert_eq!(lookup(&store, 5), vec![1, 2]);
        store.defer_postings_index().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::Missing);
        assert_eq!(lookup(&store, 5), vec![1, 2]);
    }
}
