//! What the command-line tests share: the real binary, and a `serve` run up to its ready line.

pub(crate) mod standin;

use std::io::{BufRead, BufReader, Lines, Read, Write};
use std::net::TcpListener;
use std::process::{Child, ChildStderr, Command};

/// The `ucpd` binary with a clean environment (no data dir or config inherited), logging at
/// `warn` without colours; a test that reads log lines sets `UCPD_LOG` itself.
pub(crate) fn ucpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucpd"));
    command.env_remove("UCPD_DATA_DIR").env_remove("UCPD_CONFIG").env("UCPD_LOG", "warn").env("NO_COLOR", "1");
    command
}

/// A child process killed and reaped when dropped, so a failing test leaves no server behind.
pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Reads a spawned `serve`'s standard error (piped) up to its `ucpd ready` line, then stops
/// it. Returns the ready line and everything logged up to it; panics with the log when the
/// server exits without becoming ready.
pub(crate) fn until_ready(mut child: Child) -> (String, String) {
    let stderr = child.stderr.take().expect("serve is spawned with stderr piped");
    let mut seen = String::new();
    let mut ready = None;
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("ucpd ready") {
            ready = Some(line);
            break;
        }
    }
    child.kill().ok();
    child.wait().ok();
    let ready = ready.unwrap_or_else(|| panic!("no ready line:\n{seen}"));
    (ready, seen)
}

/// Serves `body` as JSON to every request on loopback (the platform profile).
pub(crate) fn serve_profile(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/profile.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buffer[..read]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
        }
    });
    url
}

/// Reads a spawned `serve`'s standard error (piped) up to its ready line, in either log format.
/// Returns the address it listens on (`127.0.0.1:PORT`) and the rest of its log, which the
/// caller goes on reading (or drains with [`drain`]) so a full pipe never blocks the server.
/// Panics with the log when the server exits before it is ready.
pub(crate) fn ready(child: &mut Child) -> (String, Lines<BufReader<ChildStderr>>) {
    let mut lines = BufReader::new(child.stderr.take().expect("serve is spawned with stderr piped")).lines();
    let mut seen = String::new();
    loop {
        let Some(Ok(line)) = lines.next() else { panic!("the server stopped before it was ready:\n{seen}") };
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("ucpd ready") {
            // `listen=127.0.0.1:PORT` in text, `"listen":"127.0.0.1:PORT"` in JSON: the first
            // address on the line either way.
            let start = line.find("127.0.0.1:").unwrap_or_else(|| panic!("no address: {line}"));
            let port: String = line[start + "127.0.0.1:".len()..].chars().take_while(char::is_ascii_digit).collect();
            return (format!("127.0.0.1:{port}"), lines);
        }
    }
}

/// Reads the rest of a server's log on a thread of its own, so a full pipe never blocks it.
pub(crate) fn drain(lines: Lines<BufReader<ChildStderr>>) {
    std::thread::spawn(move || for _ in lines {});
}

/// Imports a catalog of one product, `cap-1` at 12.50 USD, into `directory/data`; returns that
/// data directory.
pub(crate) fn one_product_store(directory: &std::path::Path) -> std::path::PathBuf {
    let feed = directory.join("feed.tsv");
    std::fs::write(
        &feed,
        "id\ttitle\tdescription\tlink\timage_link\tprice\tavailability\n\
         cap-1\tBaseball Cap\tCotton cap\thttps://shop.example/cap\thttps://shop.example/cap.jpg\t12.50 USD\tin_stock\n",
    )
    .unwrap();
    let data = directory.join("data");
    let imported = ucpd().arg("import").arg(&feed).arg("--data-dir").arg(&data).output().unwrap();
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    data
}

/// `create_checkout`'s arguments for `quantity` of [`one_product_store`]'s cap, shipped: ready
/// for complete.
pub(crate) fn cap_checkout(quantity: u32) -> serde_json::Value {
    serde_json::json!({ "checkout": {
        "line_items": [{ "item": { "id": "cap-1" }, "quantity": quantity }],
        "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [{ "street_address": "1 Main St",
            "address_locality": "Springfield", "address_region": "IL", "postal_code": "62701", "address_country": "US" }],
            "groups": [{ "selected_option_id": "standard" }] }] } } })
}

/// `complete_checkout`'s `checkout` member: the sandbox handler's approving token.
pub(crate) fn sandbox_payment() -> serde_json::Value {
    serde_json::json!({ "payment": { "instruments": [{ "id": "pi_1", "handler_id": "sandbox", "type": "card",
        "credential": { "type": "token", "token": "tok_sandbox_success" } }] } })
}

/// `ucpd platforms hash-key KEY`: what a config lists for an API key.
pub(crate) fn hash_key(key: &str) -> String {
    let hash = ucpd().args(["platforms", "hash-key", key]).output().unwrap();
    String::from_utf8(hash.stdout).unwrap().trim().to_owned()
}

/// `command serve` on an ephemeral loopback port, no demo catalog, on `data` with the settings
/// of `config`, its standard error piped (read it with [`ready`]).
pub(crate) fn spawn_serve(mut command: Command, data: &std::path::Path, config: &std::path::Path) -> Child {
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--no-demo", "--dev-insecure-profiles", "--data-dir"])
        .arg(data)
        .arg("--config")
        .arg(config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}
