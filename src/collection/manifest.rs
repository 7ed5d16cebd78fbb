//! `manifest.jsonl`: one line per document the store holds, in id order — written whole, or
//! with only the lines of the documents that changed since the last sync rewritten.
//!
//! Both ways give the same bytes: a line is made by [`line`] alone, and the order is the
//! store's id order (SQLite's binary collation, the byte order of Rust's `str`).

use super::MANIFEST_FILE;
use crate::store::changes::Change;
use crate::store::files::FileState;
use crate::store::queries::DocMeta;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct ManifestRow<'a> {
    id: &'a str,
    source: &'a str,
    locator: &'a str,
    url: Option<&'a str>,
    title: Option<&'a str>,
    lang: Option<&'a str>,
    words: u64,
    status: &'a str,
    duplicate_of: Option<&'a str>,
    sha256: &'a str,
    relevance: Option<f64>,
    // Absent rather than null for sources without dates, so their manifests stay as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<&'a str>,
    format: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// The manifest line of a document, newline included.
pub fn line(d: &DocMeta) -> Result<String> {
    let row = ManifestRow {
        id: &d.id,
        source: &d.source,
        locator: &d.locator,
        url: d.url.as_deref(),
        title: d.title.as_deref(),
        lang: d.lang.as_deref(),
        words: d.words,
        status: d.status.as_str(),
        duplicate_of: d.duplicate_of.as_deref(),
        sha256: &d.sha256,
        relevance: d.relevance,
        date: d.date.as_deref(),
        format: d.format.as_deref(),
        reason: d.reason.as_deref(),
    };
    let mut s = serde_json::to_string(&row)?;
    s.push('\n');
    Ok(s)
}

/// The manifest of the collection in `out`.
pub fn path(out: &Path) -> PathBuf {
    out.join(MANIFEST_FILE)
}

/// Writes the manifest of every document (`docs` in id order).
pub fn write_whole(out: &Path, docs: &[DocMeta]) -> Result<()> {
    // Streamed rather than made in memory first: at the end of a build, the whole manifest
    // (28 MB for 80,000 documents) was part of the build's peak.
    super::write_atomic_with(&path(out), |w| {
        for d in docs {
            w.write_all(line(d).map_err(std::io::Error::other)?.as_bytes())?;
        }
        Ok(())
    })
}

/// Rewrites the lines of the `changes` in the manifest in `out`: the line of each changed
/// document still stored (`changed`, in the changes' order) replaces or joins the old ones, the
/// line of a deleted one goes. Streams the file through a temporary one.
///
/// Returns false, leaving the manifest as it was, where the file is not a manifest in id
/// order: then it is to be written whole. With no changes the file is left unread: the caller
/// asks only where the directory matches the last sync's stamp, so it is that sync's file, and
/// copying its 28 MB at 100,000 documents was most of an update that found nothing new.
pub fn rewrite_changed(out: &Path, changes: &[Change], changed: &[DocMeta]) -> Result<bool> {
    if changes.is_empty() {
        return Ok(true);
    }
    let file = path(out);
    let tmp = file.with_extension("tmp");
    let merged = merge(&file, &tmp, changes, changed);
    match merged {
        Ok(true) => {
            std::fs::rename(&tmp, &file)
                .with_context(|| format!("{}: cannot write", file.display()))?;
            Ok(true)
        }
        Ok(false) | Err(_) => {
            // The temporary file is the only thing written; the caller writes the manifest whole.
            let _ = std::fs::remove_file(&tmp);
            merged
        }
    }
}

fn merge(file: &Path, tmp: &Path, changes: &[Change], changed: &[DocMeta]) -> Result<bool> {
    let Ok(old) = std::fs::File::open(file) else {
        return Ok(false);
    };
    let new =
        std::fs::File::create(tmp).with_context(|| format!("{}: cannot write", tmp.display()))?;
    merge_lines(old, new, MERGE_CHUNK, changes, changed).with_context(|| {
        format!(
            "{}: cannot rewrite through {}",
            file.display(),
            tmp.display()
        )
    })
}

/// Bytes of the old manifest read at a time by [`merge_lines`].
const MERGE_CHUNK: usize = 1 << 20;

/// The merge of [`rewrite_changed`] from `old` to `new`, reading `chunk` bytes at a time. The
/// lines between two changes are copied as one run of bytes: copying, validating and comparing
/// each of 100,000 lines on its own cost more than reading and writing the file.
fn merge_lines(
    mut old: impl Read,
    new: impl Write,
    chunk: usize,
    changes: &[Change],
    changed: &[DocMeta],
) -> Result<bool> {
    let mut new = std::io::BufWriter::with_capacity(1 << 20, new);
    // Each change with the line that replaces the old one (None: the document is gone).
    let mut metas = changed.iter().peekable();
    let mut lines = Vec::with_capacity(changes.len());
    for c in changes {
        let meta = metas.next_if(|m| m.id == c.id);
        lines.push((c.id.as_bytes(), meta.map(line).transpose()?));
    }
    let mut lines = lines.into_iter().peekable();
    let mut previous: Vec<u8> = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(chunk);
    // `buf` holds whole lines up to `whole`, then the start of a line the next read finishes.
    loop {
        let kept = buf.len();
        let n = (&mut old).take(chunk as u64).read_to_end(&mut buf)?;
        if n == 0 {
            if kept > 0 {
                // A last line without its newline: torn.
                return Ok(false);
            }
            break;
        }
        // What was kept from the last read holds no newline: only the new bytes are searched,
        // so a line longer than a chunk is not searched again with every read.
        let whole = match memchr::memrchr(b'\n', &buf[kept..]) {
            Some(last) => kept + last + 1,
            None => continue,
        };
        if std::str::from_utf8(&buf[..whole]).is_err() {
            return Ok(false);
        }
        // The start of the lines read but not written yet.
        let mut run = 0;
        let mut at = 0;
        while at < whole {
            let end = at + memchr::memchr(b'\n', &buf[at..whole]).map_or(whole - at, |i| i + 1);
            let l = &buf[at..end];
            let Some(id) = line_id_bytes(l) else {
                return Ok(false);
            };
            if !previous.is_empty() && previous.as_slice() >= id.as_ref() {
                return Ok(false);
            }
            if lines.peek().is_some_and(|(c, _)| *c <= id.as_ref()) {
                new.write_all(&buf[run..at])?;
                run = at;
                while let Some((_, l)) = lines.next_if(|(c, _)| *c < id.as_ref()) {
                    if let Some(l) = l {
                        new.write_all(l.as_bytes())?;
                    }
                }
                if let Some((_, l)) = lines.next_if(|(c, _)| *c == id.as_ref()) {
                    if let Some(l) = l {
                        new.write_all(l.as_bytes())?;
                    }
                    run = end;
                }
            }
            previous.clear();
            previous.extend_from_slice(&id);
            at = end;
        }
        new.write_all(&buf[run..whole])?;
        buf.drain(..whole);
    }
    for (_, line) in lines {
        if let Some(l) = line {
            new.write_all(l.as_bytes())?;
        }
    }
    new.into_inner().map_err(|e| e.into_error())?;
    Ok(true)
}

/// The id of a manifest line as bytes, the line being valid UTF-8 (None: not a whole line
/// [`line`] wrote).
fn line_id_bytes(l: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
    let rest = l.strip_prefix(b"{\"id\":\"")?;
    if !l.ends_with(b"}\n") {
        return None;
    }
    // An id without escapes is the text up to the next quote.
    let quote = memchr::memchr(b'"', rest)?;
    let plain = &rest[..quote];
    if memchr::memchr(b'\\', plain).is_none() {
        return Some(std::borrow::Cow::Borrowed(plain));
    }
    let id = line_id(std::str::from_utf8(l).ok()?)?;
    Some(std::borrow::Cow::Owned(id.into_bytes()))
}

/// The id of a manifest line, escapes read as JSON (None: not a whole line [`line`] wrote):
/// [`line_id_bytes`] for an id with a backslash.
fn line_id(l: &str) -> Option<String> {
    let rest = l.strip_prefix("{\"id\":")?;
    if !l.ends_with("}\n") {
        return None;
    }
    // Reads the first value only, the id string, not the rest of the line.
    let mut de = serde_json::Deserializer::from_str(rest);
    String::deserialize(&mut de).ok()
}

/// What the collection directory looked like when a sync ended: the manifest's size and time,
/// and the time of the `docs/` folder, which changes when a file in it is made, removed or
/// renamed. A directory that no longer matches was changed by someone else, or by a sync that
/// did not end, and is synced whole. Neither path nor inode is part of it: a collection moved
/// or copied whole (`cp -a`) is still the one the store knows.
pub fn stamp(out: &Path, docs_dir: &Path) -> Option<String> {
    let m = FileState::of(&path(out))?;
    let d = FileState::of(docs_dir)?;
    Some(format!(
        "manifest {} bytes {} ns; docs {} ns",
        m.size, m.mtime_ns, d.mtime_ns
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str, words: u64) -> DocMeta {
        DocMeta {
            num: 0,
            id: id.to_string(),
            source: "local".into(),
            source_rank: 0,
            locator: format!("jsonl:{id}"),
            url: None,
            title: Some("ü title".into()),
            lang: Some("en".into()),
            raw_bytes: 10,
            text_bytes: 10,
            words,
            sha256: "00".into(),
            status: crate::store::Status::Kept,
            reason: None,
            duplicate_of: None,
            dropped_by: None,
            added_run: 1,
            date: None,
            relevance: None,
            relevance_terms: None,
            format: Some("text".into()),
        }
    }

    fn whole(docs: &[DocMeta]) -> Vec<u8> {
        docs.iter()
            .map(|d| line(d).unwrap())
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn a_merge_writes_what_the_whole_manifest_would_at_any_chunk_size() {
        let mut ids: Vec<String> = (0..60).map(|i| format!("doc{i:03}")).collect();
        ids.push("quote\"d".into());
        ids.push("back\\slash".into());
        ids.sort();
        let old: Vec<DocMeta> = ids.iter().step_by(2).map(|id| meta(id, 1)).collect();
        // New documents (the odd ones, and one before and one after all), one changed (words),
        // one deleted.
        let mut now: Vec<DocMeta> = ids.iter().map(|id| meta(id, 1)).collect();
        now[4].words = 9;
        let deleted = now.remove(10).id;
        let mut change_ids: Vec<String> = ids.iter().skip(1).step_by(2).cloned().collect();
        change_ids.extend([
            now[4].id.clone(),
            deleted.clone(),
            "aaa".into(),
            "zzz".into(),
        ]);
        now.insert(0, meta("aaa", 2));
        now.push(meta("zzz", 3));
        change_ids.sort();
        let changes: Vec<Change> = change_ids
            .iter()
            .map(|id| Change {
                id: id.clone(),
                n: 1,
            })
            .collect();
        let changed: Vec<DocMeta> = changes
            .iter()
            .filter_map(|c| now.iter().find(|d| d.id == c.id).cloned())
            .collect();
        for chunk in [1, 2, 7, 100, 333, 1 << 20] {
            let mut out = Vec::new();
            let merged =
                merge_lines(&whole(&old)[..], &mut out, chunk, &changes, &changed).unwrap();
            assert!(merged, "chunk {chunk}");
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(whole(&now)).unwrap(),
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn no_changes_leave_the_file_unread_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = whole(&[meta("a", 1), meta("b", 1)]);
        std::fs::write(path(dir.path()), &bytes).unwrap();
        let before = std::fs::metadata(path(dir.path()))
            .unwrap()
            .modified()
            .unwrap();
        assert!(rewrite_changed(dir.path(), &[], &[]).unwrap());
        assert_eq!(std::fs::read(path(dir.path())).unwrap(), bytes);
        let after = std::fs::metadata(path(dir.path()))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after);
        assert!(!path(dir.path()).with_extension("tmp").exists());
        // One change: the file is merged, the new line among the old.
        let changes = [Change {
            id: "ab".into(),
            n: 1,
        }];
        assert!(rewrite_changed(dir.path(), &changes, &[meta("ab", 1)]).unwrap());
        assert_eq!(
            std::fs::read(path(dir.path())).unwrap(),
            whole(&[meta("a", 1), meta("ab", 1), meta("b", 1)])
        );
    }

    #[test]
    fn a_merge_gives_up_on_a_file_it_did_not_write() {
        let old = whole(&[meta("a", 1), meta("b", 1)]);
        let changes = [Change {
            id: "c".into(),
            n: 1,
        }];
        let changed = [meta("c", 1)];
        let mut unordered = old.clone();
        unordered.extend(whole(&[meta("a0", 1)]));
        let mut torn = old.clone();
        torn.pop();
        let mut invalid = old.clone();
        invalid[40] = 0xFF;
        for (what, bytes) in [
            ("out of order", unordered),
            ("torn", torn),
            ("not UTF-8", invalid),
            ("not a manifest", b"{\"x\":1}\n".to_vec()),
        ] {
            for chunk in [3, 1 << 20] {
                let merged =
                    merge_lines(&bytes[..], Vec::new(), chunk, &changes, &changed).unwrap();
                assert!(!merged, "{what}, chunk {chunk}");
            }
        }
    }

    #[test]
    fn a_line_gives_back_its_id_even_with_escapes_and_nothing_else_does() {
        for id in ["plain", "quote\"d", "back\\slash", "é-ü", "tab\tnew\nline"] {
            let l = serde_json::to_string(&serde_json::json!({"id": id, "x": 1})).unwrap() + "\n";
            assert_eq!(line_id(&l).as_deref(), Some(id), "{l}");
        }
        assert_eq!(line_id("{\"id\":\"a\",\"x\":1}"), None, "no newline: torn");
        assert_eq!(line_id("{\"source\":\"a\"}\n"), None);
        assert_eq!(line_id("garbage\n"), None);
    }
}
