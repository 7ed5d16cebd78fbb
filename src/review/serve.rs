//! `collect serve`: the review queue as a small web page on the loopback interface.
//!
//! Plain HTML (`pages.rs`) and a little vanilla JavaScript. Every document text is escaped
//! (pages are hostile input), scripts and styles come only from this server (CSP), every POST
//! must carry the per-server random token embedded in the pages, and on loopback only loopback
//! `Host` names are answered. Decisions go through the review module, the same code as
//! `collect review decide`.

use super::pages::{
    cluster_page, confirm_page, log_page, pair_page, pairs_page, queue_page, rule_page, Filter,
    CSS, JS,
};
use super::pages::{escape, parse_form};
use crate::review::queue;
use crate::review::{self, PairStatus, PairSummary};
use crate::rule::Rule;
use crate::store::queries::Decision;
use anyhow::{Context, Result};
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
    /// How the queue's pairs are grouped into clusters.
    pub grouping: queue::Grouping,
}

/// A running review server.
pub struct ReviewServer {
    server: Server,
    dir: PathBuf,
    grouping: queue::Grouping,
    token: String,
    url: String,
    /// The port, when bound to loopback: then only loopback `Host` headers are served.
    loopback_port: Option<u16>,
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
            grouping: opts.grouping,
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
        let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
        let method = req.method().clone();
        let resp = match method {
            Method::Get => match path {
                "/app.css" => Response::from_string(CSS)
                    .with_header(header("Content-Type", "text/css; charset=utf-8")),
                "/app.js" => Response::from_string(JS)
                    .with_header(header("Content-Type", "text/javascript; charset=utf-8")),
                _ => match self.get(path, query) {
                    Ok(Some(html)) => html_response(html, 200),
                    Ok(None) => html_response("<p>no such page</p>".into(), 404),
                    Err(e) => error_response(&e),
                },
            },
            Method::Post => {
                let mut body = String::new();
                req.as_reader()
                    .take(64 * 1024)
                    .read_to_string(&mut body)
                    .context("reading the form")?;
                let form = parse_form(&body);
                let token_ok = field(&form, "token")
                    .map(|t| constant_time_eq(t.as_bytes(), self.token.as_bytes()))
                    .unwrap_or(false);
                if token_ok {
                    match self.post(path, &form) {
                        Ok(Some(Answer::Page(html))) => html_response(html, 200),
                        Ok(Some(Answer::Redirect(to))) => redirect(&to),
                        Ok(None) => html_response("<p>bad request</p>".into(), 400),
                        Err(e) => error_response(&e),
                    }
                } else {
                    html_response("<p>missing or wrong token; reload the page</p>".into(), 403)
                }
            }
            _ => html_response("<p>no such page</p>".into(), 404),
        };
        req.respond(resp).context("sending the response")?;
        Ok(())
    }

    /// A page, or None when the path names none.
    fn get(&self, path: &str, query: &str) -> Result<Option<String>> {
        let store = review::open_collection(&self.dir)?;
        let all = review::list(&store, None)?;
        let clusters = queue::grouped(&store, &all, self.grouping)?;
        let counts = review::tally(&all, &clusters);
        let filter = Filter::parse(query);
        let id = |prefix: &str| {
            path.strip_prefix(prefix)
                .and_then(|x| x.parse::<i64>().ok())
        };
        Ok(Some(if path == "/" {
            queue_page(&clusters, &filter, &counts)
        } else if path == "/pairs" {
            pairs_page(&all, &filter, &counts)
        } else if path == "/rule" {
            rule_page(&self.token, None, &counts)
        } else if path == "/log" {
            log_page(&store.review_log()?, &self.token, &counts)
        } else if let Some(id) = id("/pair/") {
            let detail = review::show(&store, id)?;
            let ids: Vec<i64> = all.iter().map(|p| p.id).collect();
            let (prev, next) = neighbours(&ids, id);
            pair_page(&detail, prev, next, &self.token, &counts)
        } else if let Some(id) = id("/cluster/") {
            let Some(c) = clusters.iter().find(|c| c.id == id) else {
                return Err(crate::error::bad_input(format!("no cluster {id}")));
            };
            let pairs: Vec<&PairSummary> = all.iter().filter(|p| c.pairs.contains(&p.id)).collect();
            let ids: Vec<i64> = clusters.iter().map(|c| c.id).collect();
            let (prev, next) = neighbours(&ids, id);
            cluster_page(c, &pairs, prev, next, &self.token, &counts)
        } else {
            return Ok(None);
        }))
    }

    /// Acts on a form whose token was checked; None for a request that names nothing.
    fn post(&self, path: &str, form: &[(String, String)]) -> Result<Option<Answer>> {
        let decision = field(form, "decision").and_then(Decision::parse);
        let note = field(form, "note").map(str::trim).filter(|n| !n.is_empty());
        let confirmed = field(form, "confirm") == Some("yes");
        let id = |prefix: &str, suffix: &str| {
            path.strip_prefix(prefix)
                .and_then(|x| x.strip_suffix(suffix))
                .and_then(|x| x.parse::<i64>().ok())
        };
        let mut store = review::open_collection_mut(&self.dir)?;
        if let (Some(id), Some(d)) = (id("/pair/", "/decide"), decision) {
            review::decide(&mut store, &self.dir, id, d, note)?;
            let pending: Vec<i64> = review::list(&store, Some(PairStatus::Pending))?
                .iter()
                .map(|p| p.id)
                .collect();
            let next = pending.iter().find(|&&p| p > id).or(pending.first());
            return Ok(Some(Answer::Redirect(match next {
                Some(n) => format!("/pair/{n}"),
                None => "/".into(),
            })));
        }
        if let (Some(id), Some(d)) = (id("/cluster/", "/decide"), decision) {
            let target = queue::ClusterRef {
                id,
                grouping: self.grouping,
            };
            let bulk = queue::decide_cluster(&mut store, &self.dir, target, d, note, !confirmed)?;
            if !confirmed {
                let fields = [("decision", d.as_str()), ("note", note.unwrap_or(""))];
                let counts = review::progress(&store)?;
                return Ok(Some(Answer::Page(confirm_page(
                    &bulk,
                    path,
                    &fields,
                    &self.token,
                    &counts,
                ))));
            }
            let next = queue::list_clusters(&store, self.grouping)?
                .into_iter()
                .find(|c| c.status == PairStatus::Pending)
                .map(|c| format!("/cluster/{}", c.id));
            return Ok(Some(Answer::Redirect(next.unwrap_or_else(|| "/".into()))));
        }
        if let ("/rule", Some(d)) = (path, decision) {
            let text = field(form, "where").unwrap_or("");
            let rule = match Rule::parse(text) {
                Ok(r) => r,
                Err(e) => {
                    let counts = review::progress(&store)?;
                    let msg = format!("`{text}`: {e}");
                    return Ok(Some(Answer::Page(rule_page(
                        &self.token,
                        Some(&msg),
                        &counts,
                    ))));
                }
            };
            let bulk = queue::decide_where(&mut store, &self.dir, &rule, d, note, !confirmed)?;
            if !confirmed {
                let fields = [
                    ("where", text),
                    ("decision", d.as_str()),
                    ("note", note.unwrap_or("")),
                ];
                let counts = review::progress(&store)?;
                return Ok(Some(Answer::Page(confirm_page(
                    &bulk,
                    "/rule",
                    &fields,
                    &self.token,
                    &counts,
                ))));
            }
            return Ok(Some(Answer::Redirect("/log".into())));
        }
        if let Some(entry) = id("/log/", "/undo") {
            queue::undo(&mut store, &self.dir, entry)?;
            return Ok(Some(Answer::Redirect("/log".into())));
        }
        Ok(None)
    }
}

/// What a POST answers: a page (a confirmation) or where to go next.
enum Answer {
    Page(String),
    Redirect(String),
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The ids before and after `id` in `ids`.
fn neighbours(ids: &[i64], id: i64) -> (Option<i64>, Option<i64>) {
    let pos = ids.iter().position(|&x| x == id);
    let prev = pos.and_then(|i| i.checked_sub(1)).map(|i| ids[i]);
    let next = pos.and_then(|i| ids.get(i + 1).copied());
    (prev, next)
}

/// A refused input (no such pair, a rule that does not parse) is the curator's 400; anything
/// else is the server's 500.
fn error_response(e: &anyhow::Error) -> Response<std::io::Cursor<Vec<u8>>> {
    let status = if crate::error::is_bad_input(e) {
        400
    } else {
        500
    };
    html_response(format!("<p>{}</p>", escape(&format!("{e:#}"))), status)
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
}
