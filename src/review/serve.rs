//! `collect serve`: the review queue as a small web page on the loopback interface.
//!
//! Plain HTML and a little vanilla JavaScript. Every document text is escaped (pages are
//! hostile input), scripts and styles come only from this server (CSP), and every POST must
//! carry the per-server random token embedded in the pages. Decisions go through
//! [`review::decide`], the same code as `collect review decide`.

use crate::review::{self, PairDetail, PairStatus, PairSummary, Passage};
use crate::store::queries::Decision;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use tiny_http::{Header, Method, Request, Response, Server};

/// How `serve` listens.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Collection directory.
    pub dir: PathBuf,
    /// Address to bind (loopback unless the curator says otherwise).
    pub bind: String,
    /// Port (0: any free port).
    pub port: u16,
}

/// A running review server.
pub struct ReviewServer {
    server: Server,
    dir: PathBuf,
    token: String,
    url: String,
    /// The port, when bound to loopback: then only loopback `Host` headers are served.
    loopback_port: Option<u16>,
}

/// HTML-escapes text for element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn random_token() -> String {
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if from_os.is_err() {
        // No /dev/urandom: hash the time, the process and a stack address instead.
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0),
            );
            h.write_u32(std::process::id());
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    hex::encode(bytes)
}

const CSS: &str = r#"
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#24305e;color:#fff;padding:.6em 1em;display:flex;gap:1.5em;align-items:baseline}
header a{color:#fff}
main{padding:1em}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}
tr.pending td:first-child{font-weight:bold}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.doc{background:#fff;border:1px solid #ccc;padding:.8em;overflow-wrap:anywhere}
.doc pre{white-space:pre-wrap;font:inherit;margin:0;max-height:62vh;overflow:auto}
.doc h2{font-size:1.05em;margin:.1em 0 .4em}
.meta{color:#555;font-size:.9em}
mark{background:#ffe48a}
mark a{color:inherit;text-decoration:none}
mark:target{background:#ffb347;outline:2px solid #e08000}
.contained{color:#b00;font-weight:bold}
form.decide{margin:.8em 0;display:flex;gap:.6em;align-items:center;flex-wrap:wrap}
button{font-size:1em;padding:.35em .8em}
kbd{border:1px solid #aaa;border-radius:3px;padding:0 .3em;background:#eee;font-size:.85em}
.decided{background:#e7f5e7;padding:.4em .6em;border:1px solid #9c9}
"#;

const JS: &str = r#"
document.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target && e.target.tagName;
  if (t === 'INPUT' || t === 'TEXTAREA') return;
  var go = function (id) { var a = document.getElementById(id); if (a) { a.click(); e.preventDefault(); } };
  switch (e.key) {
    case 'j': case 'n': case 'ArrowRight': go('next'); break;
    case 'k': case 'p': case 'ArrowLeft': go('prev'); break;
    case '1': go('d-keep-both'); break;
    case '2': go('d-drop-contained'); break;
    case '3': go('d-drop-container'); break;
    case 'u': go('queue'); break;
  }
});
"#;

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("static header is valid")
}

fn html_response(body: String, status: u16) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/html; charset=utf-8"))
        .with_header(header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        .with_header(header("Referrer-Policy", "no-referrer"))
        .with_header(header("Cache-Control", "no-store"))
}

fn redirect(to: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(String::new())
        .with_status_code(303)
        .with_header(header("Location", to))
}

/// Decodes an `application/x-www-form-urlencoded` body into pairs.
pub fn parse_form(body: &str) -> Vec<(String, String)> {
    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    let hex = |c: u8| (c as char).to_digit(16);
                    match (hex(b[i + 1]), hex(b[i + 2])) {
                        (Some(h), Some(l)) => {
                            out.push((h * 16 + l) as u8);
                            i += 2;
                        }
                        _ => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    body.split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn page(title: &str, counts: &review::Progress, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <link rel=\"stylesheet\" href=\"/app.css\"><script src=\"/app.js\" defer></script></head>\
         <body><header><strong><a id=\"queue\" href=\"/\">collect review</a></strong>\
         <span>{} pending</span><span>{} decided</span><span>{} moot</span></header><main>{}</main></body></html>",
        escape(title),
        counts.pending,
        counts.decided,
        counts.moot,
        body
    )
}

fn fmt_score(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into())
}

fn short_title(t: &Option<String>, id: &str) -> String {
    match t {
        Some(t) if !t.trim().is_empty() => {
            let s: String = t.chars().take(80).collect();
            escape(&s)
        }
        _ => escape(id),
    }
}

fn queue_page(list: &[PairSummary], counts: &review::Progress) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>Contained pairs</h1><p>{} pairs: {} pending, {} decided, {} moot (one text already out of the collection). \
         Open a pair; keys: <kbd>1</kbd> keep both, <kbd>2</kbd> drop contained, <kbd>3</kbd> drop container, \
         <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>u</kbd> this list.</p>",
        counts.pairs, counts.pending, counts.decided, counts.moot
    );
    b.push_str("<table><thead><tr><th>pair</th><th>status</th><th>a</th><th>b</th><th>resemblance</th><th>cont(a in b)</th><th>cont(b in a)</th><th>decision</th></tr></thead><tbody>");
    let mut sorted: Vec<&PairSummary> = list.iter().collect();
    sorted.sort_by_key(|p| (p.status != PairStatus::Pending, p.id));
    for p in sorted {
        let st = match p.status {
            PairStatus::Pending => "pending",
            PairStatus::Decided => "decided",
            PairStatus::Moot => "moot",
        };
        let _ = write!(
            b,
            "<tr class=\"{st}\"><td><a href=\"/pair/{id}\">#{id}</a></td><td>{st}</td><td>{ta}<div class=\"meta\">{sa}</div></td>\
             <td>{tb}<div class=\"meta\">{sb}</div></td><td>{r:.3}</td><td>{ca}</td><td>{cb}</td><td>{d}</td></tr>",
            id = p.id,
            ta = short_title(&p.title_a, &p.a),
            tb = short_title(&p.title_b, &p.b),
            sa = escape(&p.source_a),
            sb = escape(&p.source_b),
            r = p.resemblance,
            ca = fmt_score(p.cont_a_in_b),
            cb = fmt_score(p.cont_b_in_a),
            d = escape(p.decision.as_deref().unwrap_or("")),
        );
    }
    b.push_str("</tbody></table>");
    page("collect review", counts, &b)
}

fn marked_html(text: &str, passages: &[Passage], me: &str, other: &str) -> String {
    let mut out = String::with_capacity(text.len() * 11 / 10);
    let mut at = 0;
    for (k, p) in passages.iter().enumerate() {
        out.push_str(&escape(&text[at..p.start]));
        let href = p
            .other
            .map(|o| format!(" href=\"#{other}{o}\""))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<mark id=\"{me}{k}\"><a{href}>{}</a></mark>",
            escape(&text[p.start..p.end])
        );
        at = p.end;
    }
    out.push_str(&escape(&text[at..]));
    out
}

fn side_html(d: &PairDetail, is_a: bool) -> String {
    let s = &d.summary;
    let (id, title, url, source, text, passages, me, other, cont) = if is_a {
        (
            &s.a,
            &s.title_a,
            &s.url_a,
            &s.source_a,
            &d.text_a,
            &d.passages_a,
            "a",
            "b",
            s.cont_a_in_b,
        )
    } else {
        (
            &s.b,
            &s.title_b,
            &s.url_b,
            &s.source_b,
            &d.text_b,
            &d.passages_b,
            "b",
            "a",
            s.cont_b_in_a,
        )
    };
    let contained = if &s.contained == id {
        " <span class=\"contained\">contained</span>"
    } else {
        ""
    };
    let link = match url {
        Some(u) if u.starts_with("http://") || u.starts_with("https://") => format!(
            "<a href=\"{}\" rel=\"noopener noreferrer nofollow\" target=\"_blank\">{}</a>",
            escape(u),
            escape(u)
        ),
        Some(u) => escape(u),
        None => "no URL".into(),
    };
    format!(
        "<section class=\"doc\" id=\"doc-{me}\"><h2>{me}: {t}{contained}</h2><div class=\"meta\">id {id} · source {src} · {link} · \
         containment in the other {c} · {n} shared passages</div><hr><pre>{body}</pre></section>",
        t = short_title(title, id),
        id = escape(id),
        src = escape(source),
        c = fmt_score(cont),
        n = passages.len(),
        body = marked_html(text, passages, me, other)
    )
}

fn pair_page(
    d: &PairDetail,
    prev: Option<i64>,
    next: Option<i64>,
    token: &str,
    counts: &review::Progress,
) -> String {
    let s = &d.summary;
    let mut b = String::new();
    let nav = |id: Option<i64>, name: &str, label: &str| match id {
        Some(i) => format!("<a id=\"{name}\" href=\"/pair/{i}\">{label}</a>"),
        None => format!("<span class=\"meta\">{label}</span>"),
    };
    let _ = write!(
        b,
        "<p>{} · <strong>pair #{}</strong> ({}) · {} · <a href=\"/\">queue</a></p>",
        nav(prev, "prev", "← previous (k)"),
        s.id,
        match s.status {
            PairStatus::Pending => "pending",
            PairStatus::Decided => "decided",
            PairStatus::Moot => "moot",
        },
        nav(next, "next", "next (j) →"),
    );
    let _ = write!(
        b,
        "<p class=\"meta\">resemblance {:.3} · cont(a in b) {} · cont(b in a) {} · {}</p>",
        s.resemblance,
        fmt_score(s.cont_a_in_b),
        fmt_score(s.cont_b_in_a),
        if s.verified {
            "scores on the full shingle index"
        } else {
            "scores on the signatures"
        }
    );
    if let Some(dec) = &s.decision {
        let _ = write!(
            b,
            "<p class=\"decided\" id=\"decision\">Decided: <strong>{}</strong>{}</p>",
            escape(dec),
            s.note
                .as_deref()
                .map(|n| format!(" — {}", escape(n)))
                .unwrap_or_default()
        );
    }
    let _ = write!(
        b,
        "<form class=\"decide\" method=\"post\" action=\"/pair/{id}/decide\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button id=\"d-keep-both\" name=\"decision\" value=\"keep-both\"><kbd>1</kbd> keep both</button>\
         <button id=\"d-drop-contained\" name=\"decision\" value=\"drop-contained\"><kbd>2</kbd> drop contained</button>\
         <button id=\"d-drop-container\" name=\"decision\" value=\"drop-container\"><kbd>3</kbd> drop container</button>\
         <label>note <input name=\"note\" size=\"40\" value=\"{note}\"></label></form>",
        id = s.id,
        token = escape(token),
        note = escape(s.note.as_deref().unwrap_or("")),
    );
    let _ = write!(
        b,
        "<div class=\"cols\">{}{}</div>",
        side_html(d, true),
        side_html(d, false)
    );
    page(&format!("pair #{}", s.id), counts, &b)
}

/// Whether a request's `Host` header names this loopback server. A page on another site that
/// rebinds its DNS name to 127.0.0.1 sends its own name here, so it cannot read the queue.
fn loopback_host_ok(host: Option<&str>, port: u16) -> bool {
    let Some(host) = host else { return false };
    let host = host.trim().to_ascii_lowercase();
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host == format!("{name}:{port}") || (port == 80 && host == *name))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl ReviewServer {
    /// Binds the server; the collection must exist.
    pub fn bind(opts: &ServeOptions) -> Result<ReviewServer> {
        review::open_collection(&opts.dir)?;
        let addr = format!("{}:{}", opts.bind, opts.port);
        let server =
            Server::http(&addr).map_err(|e| anyhow::anyhow!("{addr}: cannot listen: {e}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .context("server has no IP address")?;
        let host = if opts.bind.contains(':') {
            format!("[{}]", opts.bind)
        } else {
            opts.bind.clone()
        };
        let loopback = opts
            .bind
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(opts.bind == "localhost");
        Ok(ReviewServer {
            server,
            dir: opts.dir.clone(),
            token: random_token(),
            url: format!("http://{host}:{port}/"),
            loopback_port: loopback.then_some(port),
        })
    }

    /// The address of the queue page.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves requests until the process ends.
    pub fn run(&self) -> Result<()> {
        for req in self.server.incoming_requests() {
            if let Err(e) = self.handle(req) {
                eprintln!("warning: request failed: {e:#}");
            }
        }
        Ok(())
    }

    fn handle(&self, mut req: Request) -> Result<()> {
        if let Some(port) = self.loopback_port {
            let host = req
                .headers()
                .iter()
                .find(|h| h.field.equiv("Host"))
                .map(|h| h.value.as_str().to_string());
            if !loopback_host_ok(host.as_deref(), port) {
                let resp = html_response("<p>unexpected Host header</p>".into(), 421);
                req.respond(resp).context("answering")?;
                return Ok(());
            }
        }
        let url = req.url().to_string();
        let path = url.split('?').next().unwrap_or("").to_string();
        let method = req.method().clone();
        let resp = match (method, path.as_str()) {
            (Method::Get, "/app.css") => Response::from_string(CSS)
                .with_header(header("Content-Type", "text/css; charset=utf-8")),
            (Method::Get, "/app.js") => Response::from_string(JS)
                .with_header(header("Content-Type", "text/javascript; charset=utf-8")),
            (Method::Get, "/") => match self.queue() {
                Ok(html) => html_response(html, 200),
                Err(e) => html_response(format!("<p>{}</p>", escape(&format!("{e:#}"))), 500),
            },
            (Method::Get, p) if p.starts_with("/pair/") => {
                match p["/pair/".len()..].parse::<i64>() {
                    Ok(id) => match self.pair(id) {
                        Ok(html) => html_response(html, 200),
                        Err(e) => {
                            html_response(format!("<p>{}</p>", escape(&format!("{e:#}"))), 404)
                        }
                    },
                    Err(_) => html_response("<p>no such page</p>".into(), 404),
                }
            }
            (Method::Post, p) if p.starts_with("/pair/") && p.ends_with("/decide") => {
                let id = p["/pair/".len()..p.len() - "/decide".len()].parse::<i64>();
                let mut body = String::new();
                req.as_reader()
                    .take(64 * 1024)
                    .read_to_string(&mut body)
                    .context("reading the form")?;
                let form = parse_form(&body);
                let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                let token_ok = get("token")
                    .map(|t| constant_time_eq(t.as_bytes(), self.token.as_bytes()))
                    .unwrap_or(false);
                match (id, token_ok, get("decision").and_then(Decision::parse)) {
                    (_, false, _) => {
                        html_response("<p>missing or wrong token; reload the page</p>".into(), 403)
                    }
                    (Ok(id), true, Some(d)) => {
                        let note = get("note").map(str::trim).filter(|n| !n.is_empty());
                        match self.decide(id, d, note) {
                            Ok(next) => redirect(&next),
                            Err(e) => {
                                html_response(format!("<p>{}</p>", escape(&format!("{e:#}"))), 400)
                            }
                        }
                    }
                    _ => html_response("<p>bad decision request</p>".into(), 400),
                }
            }
            _ => html_response("<p>no such page</p>".into(), 404),
        };
        req.respond(resp).context("sending the response")?;
        Ok(())
    }

    fn queue(&self) -> Result<String> {
        let store = review::open_collection(&self.dir)?;
        let list = review::list(&store, None)?;
        Ok(queue_page(&list, &review::progress(&store)?))
    }

    fn pair(&self, id: i64) -> Result<String> {
        let store = review::open_collection(&self.dir)?;
        let detail = review::show(&store, id)?;
        let list = review::list(&store, None)?;
        let ids: Vec<i64> = list.iter().map(|p| p.id).collect();
        let pos = ids.iter().position(|&x| x == id);
        let prev = pos.and_then(|i| i.checked_sub(1)).map(|i| ids[i]);
        let next = pos.and_then(|i| ids.get(i + 1).copied());
        Ok(pair_page(
            &detail,
            prev,
            next,
            &self.token,
            &review::progress(&store)?,
        ))
    }

    /// Saves a decision and returns where to go next: the next pending pair, else the queue.
    fn decide(&self, id: i64, d: Decision, note: Option<&str>) -> Result<String> {
        let mut store = review::open_collection_mut(&self.dir)?;
        review::decide(&mut store, &self.dir, id, d, note)?;
        let pending: Vec<i64> = review::list(&store, Some(PairStatus::Pending))?
            .iter()
            .map(|p| p.id)
            .collect();
        let next = pending
            .iter()
            .find(|&&p| p > id)
            .or(pending.first())
            .copied();
        Ok(match next {
            Some(n) => format!("/pair/{n}"),
            None => "/".into(),
        })
    }
}

/// Serves the review page of `dir` until the process is stopped; prints the URL on stdout.
pub fn serve(opts: &ServeOptions) -> Result<()> {
    let s = ReviewServer::bind(opts)?;
    println!("{}", s.url());
    eprintln!(
        "review page of {}: {} (Ctrl-C to stop)",
        Path::new(&opts.dir).display(),
        s.url()
    );
    use std::io::Write;
    std::io::stdout().flush().ok();
    s.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_host_names_are_served_on_loopback() {
        assert!(loopback_host_ok(Some("127.0.0.1:8080"), 8080));
        assert!(loopback_host_ok(Some("LOCALHOST:8080"), 8080));
        assert!(loopback_host_ok(Some("[::1]:8080"), 8080));
        assert!(!loopback_host_ok(Some("evil.example:8080"), 8080));
        assert!(!loopback_host_ok(Some("127.0.0.1:9999"), 8080));
        assert!(!loopback_host_ok(None, 8080));
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn parses_forms() {
        let f = parse_form("token=ab12&decision=drop-contained&note=a+b%20c%C3%A9%2");
        assert_eq!(f[1], ("decision".into(), "drop-contained".into()));
        assert_eq!(f[2].1, "a b cé%2");
    }

    #[test]
    fn passages_are_escaped_inside_marks() {
        let html = marked_html(
            "x <b>y</b> z",
            &[Passage {
                start: 2,
                end: 10,
                other: Some(0),
            }],
            "a",
            "b",
        );
        assert_eq!(
            html,
            "x <mark id=\"a0\"><a href=\"#b0\">&lt;b&gt;y&lt;/b&gt;</a></mark> z"
        );
    }
}
