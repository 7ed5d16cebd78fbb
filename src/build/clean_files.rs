//! The job behind `collect clean INPUT...`: read files and directories, run the cleaners on
//! them in parallel, write one `.txt` per input or print the texts (for curators and for
//! outside evaluation).
//!
//! Inputs are read as a build reads a local source: directories walked safely, only regular
//! files read, each capped; what cannot be read is skipped and returned (the command prints
//! it and exits 3), or with `strict` ends the run at the first such input as bad input.

use crate::clean::{self, CleanContext};
use crate::error::{bad_input, Skip};
use crate::readers::local::{read_file_capped, DEFAULT_MAX_FILE_BYTES};
use crate::readers::walk::{walk, WalkOptions};
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

/// How `collect clean` runs.
#[derive(Debug, Clone, Copy)]
pub struct CleanOptions<'a> {
    /// Which cleaner.
    pub kind: Kind,
    /// Wiki language, for namespace names and section titles.
    pub lang: &'a str,
    /// Write `DIR/<name>.txt` per input here instead of printing the texts.
    pub out: Option<&'a Path>,
    /// Stop at the first input that cannot be read.
    pub strict: bool,
}

/// What a clean did.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// Files cleaned.
    pub cleaned: usize,
    /// Inputs not read, in input order.
    pub skipped: Vec<Skip>,
}

/// Cleans every input; writes `DIR/<name>.txt` per input, or the texts to stdout.
pub fn run(inputs: &[PathBuf], opts: &CleanOptions<'_>) -> Result<Cleaned> {
    let mut done = Cleaned::default();
    // (file, path relative to the output directory)
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for input in inputs {
        match std::fs::metadata(input) {
            Ok(m) if m.is_dir() => {
                let w = walk(
                    input,
                    &WalkOptions {
                        exts: EXTS,
                        follow_links: false,
                    },
                )?;
                for f in w.files {
                    let rel = f.strip_prefix(input).unwrap_or(&f).to_path_buf();
                    files.push((f, rel));
                }
                done.skipped.extend(w.skipped);
            }
            // Anything else named on the command line is tried: the reader refuses what is
            // not a regular file without opening it in a way that could block.
            Ok(_) => {
                let rel = PathBuf::from(input.file_name().unwrap_or_default());
                files.push((input.clone(), rel));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad_input(format!(
                    "{}: no such file or directory",
                    input.display()
                )));
            }
            Err(e) => {
                done.skipped.push(Skip::file(
                    input,
                    crate::error::SkipReason::Unreadable,
                    e.to_string(),
                ));
            }
        }
    }
    if opts.strict {
        if let Some(s) = done.skipped.iter().find(|s| s.reason.loses_input()) {
            return Err(s.clone().into_error());
        }
    }
    if let Some(dir) = opts.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let results: Vec<Result<std::result::Result<(PathBuf, String), Skip>>> = files
        .par_iter()
        .map(|(file, rel)| {
            let body = match read_file_capped(file, DEFAULT_MAX_FILE_BYTES) {
                Ok(f) => {
                    if let Some(w) = f.warning {
                        eprintln!("warning: {w}");
                    }
                    f.text
                }
                Err(skip) => return Ok(Err(skip)),
            };
            let ctx = CleanContext {
                url: None,
                lang: Some(opts.lang),
            };
            let text = match clean::clean_text(payload_of(opts.kind, file), &body, &ctx) {
                Ok((_, text)) => text,
                Err(defect) => {
                    eprintln!("warning: {}: {}; no text", file.display(), defect.as_str());
                    String::new()
                }
            };
            if let Some(dir) = opts.out {
                let dst = dir.join(output_name(rel));
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("{}: cannot create", parent.display()))?;
                }
                std::fs::write(&dst, format!("{text}\n"))
                    .with_context(|| format!("{}: cannot write", dst.display()))?;
            }
            Ok(Ok((file.clone(), text)))
        })
        .collect();
    let mut stdout = std::io::stdout().lock();
    let many = results.len() > 1;
    for r in results {
        let (file, text) = match r {
            Ok(Ok(x)) => x,
            Ok(Err(skip)) if opts.strict => return Err(skip.into_error()),
            Ok(Err(skip)) => {
                done.skipped.push(skip);
                continue;
            }
            Err(e) => return Err(anyhow::anyhow!("{e:#}")),
        };
        done.cleaned += 1;
        if opts.out.is_none() {
            if many {
                writeln!(stdout, "==> {} <==", file.display())?;
            }
            writeln!(stdout, "{text}")?;
            if many {
                writeln!(stdout)?;
            }
        }
    }
    Ok(done)
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
        let opts = CleanOptions {
            kind: Kind::Auto,
            lang: "ru",
            out: Some(&out),
            strict: false,
        };
        assert_eq!(run(&[src], &opts).unwrap().cleaned, 2);
        let w = std::fs::read_to_string(out.join("w.txt")).unwrap();
        assert_eq!(w, "Литва — страна.\n");
        let p = std::fs::read_to_string(out.join("p.txt")).unwrap();
        assert!(p.contains("Первый абзац") && !p.contains("Menu"), "{p}");
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_inputs_are_skipped_or_stop_a_strict_run() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(src.join("a.html"), "<p>Текст страницы.</p>").unwrap();
        std::os::unix::fs::symlink("gone.html", src.join("b.html")).unwrap();
        std::os::unix::fs::symlink(".", src.join("self")).unwrap();
        let out = dir.path().join("out");
        let mut opts = CleanOptions {
            kind: Kind::Auto,
            lang: "ru",
            out: Some(&out),
            strict: false,
        };
        let done = run(std::slice::from_ref(&src), &opts).unwrap();
        assert_eq!(done.cleaned, 1);
        let reasons: Vec<&str> = done.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(reasons, ["dangling-link", "loop"]);
        opts.strict = true;
        let e = run(&[src], &opts).unwrap_err();
        assert!(crate::error::is_bad_input(&e));
        assert!(e.to_string().contains("b.html"), "{e}");
    }
}
