//! Cleans every `<lang>/<safe_title>.wikitext` of the bench directory into
//! `OUT/<lang>/<safe_title>.txt` and prints the time spent cleaning.

use collect::clean::wikitext::{wikitext_to_text, WikitextOptions};
use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--keep-sections` keeps the apparatus sections, to measure what dropping them costs.
    let keep = args.iter().any(|a| a == "--keep-sections");
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| a != "--keep-sections")
        .collect();
    if args.len() != 3 {
        eprintln!("usage: wikitext_bench BENCH_DIR OUT_DIR [--keep-sections]");
        std::process::exit(2);
    }
    let (bench, out) = (Path::new(&args[1]), Path::new(&args[2]));
    let mut total = Duration::ZERO;
    let (mut pages, mut bytes) = (0usize, 0usize);
    let mut langs: Vec<_> = std::fs::read_dir(bench)
        .expect("read bench dir")
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    langs.sort_by_key(|e| e.file_name());
    for lang_dir in langs {
        let lang = lang_dir.file_name().to_string_lossy().to_string();
        let mut opts = WikitextOptions::for_lang(&lang);
        if keep {
            opts.drop_sections.clear();
        }
        let dst = out.join(&lang);
        std::fs::create_dir_all(&dst).expect("create output dir");
        let mut files: Vec<_> = std::fs::read_dir(lang_dir.path())
            .expect("read lang dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wikitext"))
            .collect();
        files.sort();
        for f in files {
            let src = std::fs::read_to_string(&f).expect("read wikitext");
            let t = Instant::now();
            let text = wikitext_to_text(&src, &opts);
            total += t.elapsed();
            pages += 1;
            bytes += src.len();
            let name = f.file_stem().expect("file stem").to_string_lossy();
            std::fs::write(dst.join(format!("{name}.txt")), text).expect("write txt");
        }
    }
    println!(
        "{pages} pages, {:.1} MB of wikitext cleaned in {:.3} s ({:.1} MB/s)",
        bytes as f64 / 1e6,
        total.as_secs_f64(),
        bytes as f64 / 1e6 / total.as_secs_f64().max(1e-9)
    );
}
