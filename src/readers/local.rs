//! `local`: texts already on disk — a directory of `.txt`/`.html` files or a JSONL file.

use super::{Payload, RawDoc, Reader};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// A directory of `.txt`, `.html`, `.htm` (optionally `.gz`) files, or a `.jsonl` file.
pub struct LocalReader {
    name: String,
    rank: u32,
    path: PathBuf,
}

impl LocalReader {
    /// A local source at `path` (already resolved against the topic file).
    pub fn new(name: String, rank: u32, path: PathBuf) -> Self {
        LocalReader { name, rank, path }
    }
}

/// One line of a JSONL input.
#[derive(Debug, Deserialize)]
pub struct JsonDoc<'a> {
    /// Document id (string or number).
    pub id: JsonId,
    /// The text.
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    /// Web address.
    #[serde(default)]
    pub url: Option<String>,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
}

/// A JSONL id: strings and integers are both accepted.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum JsonId {
    /// A string id.
    Str(String),
    /// A numeric id.
    Num(i64),
}

impl JsonId {
    /// The id as text.
    pub fn into_string(self) -> String {
        match self {
            JsonId::Str(s) => s,
            JsonId::Num(n) => n.to_string(),
        }
    }
}

/// Parses one JSONL line; errors name the file and line.
pub fn parse_json_line<'a>(path: &Path, line_no: usize, line: &'a str) -> Result<JsonDoc<'a>> {
    serde_json::from_str(line).map_err(|e| {
        crate::error::bad_input(format!(
            "{}:{}:{}: {}",
            path.display(),
            line_no,
            e.column(),
            e.to_string().split(" at line ").next().unwrap_or_default()
        ))
    })
}

/// Calls `f(line_no, line)` for each non-blank line of a JSONL file (1-based line numbers).
pub fn for_each_jsonl_line(
    path: &Path,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut buf = String::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader.read_line(&mut buf).with_context(|| {
            format!(
                "{}:{}: cannot read (not UTF-8?)",
                path.display(),
                line_no + 1
            )
        })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let line = buf.trim_end_matches(['\n', '\r']);
        if !line.trim().is_empty() {
            f(line_no, line)?;
        }
    }
}

/// Text files under `dir` with the given extensions, sorted by path so runs are repeatable.
pub fn list_files(dir: &Path, exts: &[&str]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("{}: cannot list", d.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("{}: cannot list", d.display()))?;
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                let lower = name.to_ascii_lowercase();
                if exts.iter().any(|x| lower.ends_with(x)) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads a file, gunzipping `.gz`, decoding UTF-8 (invalid bytes replaced, with a warning).
pub fn read_text_file(path: &Path, warn: &mut dyn FnMut(String)) -> Result<(String, u64)> {
    let mut bytes = Vec::new();
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
    {
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}: not a valid gzip file", path.display()))?;
    } else {
        BufReader::new(file)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}: cannot read", path.display()))?;
    }
    let raw = bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            warn(format!(
                "{}: not valid UTF-8 at byte {}; invalid bytes replaced",
                path.display(),
                e.utf8_error().valid_up_to()
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let text = text
        .strip_prefix('\u{FEFF}')
        .map(str::to_string)
        .unwrap_or(text);
    Ok((text, raw))
}

/// Extensions the directory form reads.
pub const LOCAL_EXTS: &[&str] = &[
    ".txt",
    ".html",
    ".htm",
    ".wikitext",
    ".txt.gz",
    ".html.gz",
    ".htm.gz",
    ".wikitext.gz",
];

impl Reader for LocalReader {
    fn name(&self) -> &str {
        &self.name
    }

    fn collect(
        &self,
        sink: &mut dyn FnMut(RawDoc) -> Result<()>,
        warn: &mut dyn FnMut(String),
    ) -> Result<()> {
        let p = &self.path;
        if p.is_dir() {
            for file in list_files(p, LOCAL_EXTS)? {
                let (body, raw_bytes) = read_text_file(&file, warn)?;
                let lower = file.to_string_lossy().to_ascii_lowercase();
                let payload = if lower.contains(".htm") {
                    Payload::Html
                } else if lower.contains(".wikitext") {
                    Payload::Wikitext
                } else {
                    Payload::PlainText
                };
                let rel = file.strip_prefix(p).unwrap_or(&file);
                sink(RawDoc {
                    source: self.name.clone(),
                    source_rank: self.rank,
                    locator: rel.to_string_lossy().replace('\\', "/"),
                    url: None,
                    title: None,
                    body,
                    payload,
                    lang: None,
                    raw_bytes,
                })?;
            }
            Ok(())
        } else if p.is_file() {
            let mut seen = std::collections::HashSet::new();
            for_each_jsonl_line(p, |line_no, line| {
                let doc = parse_json_line(p, line_no, line)?;
                let id = doc.id.into_string();
                if !seen.insert(id.clone()) {
                    return Err(crate::error::bad_input(format!(
                        "{}:{}: id `{id}` appears twice",
                        p.display(),
                        line_no
                    )));
                }
                sink(RawDoc {
                    source: self.name.clone(),
                    source_rank: self.rank,
                    locator: doc.url.clone().unwrap_or_else(|| format!("jsonl:{id}")),
                    url: doc.url,
                    title: doc.title,
                    raw_bytes: line.len() as u64,
                    body: doc.text.into_owned(),
                    payload: Payload::PlainText,
                    lang: None,
                })
            })
        } else {
            Err(crate::error::bad_input(format!(
                "{}: no such file or directory (local source `{}`)",
                p.display(),
                self.name
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(src: &LocalReader) -> Result<Vec<RawDoc>> {
        let mut docs = Vec::new();
        src.collect(
            &mut |d| {
                docs.push(d);
                Ok(())
            },
            &mut |_| {},
        )?;
        Ok(docs)
    }

    #[test]
    fn reads_a_directory_sorted_with_payload_kinds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.txt"), "плain текст").unwrap();
        std::fs::write(dir.path().join("sub/a.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.path().join("skip.pdf"), "x").unwrap();
        let docs = collect(&LocalReader::new("local".into(), 0, dir.path().into())).unwrap();
        let got: Vec<(&str, Payload)> = docs
            .iter()
            .map(|d| (d.locator.as_str(), d.payload))
            .collect();
        assert_eq!(
            got,
            vec![("b.txt", Payload::PlainText), ("sub/a.html", Payload::Html)]
        );
    }

    #[test]
    fn reads_jsonl_and_names_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        std::fs::write(&p, "{\"id\": 1, \"text\": \"a\", \"url\": \"http://x/\"}\n\n{\"id\": \"b\", \"text\": 5}\n").unwrap();
        let e = collect(&LocalReader::new("local".into(), 0, p.clone())).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("{}:3:", p.display())),
            "{e}"
        );
        std::fs::write(&p, "{\"id\": 1, \"text\": \"a\", \"url\": \"http://x/\"}\n").unwrap();
        let docs = collect(&LocalReader::new("local".into(), 0, p)).unwrap();
        assert_eq!(docs[0].url.as_deref(), Some("http://x/"));
    }

    #[test]
    fn repeated_jsonl_id_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"a\",\"text\":\"y\"}\n",
        )
        .unwrap();
        let e = collect(&LocalReader::new("local".into(), 0, p)).unwrap_err();
        assert!(e.to_string().contains(":2: id `a` appears twice"), "{e}");
    }
}
