//! `collect export`: the kept texts in the user's formats (txt files, JSONL, CSV).

use super::write_atomic;
use crate::store::queries::{DocMeta, TextOrder};
use crate::store::{Status, Store};
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Output formats of `collect export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One `<id>.txt` per text in a directory.
    Txt,
    /// One JSON object per line: id, text, title, url, source, lang, words, relevance, date
    /// when the source gives one, and format.
    Jsonl,
    /// RFC 4180 CSV with a header, same columns as JSONL.
    Csv,
    /// The stored pairs (duplicate, contained, weak) as TSV with a header: pair id, both
    /// document ids, resemblance, both containments, verdict, verified, shared shingles.
    Pairs,
}

/// One exported text: the columns every format carries.
#[derive(Serialize)]
struct ExportRow<'a> {
    id: &'a str,
    text: &'a str,
    title: Option<&'a str>,
    url: Option<&'a str>,
    source: &'a str,
    lang: Option<&'a str>,
    words: u64,
    relevance: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<&'a str>,
    format: Option<&'a str>,
}

fn csv_field(out: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

/// Writes the texts in the collection (status `kept`, so every decision is honoured) as
/// JSONL or CSV to `w`, in id order; returns how many.
pub fn export_stream(store: &Store, format: Format, w: &mut dyn std::io::Write) -> Result<usize> {
    if format == Format::Pairs {
        return export_pairs(store, w);
    }
    let metas: BTreeMap<String, DocMeta> = store
        .document_metas()?
        .into_iter()
        .filter(|d| d.status == Status::Kept)
        .map(|d| (d.id.clone(), d))
        .collect();
    if format == Format::Csv {
        w.write_all(b"id,text,title,url,source,lang,words,relevance,date,format\r\n")?;
    }
    let mut n = 0;
    store.each_text_with_status(Status::Kept, TextOrder::Id, &mut |id, text| {
        let Some(d) = metas.get(&id) else {
            return Ok(());
        };
        let row = ExportRow {
            id: &d.id,
            text: &text,
            title: d.title.as_deref(),
            url: d.url.as_deref(),
            source: &d.source,
            lang: d.lang.as_deref(),
            words: d.words,
            relevance: d.relevance,
            date: d.date.as_deref(),
            format: d.format.as_deref(),
        };
        let mut line = String::new();
        match format {
            Format::Jsonl => line = serde_json::to_string(&row)?,
            Format::Csv => {
                for (i, f) in [
                    row.id,
                    row.text,
                    row.title.unwrap_or(""),
                    row.url.unwrap_or(""),
                    row.source,
                    row.lang.unwrap_or(""),
                    &row.words.to_string(),
                    &row.relevance.map(|r| r.to_string()).unwrap_or_default(),
                    row.date.unwrap_or(""),
                    row.format.unwrap_or(""),
                ]
                .iter()
                .enumerate()
                {
                    if i > 0 {
                        line.push(',');
                    }
                    csv_field(&mut line, f);
                }
                line.push('\r');
            }
            Format::Txt | Format::Pairs => {
                anyhow::bail!("{format:?} export is not a stream of texts")
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        n += 1;
        Ok(())
    })?;
    w.flush()?;
    Ok(n)
}

/// Writes the stored pairs as TSV, in id order of their documents; returns how many.
fn export_pairs(store: &Store, w: &mut dyn std::io::Write) -> Result<usize> {
    w.write_all(b"pair\ta\tb\tresemblance\tcont_a_in_b\tcont_b_in_a\tverdict\tverified\tshared\n")?;
    let pairs = store.pairs()?;
    for p in &pairs {
        writeln!(
            w,
            "{}\t{}\t{}\t{:.6}\t{:.6}\t{:.6}\t{}\t{}\t{}",
            p.id,
            p.a,
            p.b,
            p.resemblance,
            p.cont_a_in_b,
            p.cont_b_in_a,
            p.verdict.as_str(),
            p.verified,
            p.shared
        )?;
    }
    w.flush()?;
    Ok(pairs.len())
}

/// Writes each text in the collection as `<dir>/<id>.txt`; returns how many.
pub fn export_txt(store: &Store, dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut n = 0;
    store.each_text_with_status(Status::Kept, TextOrder::Id, &mut |id, mut text| {
        text.push('\n');
        write_atomic(&dir.join(format!("{id}.txt")), text.as_bytes())?;
        n += 1;
        Ok(())
    })?;
    Ok(n)
}
