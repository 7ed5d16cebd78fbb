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
use std::io::{BufRead, Write};
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
    let mut manifest = String::new();
    for d in docs {
        manifest.push_str(&line(d)?);
    }
    super::write_atomic(&path(out), manifest.as_bytes())
}

/// Rewrites the lines of the `changes` in the manifest in `out`: the line of each changed
/// document still stored (`changed`, in the changes' order) replaces or joins the old ones, the
/// line of a deleted one goes. Streams the file through a temporary one.
///
/// Returns false, leaving the manifest as it was, where the file is not a manifest in id
/// order: then it is to be written whole.
pub fn rewrite_changed(out: &Path, changes: &[Change], changed: &[DocMeta]) -> Result<bool> {
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
    let mut old = std::io::BufReader::with_capacity(1 << 20, old);
    let mut new = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(tmp).with_context(|| format!("{}: cannot write", tmp.display()))?,
    );
    let write_err = || format!("{}: cannot write", tmp.display());
    // Each change with the line that replaces the old one (None: the document is gone).
    let mut metas = changed.iter().peekable();
    let mut lines = Vec::with_capacity(changes.len());
    for c in changes {
        let meta = metas.next_if(|m| m.id == c.id);
        lines.push((c.id.as_str(), meta.map(line).transpose()?));
    }
    let mut lines = lines.into_iter().peekable();
    // Buffers reused from line to line: a string made for each of 100,000 lines was a third of
    // the merge's instructions.
    let mut buf: Vec<u8> = Vec::new();
    let mut previous: Option<Vec<u8>> = None;
    loop {
        buf.clear();
        let n = old
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("{}: cannot read", file.display()))?;
        if n == 0 {
            break;
        }
        let Some(id) = std::str::from_utf8(&buf).ok().and_then(line_id) else {
            return Ok(false);
        };
        let id: &str = &id;
        if previous.as_deref().is_some_and(|p| p >= id.as_bytes()) {
            return Ok(false);
        }
        while let Some((_, line)) = lines.next_if(|(c, _)| *c < id) {
            if let Some(l) = line {
                new.write_all(l.as_bytes()).with_context(write_err)?;
            }
        }
        let replaced = lines.next_if(|(c, _)| *c == id);
        let previous = previous.get_or_insert_with(Vec::new);
        previous.clear();
        previous.extend_from_slice(id.as_bytes());
        match replaced {
            Some((_, Some(l))) => new.write_all(l.as_bytes()).with_context(write_err)?,
            Some((_, None)) => {}
            None => new.write_all(&buf).with_context(write_err)?,
        }
    }
    for (_, line) in lines {
        if let Some(l) = line {
            new.write_all(l.as_bytes()).with_context(write_err)?;
        }
    }
    new.into_inner()
        .map_err(|e| e.into_error())
        .with_context(write_err)?;
    Ok(true)
}

/// The id of a manifest line (None: not a whole line [`line`] wrote).
fn line_id(l: &str) -> Option<std::borrow::Cow<'_, str>> {
    let rest = l.strip_prefix("{\"id\":")?;
    if !l.ends_with("}\n") {
        return None;
    }
    // An id without escapes is the text up to the next quote.
    if let Some(plain) = rest
        .strip_prefix('"')
        .and_then(|r| r.split_once('"'))
        .map(|(id, _)| id)
    {
        if !plain.contains('\\') {
            return Some(std::borrow::Cow::Borrowed(plain));
        }
    }
    // Reads the first value only, the id string, not the rest of the line.
    let mut de = serde_json::Deserializer::from_str(rest);
    String::deserialize(&mut de)
        .ok()
        .map(std::borrow::Cow::Owned)
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
