//! Prints the title and main text extracted from one HTML file (or stdin).
//!
//! Usage: extract_file [FILE] [URL]
use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut raw = Vec::new();
    match args.get(1).map(String::as_str) {
        None | Some("-") => std::io::stdin().read_to_end(&mut raw),
        Some(path) => std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut raw)),
    }
    .expect("readable input");
    let html = String::from_utf8_lossy(&raw);
    let e = collect::clean::html::extract(&html, args.get(2).map(String::as_str));
    println!("TITLE: {}\n\n{}", e.title.unwrap_or_default(), e.text);
}
