//! A tiny HTTP/1.1 server on 127.0.0.1 with full control over faults.
//!
//! Hand-rolled on tokio rather than hyper because the faults we need
//! (connection reset mid-request, headers that lie, raw gzip bombs) are
//! exactly what a correct HTTP library refuses to produce.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::acquire::frontier::lock;

/// A parsed request.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query as sent.
    pub target: String,
    /// Percent-decoded path.
    pub path: String,
    /// Decoded query parameters.
    pub query: Vec<(String, String)>,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Vec<u8>,
}

impl Request {
    /// First header with this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// First query parameter with this name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response to send.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers (Content-Length and Connection are added).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
    /// Wait this long before answering (slow server).
    pub delay: Duration,
}

impl Response {
    /// A response with a content type.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// 200 text/html; charset=utf-8.
    pub fn html(body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, "text/html; charset=utf-8", body)
    }

    /// 200 application/json.
    pub fn json(body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, "application/json; charset=utf-8", body)
    }

    /// A redirect.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::new(status, "text/html", "").with_header("Location", location)
    }

    /// 404.
    pub fn not_found() -> Self {
        Self::new(
            404,
            "text/html; charset=utf-8",
            "<html><body>not found</body></html>",
        )
    }

    /// Adds a header.
    pub fn with_header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }

    /// Delays the answer.
    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

/// What the handler wants done.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Send this response.
    Send(Response),
    /// Reset the connection (RST) without answering.
    Reset,
}

impl From<Response> for Reply {
    fn from(r: Response) -> Self {
        Reply::Send(r)
    }
}

/// One logged request.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// When the request head was read.
    pub at: Instant,
    /// Method.
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Decoded path.
    pub path: String,
    /// Host header.
    pub host: String,
}

/// Request handler.
pub type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// A running loopback server; stops when dropped.
pub struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<LogEntry>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Binds an ephemeral port on 127.0.0.1 and serves `handler`.
    pub async fn start(handler: Handler) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log: Arc<Mutex<Vec<LogEntry>>> = Arc::new(Mutex::new(Vec::new()));
        let log2 = log.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    continue;
                };
                let h = handler.clone();
                let l = log2.clone();
                tokio::spawn(async move {
                    let _ = serve_conn(sock, h, l).await;
                });
            }
        });
        Ok(Server { addr, log, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Base plus a path.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base(), path)
    }

    /// Bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<LogEntry> {
        lock(&self.log).clone()
    }

    /// Requests whose decoded path equals `path`.
    pub fn hits(&self, path: &str) -> usize {
        lock(&self.log).iter().filter(|e| e.path == path).count()
    }

    /// Forgets the log.
    pub fn clear_log(&self) {
        lock(&self.log).clear();
    }
}

async fn serve_conn(
    mut sock: TcpStream,
    h: Handler,
    log: Arc<Mutex<Vec<LogEntry>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if buf.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    let mut body = buf[head_end + 4..].to_vec();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while body.len() < len.min(1 << 20) {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let parsed = url::Url::parse(&format!("http://loopback{target}")).ok();
    let path = parsed
        .as_ref()
        .map(|u| percent_decode(u.path()))
        .unwrap_or_else(|| target.clone());
    let query = parsed
        .as_ref()
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default();
    let req = Request {
        method,
        target,
        path,
        query,
        headers,
        body,
    };
    lock(&log).push(LogEntry {
        at: Instant::now(),
        method: req.method.clone(),
        target: req.target.clone(),
        path: req.path.clone(),
        host: req.header("host").unwrap_or("").to_string(),
    });
    match h(&req) {
        Reply::Reset => {
            // Zero linger turns the close into a RST: a "connection reset by peer".
            let std = sock.into_std()?;
            let s2 = socket2::SockRef::from(&std);
            s2.set_linger(Some(Duration::ZERO))?;
            drop(std);
        }
        Reply::Send(r) => {
            if !r.delay.is_zero() {
                tokio::time::sleep(r.delay).await;
            }
            let mut out = format!("HTTP/1.1 {} {}\r\n", r.status, reason(r.status)).into_bytes();
            for (k, v) in &r.headers {
                out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
            }
            out.extend_from_slice(
                format!(
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    r.body.len()
                )
                .as_bytes(),
            );
            sock.write_all(&out).await?;
            if req.method != "HEAD" {
                sock.write_all(&r.body).await?;
            }
            sock.flush().await?;
            let _ = sock.shutdown().await;
        }
    }
    Ok(())
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

fn reason(s: u16) -> &'static str {
    match s {
        200 => "OK",
        202 => "Accepted",
        301 => "Moved Permanently",
        302 => "Found",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
