//! End to end: the review page in headless Chromium, driven over the DevTools protocol.
//! Opens the queue of clusters, decides a pair with the keyboard, a whole cluster and a bulk
//! rule (each confirmed on the page), undoes the rule from the log, and checks the store after
//! each step.
//! Skips (saying why) only when no Chromium is installed and CI is not set.

use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

struct Cdp {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Cdp {
    fn call(&mut self, method: &str, params: Value) -> Value {
        let v = self.send(method, params);
        assert!(v.get("error").is_none(), "{method}: {v}");
        v["result"].clone()
    }
    /// The whole reply to one command, an error reply included.
    fn send(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(tungstenite::Message::Text(msg)).unwrap();
        loop {
            let m = self.ws.read().unwrap();
            if let tungstenite::Message::Text(t) = m {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["id"] == id {
                    return v;
                }
            }
        }
    }
    /// The value of `expr` in the page; null when the page was between documents (a click
    /// that submits a form can replace the context the answer would come from, on a loaded
    /// machine): callers wait or assert on the value, so a null is never taken for success.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.send(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        r["result"]["result"]["value"].clone()
    }
    /// Waits until `expr` evaluates to true in a fully loaded page.
    fn wait_for(&mut self, expr: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let cond = format!("document.readyState === 'complete' && ({expr})");
        while Instant::now() < deadline {
            if self.eval(&cond) == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "timed out waiting for {expr}; page: {}",
            self.eval("location.href")
        );
    }
    fn key(&mut self, key: &str, code: &str, vk: u32) {
        for ty in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": ty, "key": key, "code": code, "text": key,
                       "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}),
            );
        }
    }
}

#[test]
fn decide_a_pair_by_keyboard_in_chromium() {
    let Some(chrome) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no chromium binary was found: .ci/run must install it"
        );
        eprintln!("skipped: no chromium binary on PATH (apt-get install -y chromium)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "topic.yaml",
        &format!(
            "name: page\nsources:\n  - {{kind: local, path: {}}}\n",
            examples().display()
        ),
    );
    run_ok(root, &["--quiet", "build", "topic.yaml", "--out", "out"]);
    let pending = json_lines(&stdout(&run_ok(
        root,
        &["--json", "review", "list", "--pairs", "--collection", "out"],
    )));
    assert!(pending.len() >= 2, "examples/texts give contained pairs");
    let first = pending[0]["id"].as_i64().unwrap();

    let mut server = Command::new(BIN)
        .args(["serve", "out", "--port", "0"])
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let _server = Guard(server);
    let url = url.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port = port_of(&url);

    // A state-changing request without the page's token is refused and changes nothing.
    let body = "decision=keep-both";
    let resp = http(
        port,
        &format!(
            "POST /pair/{first}/decide HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(resp.starts_with("HTTP/1.1 403"), "{resp}");
    // A page of another site whose name was rebound to 127.0.0.1 cannot even read the queue.
    let resp = http(
        port,
        "GET / HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n",
    );
    assert!(resp.starts_with("HTTP/1.1 421"), "{resp}");

    let profile = root.join("chromium-profile");
    let mut browser = Command::new(&chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = browser.stderr.take().unwrap();
    let _browser = Guard(browser);
    let mut lines = BufReader::new(stderr).lines();
    let mut devtools_port = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.split("DevTools listening on ws://127.0.0.1:").nth(1) {
            devtools_port = rest.split('/').next().and_then(|p| p.parse::<u16>().ok());
            break;
        }
    }
    // Keep draining Chromium's stderr so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    let devtools_port = devtools_port.expect("chromium printed no DevTools address");
    let list = http(
        devtools_port,
        // The Host header's port is the one Chromium writes into the WebSocket addresses.
        &format!(
            "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{devtools_port}\r\nConnection: close\r\n\r\n"
        ),
    );
    let targets: Value = serde_json::from_str(list.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let ws_url = targets
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .expect("a page target")["webSocketDebuggerUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let (ws, _) = tungstenite::connect(ws_url.as_str()).unwrap();
    let mut cdp = Cdp { ws, next: 0 };
    cdp.call("Page.enable", json!({}));
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
    );

    let review = |args: &[&str]| {
        let mut a = vec!["--json", "review", "--collection", "out"];
        a.extend_from_slice(args);
        json_lines(&stdout(&run_ok(root, &a)))
    };

    // The queue lists the pending clusters, with what is left in the header.
    let clusters = review(&["list"]);
    cdp.call("Page.navigate", json!({"url": url}));
    cdp.wait_for("document.querySelectorAll('tr.pending').length > 0");
    let rows = cdp.eval("document.querySelectorAll('#clusters tr.pending').length");
    assert_eq!(rows, json!(clusters.len()));
    assert!(cdp
        .eval("document.querySelector('header').textContent")
        .as_str()
        .unwrap()
        .contains(&format!(
            "{} pending in {} clusters",
            pending.len(),
            clusters.len()
        )));

    // Pair by pair: open the first pair of the pair listing; its shared passages are marked
    // and linked.
    cdp.call("Page.navigate", json!({"url": format!("{url}pairs")}));
    cdp.wait_for("document.querySelectorAll('tr.pending').length > 0");
    assert_eq!(
        cdp.eval("document.querySelectorAll('tr.pending').length"),
        json!(pending.len())
    );
    cdp.eval("document.querySelector('tr.pending a').click()");
    cdp.wait_for(&format!("location.pathname === '/pair/{first}'"));
    let marks = cdp.eval("document.querySelectorAll('#doc-a mark a[href^=\"#b\"]').length");
    assert!(marks.as_u64().unwrap() > 0, "no linked shared passage");

    // Keyboard: j goes to the next pair, k back, 2 drops the contained text.
    cdp.key("j", "KeyJ", 74);
    cdp.wait_for(&format!("location.pathname !== '/pair/{first}'"));
    cdp.key("k", "KeyK", 75);
    cdp.wait_for(&format!("location.pathname === '/pair/{first}'"));
    cdp.key("2", "Digit2", 50);
    cdp.wait_for(&format!(
        "location.pathname !== '/pair/{first}' && location.pathname !== '/pair/{first}/decide'"
    ));

    let decided = json_lines(&stdout(&run_ok(
        root,
        &[
            "--json",
            "review",
            "list",
            "--pairs",
            "--status",
            "decided",
            "--collection",
            "out",
        ],
    )));
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0]["id"], first);
    assert_eq!(decided[0]["decision"], "drop-contained");
    let gone = pending[0]["contained"].as_str().unwrap();
    assert!(!root.join(format!("out/docs/{gone}.txt")).exists());

    // A whole cluster by keyboard: 2 (keep the container) asks for confirmation, y confirms.
    let cluster = &review(&["list"])[0];
    let cid = cluster["id"].as_i64().unwrap();
    let waiting = cluster["pending"].as_array().unwrap().len();
    cdp.call(
        "Page.navigate",
        json!({"url": format!("{url}cluster/{cid}")}),
    );
    cdp.wait_for("document.getElementById('c-keep-container') !== null");
    cdp.key("2", "Digit2", 50);
    cdp.wait_for("document.getElementById('impact') !== null");
    let impact = cdp.eval("document.getElementById('impact').textContent");
    assert!(
        impact
            .as_str()
            .unwrap()
            .contains(&format!("{waiting} waiting pairs get drop-contained")),
        "{impact}"
    );
    assert!(
        review(&["cluster", &cid.to_string()])[0]["pending"]
            .as_array()
            .unwrap()
            .len()
            == waiting,
        "the confirmation page changes nothing"
    );
    cdp.key("y", "KeyY", 89);
    cdp.wait_for(&format!("!location.pathname.startsWith('/cluster/{cid}/')"));
    let after = &review(&["cluster", &cid.to_string()])[0];
    assert!(after["pending"].as_array().unwrap().is_empty());
    let decided = review(&["list", "--pairs", "--status", "decided"]);
    for p in cluster["pending"].as_array().unwrap() {
        let d = decided.iter().find(|x| &x["id"] == p).expect("decided");
        assert_eq!(d["decision"], "drop-contained");
    }

    // A bulk rule from the page: a mistake is named, then everything left is kept, confirmed.
    let left = review(&["list", "--pairs"]).len();
    assert!(left > 0, "pairs are left for the rule");
    cdp.call("Page.navigate", json!({"url": format!("{url}rule")}));
    cdp.wait_for("document.getElementById('where') !== null");
    cdp.eval("document.getElementById('where').value = 'cnt >= 0'; document.getElementById('preview').click()");
    cdp.wait_for("document.getElementById('rule-error') !== null");
    assert!(cdp
        .eval("document.getElementById('rule-error').textContent")
        .as_str()
        .unwrap()
        .contains("unknown field `cnt`"));
    cdp.eval(
        "document.getElementById('where').value = 'cont >= 0'; \
         document.getElementById('decision').value = 'keep-both'; \
         document.getElementById('preview').click()",
    );
    cdp.wait_for("document.getElementById('impact') !== null");
    assert!(cdp
        .eval("document.getElementById('impact').textContent")
        .as_str()
        .unwrap()
        .contains(&format!("{left} waiting pairs get keep-both")));
    cdp.eval("document.getElementById('confirm').click()");
    cdp.wait_for("location.pathname === '/log'");
    assert!(review(&["list", "--pairs"]).is_empty());
    let log = review(&["log"]);
    let kinds: Vec<&str> = log.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["pair", "cluster", "rule"]);

    // Undo the rule from the log: its pairs wait again.
    let rule_entry = log[2]["id"].as_i64().unwrap();
    cdp.eval(&format!(
        "document.getElementById('undo-{rule_entry}').click()"
    ));
    cdp.wait_for(&format!(
        "location.pathname === '/log' && document.getElementById('undo-{rule_entry}') === null"
    ));
    assert_eq!(review(&["list", "--pairs"]).len(), left);
    assert_eq!(review(&["log"])[2]["undone_by"], review(&["log"])[3]["id"]);
    cdp.call("Page.navigate", json!({"url": url}));
    cdp.wait_for("document.querySelectorAll('tr.pending').length > 0");

    // The page it landed on is the next pending pair: the screenshot for the README.
    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let target = match std::env::var_os("COLLECT_SCREENSHOT") {
        Some(_) => crate::common::root().join("docs/review.png"),
        None => root.join("review.png"),
    };
    std::fs::write(&target, png).unwrap();
}
