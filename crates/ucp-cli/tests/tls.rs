//! `ucpd serve --tls-cert … --tls-key …`: the real binary serving https (issue 8 item 1,
//! checklist 62).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn ucpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucpd"));
    command.env_remove("UCPD_DATA_DIR").env_remove("UCPD_CONFIG").env("UCPD_LOG", "info").env("NO_COLOR", "1");
    command
}

#[test]
fn serve_with_tls_flags_advertises_https_and_refuses_half_a_pair() {
    let directory = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = directory.path().join("cert.pem");
    let key = directory.path().join("key.pem");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let data = directory.path().join("data");

    let mut child = ucpd()
        .args(["serve", "--listen", "127.0.0.1:0", "--no-demo", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .arg("--data-dir")
        .arg(&data)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let mut ready = None;
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
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
    assert!(ready.contains("tls=true"), "{ready}");
    assert!(ready.contains("https://127.0.0.1:"), "the profile is advertised over https: {ready}");

    let output = ucpd().arg("serve").arg("--tls-cert").arg(&cert).arg("--data-dir").arg(&data).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("tls.key_file"), "{stderr}");

    let help = ucpd().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in ["--tls-cert", "--tls-key", "--tls-client-ca"] {
        assert!(help.contains(flag), "serve --help lacks {flag}");
    }
}
