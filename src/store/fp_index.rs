//! The fingerprint index of the postings (fingerprint → documents), through which an update
//! finds the stored documents sharing a fingerprint with a newcomer.
//!
//! Fingerprints are hashes, so a newcomer's postings land on pages spread over the whole
//! index: adding 1 % of documents to a 100,000-document store touched nearly every page of a
//! single index (70 MB written to the journal and again to the file, 0.5 s of the update's
//! time), and that cost grew with the store, not with the update. So the index is a partial
//! index, up to a document number (the split): the documents after it have no fingerprint
//! index at all, and a lookup reads their postings in order, a range of the table (which is
//! clustered by document), checking each against the fingerprints asked for. A newcomer's
//! postings are then appended at the table's end, as a build's are.
//!
//! Stores of schema v11 to v13 gave the documents after the split an index of their own, a
//! second partial index. Each update's postings landed all over it and rewrote most of its
//! pages, so its inserts grew with it: 0.6 → 1.3 s over ten updates of 1,000 into a
//! 100,000-document store, where appending the same rows takes 0.03 s. Reading the range
//! instead costs about 8 µs a document (0.16–0.24 s for 26,000 documents' postings).
//!
//! When the documents after the split outnumber a share of those before it, the next
//! [`Store::index_postings`] folds them in by building the index again up to the newest
//! document (one sorted pass: about 5 s at 150,000 documents). The share trades that pass,
//! spread over the updates between two folds, against the reading of the range in each.
//!
//! The split lives in the index's own definition (`WHERE doc <= N`), so it can never disagree
//! with the index. The v11 migration drops the whole index of older stores; the next
//! `index_postings` makes the partial one (a whole index, should one be found, is replaced too,
//! and the second index of the documents after the split, which stores of v11 to v13 made, is
//! dropped).

use crate::store::{At, Store};
use anyhow::Result;
use rustc_hash::FxHashSet;

const MAIN: &str = "postings_fp";
/// The index of the documents after the split that stores of v11 to v13 kept, dropped on sight.
const RECENT: &str = "postings_fp_recent";

/// The documents after the split are folded into the index once they are more than one in this
/// many of those before it. A fold is one sorted pass over every posting (about 4 s at 100,000
/// documents, 5 s at 150,000), the range costs about 8 µs a document in every update, and the
/// sum of the two, per update, is least near a share of 3 whatever the store's size: at
/// 100,000 documents and updates of 1,000, a fold every 25 updates (0.16 s each, spread) and a
/// range of 12,500 documents on average (0.1 s). A share of 8 reads half as much and folds
/// twice as often (0.37 s in all).
const RECENT_SHARE: i64 = 4;

/// How the fingerprint index stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Split {
    /// No index: a build is storing documents, or was killed before making it.
    Missing,
    /// One index over every posting, as stores before the split have it.
    Whole,
    /// An index of the documents up to this number; those after it are read in order.
    At(i64),
}

impl Store {
    fn fp_split(&self) -> Result<Split> {
        let Some(sql) = super::index_definition(&self.conn, &self.path, MAIN)? else {
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
    /// of an older store by the partial one, and folds the documents after the split in when
    /// they have outgrown [`RECENT_SHARE`]. Otherwise it only drops an older store's index of
    /// the documents after the split, so that newcomers' postings are appended from now on.
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
                // Numbers are given in order and documents are not deleted, so the index
                // holds `split` documents: counting them read the whole table (50 ms of an
                // update at 100,000 documents).
                recent * RECENT_SHARE > split.max(1)
            }
        };
        if !rebuild {
            return self
                .conn
                .execute_batch(&format!("DROP INDEX IF EXISTS {RECENT};"))
                .at(&self.path);
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
             CREATE INDEX {MAIN} ON postings(fp) WHERE doc <= {newest};"
        ))
        .at(&self.path)?;
        tx.commit().at(&self.path)
    }

    /// The postings `(document, fingerprint)` of any of `fps`, sorted.
    ///
    /// For the documents up to the split, the fingerprints are an array parameter joined to
    /// the index: one statement instead of a lookup per fingerprint (the 40,000 fingerprints of
    /// 1,000 newcomers to a 100,000-document store: 0.12 s before, 0.04 s). The postings of
    /// those after it are read in order and checked against a hash set of the fingerprints:
    /// SQLite's own check, a probe of the temporary table's B-tree for each posting, took twice
    /// as long (0.43 s for the postings of 26,000 documents, against 0.16–0.24 s).
    pub fn postings_of_fingerprints(&self, fps: &[u64]) -> Result<Vec<(i64, u64)>> {
        let split = self.fp_split()?;
        let mut stmt = self
            .conn
            .prepare(&indexed_lookup_sql(split))
            .at(&self.path)?;
        // SQLite integers are signed: the u64 bit pattern is kept as is.
        let wanted = Store::value_array(fps.iter().map(|&fp| fp as i64));
        let rows = stmt
            .query_map([wanted], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .at(&self.path)?;
        let mut found = rows
            .collect::<rusqlite::Result<Vec<(i64, u64)>>>()
            .at(&self.path)?;
        if let Split::At(split) = split {
            let wanted: FxHashSet<i64> = fps.iter().map(|&fp| fp as i64).collect();
            let mut stmt = self
                .conn
                .prepare("SELECT doc, fp FROM postings WHERE doc > ?1 ORDER BY doc")
                .at(&self.path)?;
            let mut rows = stmt.query([split]).at(&self.path)?;
            while let Some(row) = rows.next().at(&self.path)? {
                let fp: i64 = row.get(1).at(&self.path)?;
                if wanted.contains(&fp) {
                    found.push((row.get(0).at(&self.path)?, fp as u64));
                }
            }
        }
        found.sort_unstable();
        Ok(found)
    }
}

/// The statement of a lookup in the index. The split is written into it:
/// SQLite uses a partial index only for a query whose WHERE implies the index's, which a bound
/// parameter cannot show. `CROSS JOIN` keeps the fingerprints the outer loop: knowing nothing
/// of the array's size, the planner may otherwise scan every posting.
fn indexed_lookup_sql(split: Split) -> String {
    let within = match split {
        Split::At(split) => format!(" AND p.doc <= {split}"),
        Split::Whole | Split::Missing => String::new(),
    };
    format!("SELECT p.doc, p.fp FROM rarray(?1) q CROSS JOIN postings p ON p.fp = q.value{within}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of a lookup statement, its array bound.
    fn plan(store: &Store, sql: &str) -> String {
        let mut stmt = store
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let rows = stmt
            .query_map([Store::value_array([7, 8].into_iter())], |r| {
                r.get::<_, String>(3)
            })
            .unwrap();
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
        let found = store.postings_of_fingerprints(&[fp]).unwrap();
        assert!(found.iter().all(|&(_, f)| f == fp), "{found:?}");
        found.into_iter().map(|(doc, _)| doc).collect()
    }

    #[test]
    fn newcomers_after_the_split_are_read_in_order_and_lookups_see_both_sides() {
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
        let mut wanted: Vec<(i64, u64)> = (1..=17).map(|doc| (doc, 7)).collect();
        wanted.extend([(5, 105), (17, 8), (18, 8)]);
        wanted.sort_unstable();
        assert_eq!(
            store.postings_of_fingerprints(&[8, 105, 9, 7]).unwrap(),
            wanted,
            "every posting of the fingerprints, from both sides of the split, sorted"
        );
        let indexed = plan(&store, &indexed_lookup_sql(Split::At(16)));
        assert!(
            indexed.contains(&format!("INDEX {MAIN} (fp=? AND doc<?)")),
            "{indexed}"
        );
    }

    fn has_index(store: &Store, name: &str) -> bool {
        store
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
                [name],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
            == 1
    }

    #[test]
    fn an_older_stores_index_of_the_documents_after_the_split_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=16 {
            add(&store, num, &[num]);
        }
        store.index_postings().unwrap();
        assert!(has_index(&store, MAIN) && !has_index(&store, RECENT));
        // As a store of v11 to v13 has it.
        store
            .conn
            .execute_batch(&format!(
                "CREATE INDEX {RECENT} ON postings(fp) WHERE doc > 16"
            ))
            .unwrap();
        add(&store, 17, &[3]);
        store.index_postings().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::At(16));
        assert!(has_index(&store, MAIN) && !has_index(&store, RECENT));
        assert_eq!(lookup(&store, 3), vec![3, 17]);
    }

    #[test]
    fn documents_after_the_split_are_folded_in_when_they_outgrow_the_share() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=8 {
            add(&store, num, &[num]);
        }
        store.index_postings().unwrap();
        add(&store, 9, &[1]);
        add(&store, 10, &[1]);
        store.index_postings().unwrap();
        // Two after the split against eight: one in four, not more.
        assert_eq!(store.fp_split().unwrap(), Split::At(8));
        add(&store, 11, &[1]);
        store.index_postings().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::At(11));
        assert_eq!(lookup(&store, 1), vec![1, 9, 10, 11]);
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
