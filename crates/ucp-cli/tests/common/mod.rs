//! What the command-line tests share: the real binary, and a `serve` run up to its ready line.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command};

/// The `ucpd` binary with a clean environment (no data dir or config inherited), logging at
/// `warn` without colours; a test that reads log lines sets `UCPD_LOG` itself.
pub(crate) fn ucpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucpd"));
    command.env_remove("UCPD_DATA_DIR").env_remove("UCPD_CONFIG").env("UCPD_LOG", "warn").env("NO_COLOR", "1");
    command
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
