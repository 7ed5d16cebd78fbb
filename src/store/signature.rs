//! How the store keeps a document's signature: one BLOB per document, its fingerprints sorted
//! and without repeats, 8 little-endian bytes each.
//!
//! Stores before schema v17 kept a row per (document, fingerprint) posting and a B-tree of them
//! by fingerprint: on the 80k dev corpus 5.26 million rows, 82 MB of table and 72 MB of index
//! in a 213 MB store, and the index's sort took 4–6 s of a build's CPU. One value per document
//! is a row per document to write and to read, and the fingerprint index (`fp_index.rs`) is
//! made from these values.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};

/// The value the store keeps for `fps`, which must be sorted and without repeats.
pub fn pack(fps: &[u64]) -> Vec<u8> {
    debug_assert!(fps.windows(2).all(|w| w[0] < w[1]), "unsorted signature");
    fps.iter().flat_map(|fp| fp.to_le_bytes()).collect()
}

/// The fingerprints of a stored value, appended to `into`; an error says how the value is
/// damaged (a length that is not a whole number of fingerprints, or an order that is not
/// strictly ascending, which the fingerprint index's range reads rely on).
pub fn unpack_into(value: &[u8], into: &mut Vec<u64>) -> Result<(), String> {
    if !value.len().is_multiple_of(8) {
        return Err(format!(
            "a signature of {} bytes, not a whole number of 8-byte fingerprints",
            value.len()
        ));
    }
    let start = into.len();
    into.extend(
        value
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("chunks of 8"))),
    );
    if into[start..].windows(2).any(|w| w[0] >= w[1]) {
        return Err("a signature whose fingerprints are not in ascending order".into());
    }
    Ok(())
}

/// A signature as read from the store. A value that does not decode is a conversion failure,
/// which the store reports as corruption.
pub struct StoredSignature(pub Vec<u64>);

impl FromSql for StoredSignature {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let ValueRef::Blob(bytes) = value else {
            return Err(FromSqlError::InvalidType);
        };
        let mut fps = Vec::with_capacity(bytes.len() / 8);
        unpack_into(bytes, &mut fps).map_err(|e| FromSqlError::Other(e.into()))?;
        Ok(StoredSignature(fps))
    }
}

/// The aggregate `signature_pack(fp)`: the value [`pack`] makes of a group's fingerprints, for
/// the migration that turns an older store's postings into one value per document.
struct PackAggregate;

impl rusqlite::functions::Aggregate<Vec<u64>, Vec<u8>> for PackAggregate {
    fn init(&self, _: &mut rusqlite::functions::Context<'_>) -> rusqlite::Result<Vec<u64>> {
        Ok(Vec::new())
    }

    fn step(
        &self,
        ctx: &mut rusqlite::functions::Context<'_>,
        fps: &mut Vec<u64>,
    ) -> rusqlite::Result<()> {
        // SQLite integers are signed: the u64 bit pattern was kept as is.
        fps.push(ctx.get::<i64>(0)? as u64);
        Ok(())
    }

    fn finalize(
        &self,
        _: &mut rusqlite::functions::Context<'_>,
        fps: Option<Vec<u64>>,
    ) -> rusqlite::Result<Vec<u8>> {
        let mut fps = fps.unwrap_or_default();
        fps.sort_unstable();
        fps.dedup();
        Ok(pack(&fps))
    }
}

/// Registers `signature_pack(fp)` on `conn`.
pub(crate) fn register_pack(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_aggregate_function(
        "signature_pack",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        PackAggregate,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_reads_back_and_a_damaged_one_is_refused() {
        let fps = [1, 7, u64::MAX - 1, u64::MAX];
        let mut back = vec![3];
        unpack_into(&pack(&fps), &mut back).unwrap();
        assert_eq!(back, [3, 1, 7, u64::MAX - 1, u64::MAX]);
        let mut torn = pack(&fps);
        torn.pop();
        assert!(unpack_into(&torn, &mut Vec::new())
            .unwrap_err()
            .contains("31 bytes"));
        let swapped = pack(&[7]).into_iter().chain(pack(&[1])).collect::<Vec<_>>();
        assert!(unpack_into(&swapped, &mut Vec::new())
            .unwrap_err()
            .contains("ascending"));
        let repeated = pack(&[7]).repeat(2);
        assert!(unpack_into(&repeated, &mut Vec::new()).is_err());
    }

    #[test]
    fn the_aggregate_packs_a_group_sorted_and_once() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        register_pack(&conn).unwrap();
        let packed: StoredSignature = conn
            .query_row(
                "WITH t(fp) AS (VALUES (5), (-1), (3), (5)) SELECT signature_pack(fp) FROM t",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(packed.0, [3, 5, u64::MAX]);
    }
}
