//! `ucpd serve --tls-cert … --tls-key …`: the real binary serving https (issue 8 item 1,
//! checklist 62).

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::process::Stdio;

use common::ucpd;

#[test]
fn serve_with_tls_flags_advertises_https_and_refuses_half_a_pair() {
    let directory = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = directory.path().join("cert.pem");
    let key = directory.path().join("key.pem");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let data = directory.path().join("data");

    let child = ucpd()
        .args(["serve", "--listen", "127.0.0.1:0", "--no-demo", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .arg("--data-dir")
        .arg(&data)
        .env("UCPD_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (ready, _) = common::until_ready(child);
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
