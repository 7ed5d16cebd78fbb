//! The job behind `collect clean INPUT...`: read files and directories, run the cleaners on
//! them in parallel, write one `.txt` per input or print the texts (for curators and for
//! outside evaluation).

use crate::clean::{self, CleanContext};
use crate::error::bad_input;
use crate::readers::local::{list_files, read_text_file};
use crate::readers::Payload;
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Which cleaner to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// HTML main-content extraction.
    Html,
    /// Wiki markup.
    Wikitext,
    /// By file name: `.wikitext` → wikitext, otherwise HTML.
    Auto,
}

/// Input extensions `clean` reads in directories.
const EXTS: &[&str] = &[
    ".html",
    ".htm",
    ".xhtml",
    ".html.gz",
    ".htm.gz",
    ".wikitext",
    ".wikitext.gz",
];

/// One input file and the name of its output (`X.html`, `X.html.gz`, `X.wikitext` → `X.txt`).
fn output_name(rel: &Path) -> PathBuf {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let mut stem = name.as_str();
    for ext in EXTS.iter().chain([".txt"].iter()) {
        if lower.ends_with(ext) {
            stem = &name[..name.len() - ext.len()];
            break;
        }
    }
    rel.with_file_name(format!("{stem}.txt"))
}

fn payload_of(kind: Kind, path: &Path) -> Payload {
    match kind {
        Kind::Html => Payload::Html,
        Kind::Wikitext => Payload::Wikitext,
        Kind::Auto => {
            if path
                .to_string_lossy()
                .to_ascii_lowercase()
                .contains(".wikitext")
            {
                Payload::Wikitext
            } else {
                Payload::Html
            }
        }
    }
}

/// Cleans every input; writes `DIR/<name>.txt` per input, or the texts to stdout.
pub fn run(inputs: &[PathBuf], kind: Kind, lang: &str, out: Option<&Path>) -> Result<usize> {
    // (file, path relative to the output directory)
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for input in inputs {
        if input.is_dir() {
            for f in list_files(input, EXTS)? {
                let rel = f.strip_prefix(input).unwrap_or(&f).to_path_buf();
                files.push((f, rel));
            }
        } else if input.is_file() {
            let rel = PathBuf::from(input.file_name().unwrap_or_default());
            files.push((input.clone(), rel));
        } else {
            return Err(bad_input(format!(
                "{}: no such file or directory",
                input.display()
            )));
        }
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let results: Vec<Result<(PathBuf, String)>> = files
        .par_iter()
        .map(|(file, rel)| {
            let (body, _) = read_text_file(file, &mut |w| eprintln!("warning: {w}"))?;
            let ctx = CleanContext {
                url: None,
                lang: Some(lang),
            };
            let text = match clean::clean_text(payload_of(kind, file), &body, &ctx) {
                Ok((_, text)) => text,
                Err(defect) => {
                    eprintln!("warning: {}: {}; no text", file.display(), defect.as_str());
                    String::new()
                }
            };
            if let Some(dir) = out {
                let dst = dir.join(output_name(rel));
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("{}: cannot create", parent.display()))?;
                }
                std::fs::write(&dst, format!("{text}\n"))
                    .with_context(|| format!("{}: cannot write", dst.display()))?;
            }
            Ok((file.clone(), text))
        })
        .collect();
    let mut stdout = std::io::stdout().lock();
    let many = results.len() > 1;
    for r in &results {
        let (file, text) = match r {
            Ok(x) => x,
            Err(e) => return Err(anyhow::anyhow!("{e:#}")),
        };
        if out.is_none() {
            if many {
                writeln!(stdout, "==> {} <==", file.display())?;
            }
            writeln!(stdout, "{text}")?;
            if many {
                writeln!(stdout)?;
            }
        }
    }
    Ok(results.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_drop_input_extensions() {
        assert_eq!(
            output_name(Path::new("a/X.html.gz")),
            PathBuf::from("a/X.txt")
        );
        assert_eq!(output_name(Path::new("X.wikitext")), PathBuf::from("X.txt"));
        assert_eq!(output_name(Path::new("X.HTML")), PathBuf::from("X.txt"));
    }

    #[test]
    fn cleans_a_directory_into_txt_files() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(
            src.join("p.html"),
            "<html><body><nav>Menu</nav><article><h1>Заголовок</h1><p>Первый абзац текста статьи, достаточно длинный.</p></article></body></html>",
        )
        .unwrap();
        std::fs::write(
            src.join("w.wikitext"),
            "'''Литва''' — [[государство|страна]].{{cite}}",
        )
        .unwrap();
        let out = dir.path().join("out");
        assert_eq!(run(&[src], Kind::Auto, "ru", Some(&out)).unwrap(), 2);
        let w = std::fs::read_to_string(out.join("w.txt")).unwrap();
        assert_eq!(w, "Литва — страна.\n");
        let p = std::fs::read_to_string(out.join("p.txt")).unwrap();
        assert!(p.contains("Первый абзац") && !p.contains("Menu"), "{p}");
    }
}
