//! The inputs a build or update skipped (unreadable files, malformed JSONL lines, …), per
//! source, so that reports and `collect stats --skipped` can say what is missing and why.
//!
//! The table is created when first written rather than by a schema migration: a collection
//! built by an earlier version opens unchanged (and still opens in that version), and reads
//! of a store without the table see no skips.

use crate::error::{Skip, SkipReason};
use crate::store::{At, Store};
use anyhow::{Context, Result};
use rusqlite::params;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS skipped (
    source TEXT NOT NULL,
    locator TEXT NOT NULL,
    reason TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (source, locator, reason)
)";

/// One skipped input as stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedInput {
    /// Report name of the source.
    pub source: String,
    /// `path` or `path:line`.
    pub locator: String,
    /// Why it was skipped.
    pub reason: SkipReason,
    /// What exactly was wrong.
    pub detail: String,
}

impl rusqlite::types::ToSql for SkipReason {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for SkipReason {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        SkipReason::parse(s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown skip reason `{s}`").into())
        })
    }
}

impl Store {
    /// Replaces what is recorded as skipped for `source` with `skips`, in one transaction: the
    /// record is what the source's latest complete read skipped, so a rerun, a resume or an
    /// update never counts a skip twice and a file fixed since is no longer listed.
    pub fn replace_skipped(&mut self, source: &str, skips: &[Skip]) -> Result<()> {
        let path = self.path().to_path_buf();
        let tx = self.conn.transaction().at(&path)?;
        tx.execute(CREATE, [])
            .at(&path)
            .context("cannot create the skipped table")?;
        tx.execute("DELETE FROM skipped WHERE source = ?1", [source])
            .at(&path)?;
        {
            // Two skips of one place for one reason are one record (a path can be reached twice).
            let mut ins = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO skipped(source, locator, reason, detail)
                 VALUES (?1, ?2, ?3, ?4)",
                )
                .at(&path)?;
            for s in skips {
                ins.execute(params![source, s.locator(), s.reason, s.detail])
                    .at(&path)?;
            }
        }
        tx.commit().at(&path)?;
        Ok(())
    }

    /// Every recorded skip, by source, then locator.
    pub fn skipped(&self) -> Result<Vec<SkippedInput>> {
        if !self.has_table("skipped")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT source, locator, reason, detail FROM skipped ORDER BY source, locator, reason",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SkippedInput {
                    source: r.get(0)?,
                    locator: r.get(1)?,
                    reason: r.get(2)?,
                    detail: r.get(3)?,
                })
            })
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn skip(path: &str, line: Option<usize>, reason: SkipReason) -> Skip {
        Skip {
            path: path.into(),
            line,
            column: None,
            offset: None,
            reason,
            detail: "why".into(),
        }
    }

    #[test]
    fn a_store_without_the_table_reads_as_no_skips_and_replacing_never_doubles() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        let mut s = Store::open(&p).unwrap();
        assert!(s.skipped().unwrap().is_empty());
        let first = [
            skip("in.jsonl", Some(3), SkipReason::BadJson),
            skip("d/pipe.txt", None, SkipReason::NotRegularFile),
            skip("d/pipe.txt", None, SkipReason::NotRegularFile),
        ];
        s.replace_skipped("local", &first).unwrap();
        s.replace_skipped("other", &[skip("x", None, SkipReason::Loop)])
            .unwrap();
        s.replace_skipped("local", &first).unwrap();
        let got = Store::open(&p).unwrap().skipped().unwrap();
        let keys: Vec<(&str, &str, SkipReason)> = got
            .iter()
            .map(|k| (k.source.as_str(), k.locator.as_str(), k.reason))
            .collect();
        assert_eq!(
            keys,
            [
                ("local", "d/pipe.txt", SkipReason::NotRegularFile),
                ("local", "in.jsonl:3", SkipReason::BadJson),
                ("other", "x", SkipReason::Loop),
            ]
        );
        s.replace_skipped("local", &[]).unwrap();
        assert_eq!(s.skipped().unwrap().len(), 1);
        assert!(Path::new(&p).exists());
    }
}
