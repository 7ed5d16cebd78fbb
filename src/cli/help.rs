//! What is generated from the clap definitions: the `Examples:` block of every subcommand's
//! help, shell completions (`collect completions`) and man pages (`collect man`).

use super::{exit, Cli};
use anyhow::{Context, Result};
use clap::{Args, CommandFactory, FromArgMatches};
use std::io::Write;
use std::path::PathBuf;

/// `collect completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// `collect man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write collect.1 and one collect-SUBCOMMAND.1 per subcommand here instead of printing
    /// collect.1.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Examples by subcommand path (`review list`), shown under "Examples:" in its help.
const EXAMPLES: &[(&str, &[&str])] = &[
    ("build", &["collect build topics/example.yaml", "collect build topics/dogs.yaml --dry-run", "collect build topics/dogs.yaml --out /data/dogs --force"]),
    ("demo", &["collect demo", "collect demo --out /tmp/demo"]),
    ("clean", &["collect clean page.html", "collect clean dump/ --kind wikitext --lang ru --out texts/"]),
    ("dedup", &["collect dedup corpus.jsonl > pairs.tsv", "collect dedup texts/ --method minn --resemblance 0.6 --out pairs.tsv"]),
    ("eval", &["collect eval --docs docs.jsonl --pairs labels.tsv", "collect eval --docs docs.jsonl --pairs labels.tsv --method modm,minn --thresholds 0.5:1.0:0.1"]),
    ("stats", &["collect stats collections/dogs", "collect stats collections/dogs --skipped --json"]),
    ("relation", &["collect relation modm collections/dogs", "collect relation minn corpus.jsonl"]),
    ("update", &["collect update topics/dogs.yaml", "collect update topics/dogs.yaml --out /data/dogs"]),
    ("review", &["collect review --collection collections/dogs list", "collect review --collection collections/dogs decide 12 drop-contained --note \"same article\""]),
    ("review list", &["collect review --collection collections/dogs list", "collect review --collection collections/dogs list --pairs --status all --json"]),
    ("review show", &["collect review --collection collections/dogs show 12"]),
    ("review cluster", &["collect review --collection collections/dogs cluster 7", "collect review --collection collections/dogs cluster 7 --json"]),
    ("review decide", &["collect review --collection collections/dogs decide 12 keep-both", "collect review --collection collections/dogs decide 12 drop-contained --note \"same article\"", "collect review --collection collections/dogs decide --cluster 7 keep-container", "collect review --collection collections/dogs decide --where 'cont >= 0.9 and words < 300' drop-contained --dry-run"]),
    ("review undo", &["collect review --collection collections/dogs undo 4"]),
    ("review log", &["collect review --collection collections/dogs log", "collect review --collection collections/dogs log --json"]),
    ("explain", &["collect explain 3f2a9c --collection collections/dogs", "collect explain 3f2a9c --collection collections/dogs --json"]),
    ("serve", &["collect serve collections/dogs", "collect serve collections/dogs --port 8080"]),
    ("worker", &["collect worker topics/dogs.yaml < part-00000.jsonl > prepared-00000.jsonl", "collect worker topics/dogs.yaml --source corpus --text < part.jsonl", "collect worker topics/dogs.yaml --stage judge < candidates.jsonl > judged.jsonl"]),
    ("spark-job", &["collect spark-job topics/dogs.yaml --master 'local[2]'", "collect spark-job topics/dogs.yaml --master yarn --input corpus=hdfs:///data/dogs.jsonl --work /shared/dogs.spark --print-command"]),
    ("keep", &["collect keep < components.jsonl > kept.jsonl", "echo '{\"component\": 1, \"candidates\": [{\"id\": \"a\", \"words\": 900, \"source_rank\": 0}, {\"id\": \"b\", \"words\": 950, \"source_rank\": 1}], \"duplicates\": [[0, 1]]}' | collect keep"]),
    ("export", &["collect export collections/dogs --format jsonl > dogs.jsonl", "collect export collections/dogs --format txt --out dogs-txt/"]),
    ("doctor", &["collect doctor collections/dogs", "collect doctor collections/dogs --rebuild --topic topics/dogs.yaml"]),
    ("new", &["collect new dogs --keyword овчарка --keyword \"german shepherd\"", "collect new dogs -k \"dog breeds\" --language en --source mediawiki --source duckduckgo", "collect new pets --out /tmp/pets.yaml"]),
    ("check", &["collect check topics/dogs.yaml"]),
    ("completions", &["collect completions bash > ~/.local/share/bash-completion/completions/collect", "collect completions zsh > ~/.zfunc/_collect", "collect completions fish > ~/.config/fish/completions/collect.fish"]),
    ("man", &["collect man > collect.1 && man ./collect.1", "collect man --out /usr/local/share/man/man1"]),
];

/// The `Examples:` block of a subcommand path, if there is one.
fn examples(path: &str) -> Option<String> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, lines)| {
        let mut s = String::from("Examples:\n");
        for l in *lines {
            s.push_str(&format!("  {l}\n"));
        }
        s.trim_end().to_string()
    })
}

/// `cmd` with the examples under every subcommand (recursively; `prefix` is its path).
fn with_examples(mut cmd: clap::Command, prefix: &str) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| {
            let s = with_examples(s, &path);
            match examples(&path) {
                Some(e) => s.after_help(e),
                None => s,
            }
        });
    }
    cmd
}

/// The whole command line, examples included: what is parsed, completed and documented.
pub fn command() -> clap::Command {
    with_examples(Cli::command(), "")
}

/// Parses the process arguments (exits on `--help`, `--version` and errors, as clap does).
pub fn parse() -> Cli {
    let m = command().get_matches();
    Cli::from_arg_matches(&m).unwrap_or_else(|e| e.exit())
}

/// Prints the completion script of a shell.
pub fn run_completions(a: &CompletionsArgs) -> Result<i32> {
    let mut cmd = command();
    clap_complete::generate(a.shell, &mut cmd, "collect", &mut std::io::stdout().lock());
    Ok(exit::OK)
}

/// Prints collect.1, or writes every page to a directory.
pub fn run_man(a: &ManArgs) -> Result<i32> {
    match &a.out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command()).render(&mut page)?;
            let page = String::from_utf8_lossy(&page);
            // `.TH` first, as man(7) has it; clap_mangen puts its string definitions before.
            let (th, rest): (Vec<&str>, Vec<&str>) =
                page.lines().partition(|l| l.starts_with(".TH "));
            let mut out = th.join("\n");
            for l in rest {
                out.push('\n');
                out.push_str(l);
            }
            out.push('\n');
            match std::io::stdout().lock().write_all(out.as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.context("cannot write the man page")?,
            }
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create", dir.display()))?;
            clap_mangen::generate_to(command(), dir)
                .with_context(|| format!("{}: cannot write the man pages", dir.display()))?;
        }
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_has_examples() {
        fn walk(cmd: &clap::Command, prefix: &str) {
            for s in cmd.get_subcommands() {
                let path = if prefix.is_empty() {
                    s.get_name().to_string()
                } else {
                    format!("{prefix} {}", s.get_name())
                };
                assert!(examples(&path).is_some(), "no examples for `{path}`");
                walk(s, &path);
            }
        }
        walk(&Cli::command(), "");
    }

    #[test]
    fn every_example_names_a_subcommand() {
        let cmd = Cli::command();
        for (path, _) in EXAMPLES {
            let mut c = &cmd;
            for part in path.split(' ') {
                c = c
                    .find_subcommand(part)
                    .unwrap_or_else(|| panic!("`{path}`: no such subcommand"));
            }
        }
    }
}
