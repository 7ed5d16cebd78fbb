//! `collect new` (a commented topic file) and `collect check` (validate a topic, print its plan).

use super::exit;
use crate::topic::template::{self, NewTopic, SOURCE_KINDS};
use crate::topic::Topic;
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `collect new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// Machine name of the collection (ASCII letters, digits, `-`, `_`).
    name: String,
    /// A keyword of the theme (repeatable): a query for search sources.
    #[arg(long = "keyword", short = 'k', value_name = "K")]
    keywords: Vec<String>,
    /// A language kept, ISO 639-1 (repeatable; default: ru and en).
    #[arg(long = "language", short = 'l', value_name = "LANG")]
    languages: Vec<String>,
    /// A source kind (repeatable; default: `mediawiki`, one Wikipedia per language).
    #[arg(long = "source", value_name = "KIND", value_parser = clap::builder::PossibleValuesParser::new(SOURCE_KINDS))]
    sources: Vec<String>,
    /// Human title of the theme.
    #[arg(long)]
    title: Option<String>,
    /// Where to write the topic file (default: topics/NAME.yaml); an existing file is kept.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `collect check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The topic file (YAML).
    topic: PathBuf,
}

/// Writes the topic file; refuses (bad input, exit 2) to overwrite one.
pub fn run_new(a: &NewArgs, quiet: bool) -> Result<i32> {
    let path = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("topics").join(format!("{}.yaml", a.name)));
    let text = template::render(
        &NewTopic {
            name: a.name.clone(),
            title: a.title.clone(),
            languages: a.languages.clone(),
            keywords: a.keywords.clone(),
            sources: a.sources.clone(),
        },
        &path,
    )?;
    if path.exists() {
        return Err(crate::error::bad_input(format!(
            "{}: exists; not overwritten (remove it or give --out PATH)",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let mut f = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(crate::error::bad_input(format!(
                "{}: exists; not overwritten",
                path.display()
            )))
        }
        Err(e) => return Err(e).with_context(|| format!("{}: cannot create", path.display())),
    };
    f.write_all(text.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))?;
    println!("{}", path.display());
    if !quiet {
        eprintln!(
            "{} written; see the plan with `collect check {}`",
            path.display(),
            path.display()
        );
    }
    Ok(exit::OK)
}

/// Loads the topic (exit 2 with `file:line:col` when it is bad) and prints its plan, as
/// `build --dry-run` does.
pub fn run_check(a: &CheckArgs, quiet: bool) -> Result<i32> {
    let topic = Topic::load(&a.topic)?;
    if !quiet {
        eprintln!(
            "{}: ok: collection `{}`, {} sources, {} keywords",
            a.topic.display(),
            topic.name,
            topic.sources.len(),
            topic.keywords.len()
        );
    }
    super::print_plan(&topic)?;
    Ok(exit::OK)
}
