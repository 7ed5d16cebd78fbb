//! The fault zoo: one loopback site serving, beside real articles, every kind of hostile or
//! broken answer a crawl meets, built through the real binary. Per case the collection records
//! the reason; the run ends within a bound, in bounded memory; and the good pages always come
//! through, whatever the faulty ones do.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use collect::demo::loopback::{Reply, Response};

use crate::common::*;

fn text_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("wikitext-articles/{name}"))).unwrap()
}

fn article(title: &str, text: &str) -> String {
    let paras: String = text
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| format!("<p>{p}</p>\n"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head>\
         <body><nav><a href=\"/\">Home</a></nav><article><h1>{title}</h1>{paras}</article></body></html>"
    )
}

/// Noise from a fixed seed (xorshift), so a failure can be replayed.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// Runs `collect ARGS` in `dir`; returns its exit code, stderr, wall time and peak RSS (KiB).
pub(crate) fn run_measured(
    dir: &std::path::Path,
    args: &[&str],
    limit: Duration,
) -> (i32, String, Duration, i64) {
    let started = Instant::now();
    // Reaped by wait4 below, which (unlike Child::wait) also returns the child's peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("collect runs");
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(200));
            // SAFETY: signal 0 only asks whether the process still exists.
            if unsafe { libc::kill(pid, 0) } != 0 {
                return false;
            }
        }
        // SAFETY: kill a child that overran its bound, so the test fails instead of hanging.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        true
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; both out-pointers are valid for the call.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let elapsed = started.elapsed();
    let killed = watchdog.join().unwrap();
    let err = reader.join().unwrap();
    assert!(
        !killed,
        "collect {args:?} ran past {limit:?}; stderr:\n{err}"
    );
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, err, elapsed, usage.ru_maxrss)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_is_recorded_and_good_pages_come_through() {
    let litva = text_fixture("ruwiki_Litva.reference.txt");
    // Three distinct slices of one real Russian article, so none is a copy of another.
    let cut = |k: usize| {
        (k * litva.len() / 3..litva.len())
            .find(|&i| litva.is_char_boundary(i))
            .unwrap()
    };
    let (ru_a, ru_b, ru_c) = (&litva[..cut(1)], &litva[cut(1)..cut(2)], &litva[cut(2)..]);
    let mut pages: HashMap<&str, Reply> = HashMap::new();
    pages.insert(
        "/robots.txt",
        Response::new(200, "text/plain", "User-agent: *\nDisallow: /private\n").into(),
    );
    let good = [
        (
            "/good/aardvark",
            "Aardvark",
            text_fixture("enwiki_Aardvark.reference.txt"),
        ),
        (
            "/good/award",
            "Academy Award for Best Production Design",
            text_fixture("enwiki_Academy_Award_for_Best_Production_Design.reference.txt"),
        ),
        ("/good/litva", "Литва", ru_a.to_string()),
    ];
    for (path, title, text) in &good {
        pages.insert(path, Response::html(article(title, text)).into());
    }
    // Old Russian sites: the bytes are windows-1251 or KOI8-R, the label says otherwise.
    let mislabelled = article("Литва (продолжение)", ru_b);
    let (cp1251, _, _) = encoding_rs::WINDOWS_1251.encode(&mislabelled);
    pages.insert(
        "/cp1251-as-utf8",
        Response::new(200, "text/html; charset=utf-8", cp1251.into_owned()).into(),
    );
    let koi8_page = article("Литва (окончание)", ru_c);
    let (koi8, _, _) = encoding_rs::KOI8_R.encode(&koi8_page);
    pages.insert(
        "/koi8-as-latin1",
        Response::new(200, "text/html; charset=ISO-8859-1", koi8.into_owned()).into(),
    );
    // The page that stalled whole crawls: 200k unclosed <div>s (1 MB).
    let deep = format!(
        "<html><head><title>Deep</title></head><body>{}<p>{}</p></body></html>",
        "<div>".repeat(200_000),
        std::fs::read_to_string(examples().join("pep-0208-99adc3bcf8.txt")).unwrap()
    );
    pages.insert("/deep-div", Response::html(deep).into());
    pages.insert(
        "/random-html",
        Response::new(200, "text/html", noise(200_000)).into(),
    );
    pages.insert(
        "/random-utf8",
        Response::new(200, "text/plain; charset=utf-8", noise(50_000)).into(),
    );
    pages.insert("/huge", Response::html(vec![b'a'; 3 << 20]).into());
    pages.insert(
        "/archive",
        Response::new(200, "application/zip", "PK\x03\x04 ...").into(),
    );
    pages.insert("/loop", Response::redirect(302, "/loop2").into());
    pages.insert("/loop2", Response::redirect(302, "/loop").into());
    pages.insert("/always500", Response::new(500, "text/html", "oops").into());
    pages.insert("/reset", Reply::Reset);
    pages.insert(
        "/slow",
        Response::html("<p>late</p>")
            .delayed(Duration::from_secs(4))
            .into(),
    );
    pages.insert(
        "/private/secret",
        Response::html(article("Secret", "hidden")).into(),
    );
    let site = site_of(pages).await;

    let faults = [
        "/cp1251-as-utf8",
        "/koi8-as-latin1",
        "/deep-div",
        "/random-html",
        "/random-utf8",
        "/huge",
        "/archive",
        "/loop",
        "/always500",
        "/reset",
        "/slow",
        "/private/secret",
    ];
    let starts: Vec<String> = good
        .iter()
        .map(|(p, _, _)| *p)
        .chain(faults)
        .map(|p| format!("\"{}\"", site.url(p)))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "topic.yaml",
        &format!(
            "name: zoo\n\
             languages: [en, ru]\n\
             keywords: [aardvark]\n\
             sources:\n\
             \x20 - {{kind: sites, name: zoo, depth: 1, urls: [{}]}}\n\
             crawl: {{allow_private: true, per_host_rps: 50, per_host_concurrency: 4, \
             timeout_secs: 1.5, retries: 1, backoff_ms: 50, max_body_bytes: 1048576}}\n\
             filter: {{min_words: 50}}\n\
             relevance: off\n",
            starts.join(", ")
        ),
    );
    let run = tokio::task::spawn_blocking({
        let root = root.to_path_buf();
        move || {
            run_measured(
                &root,
                &["build", "topic.yaml", "--out", "out", "--quiet"],
                Duration::from_secs(90),
            )
        }
    });
    let (code, err, elapsed, peak_kib) = run.await.unwrap();
    assert_eq!(code, 0, "stderr:\n{err}");
    eprintln!(
        "fault zoo: build took {elapsed:?}, peak RSS {} MiB",
        peak_kib / 1024
    );
    assert!(peak_kib < 600 * 1024, "peak RSS {} MiB", peak_kib / 1024);

    // What the frontier recorded per URL.
    let out = root.join("out");
    let db = rusqlite::Connection::open(out.join("collection.sqlite")).unwrap();
    let mut urls: HashMap<String, (String, Option<String>, String)> = HashMap::new();
    let mut q = db
        .prepare("SELECT url, state, reason, record FROM urls")
        .unwrap();
    for row in q
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?, r.get(3)?)))
        })
        .unwrap()
    {
        let (u, v) = row.unwrap();
        urls.insert(u, v);
    }
    let at = |p: &str| {
        let u = site.url(p);
        urls.get(&u)
            .cloned()
            .unwrap_or_else(|| panic!("{u} not recorded: {urls:#?}"))
    };
    for (path, state, reason) in [
        ("/random-html", "skipped", "not-text"),
        ("/random-utf8", "skipped", "not-text"),
        ("/huge", "skipped", "too-large"),
        ("/archive", "skipped", "content-type"),
        ("/loop", "skipped", "redirect-loop"),
        ("/private/secret", "skipped", "robots"),
        ("/always500", "failed", "http"),
        ("/slow", "failed", "timeout"),
    ] {
        let (s, r, _) = at(path);
        assert_eq!((s.as_str(), r.as_deref()), (state, Some(reason)), "{path}");
    }
    assert_eq!(at("/reset").0, "failed", "/reset");
    for path in ["/cp1251-as-utf8", "/koi8-as-latin1"] {
        let (s, _, record) = at(path);
        assert_eq!(s, "fetched", "{path}");
        assert!(
            record.contains("charset_note"),
            "{path}: the overruled label is kept: {record}"
        );
    }
    assert!(
        err.contains("declares UTF-8 but the body does not decode cleanly"),
        "{err}"
    );
    assert!(
        err.contains("declares windows-1252 but the body reads as mojibake"),
        "{err}"
    );

    // Robots and sitemaps once per host per run, however many start URLs share the host.
    assert_eq!(site.hits("/robots.txt"), 1);
    assert_eq!(site.hits("/sitemap.xml"), 1);

    // The documents: every good page kept, the mislabelled ones decoded right, the deep page
    // cleaned like any other.
    let rows = manifest(&out);
    let row = |p: &str| {
        let u = site.url(p);
        rows.iter()
            .find(|r| r["url"] == u.as_str())
            .unwrap_or_else(|| panic!("{u} has no document: {rows:#?}"))
            .clone()
    };
    for (path, _, _) in &good {
        assert_eq!(row(path)["status"], "kept", "{path}");
    }
    let text_of = |p: &str| {
        let r = row(p);
        assert_eq!(r["status"], "kept", "{p}: {r}");
        std::fs::read_to_string(
            out.join("docs")
                .join(format!("{}.txt", r["id"].as_str().unwrap())),
        )
        .unwrap()
    };
    let cp = text_of("/cp1251-as-utf8");
    assert!(
        cp.contains("Литв") && !cp.contains('\u{fffd}'),
        "{}",
        &cp[..300.min(cp.len())]
    );
    assert_eq!(row("/cp1251-as-utf8")["lang"], "ru");
    let koi8 = text_of("/koi8-as-latin1");
    let words: Vec<&str> = ru_c.split_whitespace().skip(40).take(8).collect();
    assert!(koi8.contains(&words.join(" ")), "{koi8}");
    assert!(text_of("/deep-div").contains("coercion"));
    assert_eq!(
        rows.len(),
        good.len() + 3,
        "only the fetched pages are documents: {rows:#?}"
    );
}
