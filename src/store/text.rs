//! How the store keeps a text: a zstd frame at level 1, in a BLOB.
//!
//! Only the store reads these copies (the collection's `docs/` holds its kept texts as plain
//! files), so they are packed: on the dev corpus a frame per text is 2.36 times smaller than the
//! text, and packing costs 0.4 s of CPU per 76 MB, unpacking 0.17 s
//! (`examples/text_compression.rs`, which also measures zstd-3, lz4 and deflate). A frame per
//! text keeps every text readable on its own, which the verification of a pair needs.
//! Stores written before schema v10 held plain TEXT values; the v10 migration packs them, and a
//! plain value still reads as itself.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};

/// zstd level of the store's frames: level 3 is 3 % smaller and 12 % slower to pack.
const LEVEL: i32 = 1;

/// The frame the store keeps for `text`. It carries a checksum of the text, so a damaged page
/// that still decodes is caught when read, not exported.
pub fn pack(text: &str) -> Vec<u8> {
    thread_local! {
        static PACKER: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    PACKER.with(|packer| {
        let mut packer = packer.borrow_mut();
        let packer = packer.get_or_insert_with(|| {
            let mut c = zstd::bulk::Compressor::new(LEVEL).expect("zstd level 1 exists");
            c.include_checksum(true).expect("zstd has checksums");
            c
        });
        // Compressing from memory into memory fails only when memory does.
        packer
            .compress(text.as_bytes())
            .expect("zstd cannot fail on an in-memory text")
    })
}

/// A frame's header may claim any size; above this the claim is not trusted with an allocation
/// and the frame is unpacked as a stream, which grows only as far as the data really goes.
const TRUSTED_CLAIM: u64 = 64 << 20;

/// The bytes of `frame`. The decoding context is kept per thread: creating one per text cost
/// 17 % of an update's time (a context zeroes its window tables when it is made).
fn unpack(frame: &[u8]) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static UNPACKER: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(claimed)) if claimed <= TRUSTED_CLAIM => UNPACKER.with(|unpacker| {
            let mut unpacker = unpacker.borrow_mut();
            let unpacker = match unpacker.as_mut() {
                Some(u) => u,
                None => unpacker.insert(zstd::bulk::Decompressor::new()?),
            };
            // zstd itself refuses a frame whose content differs from the size its header claims.
            unpacker.decompress(frame, claimed as usize)
        }),
        _ => zstd::stream::decode_all(frame),
    }
}

/// A text as read from the store: unpacked, and checked to be UTF-8. A value that is neither a
/// frame of UTF-8 text nor plain text is a conversion failure, which the store reports as
/// corruption.
pub struct StoredText(pub String);

impl FromSql for StoredText {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let bytes = match value {
            ValueRef::Text(plain) => plain.to_vec(),
            ValueRef::Blob(frame) => unpack(frame)
                .map_err(|e| FromSqlError::Other(format!("a text's frame: {e}").into()))?,
            _ => return Err(FromSqlError::InvalidType),
        };
        String::from_utf8(bytes)
            .map(StoredText)
            .map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

/// A text as it lies in the store, not unpacked yet: read on one thread, unpacked on many.
pub enum StoredFrame {
    /// A plain TEXT value (stores before v10), its bytes not checked yet.
    Plain(Vec<u8>),
    /// A frame.
    Packed(Vec<u8>),
    /// Neither: a value the schema does not allow there.
    Other(rusqlite::types::Type),
}

impl FromSql for StoredFrame {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Ok(match value {
            ValueRef::Text(plain) => StoredFrame::Plain(plain.to_vec()),
            ValueRef::Blob(frame) => StoredFrame::Packed(frame.to_vec()),
            other => StoredFrame::Other(other.data_type()),
        })
    }
}

impl StoredFrame {
    /// The text, or the conversion failure reading it as a [`StoredText`] gives.
    pub fn unpack(&self) -> rusqlite::Result<String> {
        use rusqlite::types::Type;
        let (value, kind) = match self {
            StoredFrame::Plain(b) => (ValueRef::Text(b), Type::Text),
            StoredFrame::Packed(b) => (ValueRef::Blob(b), Type::Blob),
            StoredFrame::Other(t) => {
                return Err(rusqlite::Error::InvalidColumnType(0, "text".into(), *t))
            }
        };
        StoredText::column_result(value)
            .map(|t| t.0)
            .map_err(|e| match e {
                FromSqlError::Other(cause) => {
                    rusqlite::Error::FromSqlConversionFailure(0, kind, cause)
                }
                _ => rusqlite::Error::InvalidColumnType(0, "text".into(), kind),
            })
    }
}

/// Registers `zstd_pack(text)` on `conn`, for the migration that packs the texts of older stores.
pub(crate) fn register_pack(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "zstd_pack",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text: String = ctx.get(0)?;
            Ok(pack(&text))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<String> {
        conn.query_row(sql, [], |r| r.get::<_, StoredText>(0))
            .map(|t| t.0)
    }

    #[test]
    fn a_packed_text_reads_back_and_is_smaller() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let text = "Собака — домашнее животное. The dog is a domestic animal. ".repeat(50);
        let frame = pack(&text);
        assert!(frame.len() * 5 < text.len(), "{} bytes", frame.len());
        let back: String = conn
            .query_row("SELECT ?1", [&frame], |r| r.get::<_, StoredText>(0))
            .unwrap()
            .0;
        assert_eq!(back, text);
    }

    #[test]
    fn a_plain_text_of_an_older_store_reads_as_itself() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        assert_eq!(read(&conn, "SELECT 'plain'").unwrap(), "plain");
    }

    /// The error reading `frame` as a stored text gives.
    fn read_err(conn: &rusqlite::Connection, frame: &[u8]) -> rusqlite::Error {
        conn.query_row("SELECT ?1", [frame], |r| r.get::<_, StoredText>(0))
            .err()
            .expect("the frame should not read as a text")
    }

    #[test]
    fn a_damaged_frame_or_a_frame_of_bytes_is_a_conversion_failure() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut frame = pack(&"a dog and a cat ".repeat(40));
        let mid = frame.len() / 2;
        frame.truncate(mid);
        let e = read_err(&conn, &frame);
        assert!(crate::store::is_corruption(&e), "{e}");
        let not_utf8 = zstd::bulk::compress(&[0xff, 0xfe, 0x00], 1).unwrap();
        let e = read_err(&conn, &not_utf8);
        assert!(crate::store::is_corruption(&e), "{e}");
    }

    #[test]
    fn a_frame_changed_in_place_fails_its_checksum() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let text = "the quick brown fox jumps over the lazy dog";
        let mut frame = pack(text);
        // Raw literals of a short text: flipping a byte of the text itself still decodes.
        let at = frame
            .windows(5)
            .position(|w| w == b"quick")
            .expect("a short text is stored as literals");
        frame[at] = b'Q';
        let e = read_err(&conn, &frame);
        assert!(crate::store::is_corruption(&e), "{e}");
    }

    #[test]
    fn a_frame_read_now_and_unpacked_later_is_the_text_or_corruption() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let frame = pack("a cat on a mat");
        let later: StoredFrame = conn.query_row("SELECT ?1", [&frame], |r| r.get(0)).unwrap();
        assert_eq!(later.unpack().unwrap(), "a cat on a mat");
        let broken: StoredFrame = conn
            .query_row("SELECT ?1", [&frame[..frame.len() - 3]], |r| r.get(0))
            .unwrap();
        let e = broken.unpack().err().unwrap();
        assert!(crate::store::is_corruption(&e), "{e}");
        let number: StoredFrame = conn.query_row("SELECT 7", [], |r| r.get(0)).unwrap();
        assert!(crate::store::is_corruption(&number.unpack().err().unwrap()));
        let not_utf8: StoredFrame = conn
            .query_row("SELECT CAST(x'fffe' AS TEXT)", [], |r| r.get(0))
            .unwrap();
        assert!(crate::store::is_corruption(
            &not_utf8.unpack().err().unwrap()
        ));
    }

    #[test]
    fn the_sql_function_packs_what_the_reader_unpacks() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        register_pack(&conn).unwrap();
        assert_eq!(
            read(&conn, "SELECT zstd_pack('кот и пёс')").unwrap(),
            "кот и пёс"
        );
    }
}
