//! The checkout page rendered by headless Chromium (checklist 122): what a buyer's browser
//! shows, with a screenshot among the test artifacts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::checkout::address;
use crate::handoff::{create_checkout, usd};
use crate::helpers::{spawn_app, total_of};

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Where test artifacts go: `<target>/test-artifacts`.
pub fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("test-artifacts")
}

/// Runs Chromium with `args` (stdout to `stdout`), killed after `limit`.
fn run_chromium(profile: &Path, args: &[String], stdout: &Path, limit: Duration) -> std::process::ExitStatus {
    let mut command = Command::new(CHROMIUM);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(stdout).unwrap())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("chromium starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {limit:?}: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_page_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        if std::env::var_os("CI").is_some() {
            panic!("{CHROMIUM} is missing; .ci/run installs the Debian `chromium` package");
        }
        eprintln!(
            "SKIPPED checkout_page_renders_in_headless_chromium: {CHROMIUM} is not installed (apt-get install -y chromium)"
        );
        return;
    }
    let app = spawn_app().await;
    // Address given, shipping option not yet chosen: items, options, a message, the form.
    let created = create_checkout(
        &app,
        json!({
            "line_items": [{ "item": { "id": "mug-1" }, "quantity": 2 }, { "item": { "id": "sweater-m" }, "quantity": 1 }],
            "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
            "fulfillment": { "methods": [{ "type": "shipping", "destinations": [address()] }] }
        }),
    )
    .await;
    let url = created["continue_url"].as_str().unwrap().to_owned();
    let total = total_of(&created["totals"], "total").unwrap();

    let artifacts = artifacts_dir();
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join("handoff-checkout.png");
    let _ = std::fs::remove_file(&screenshot);
    let work = tempfile::tempdir().unwrap();
    let (work_path, shot) = (work.path().to_owned(), screenshot.clone());
    let (dom, url_for_dom) = (work.path().join("dom.html"), url.clone());
    let dom_path = dom.clone();
    tokio::task::spawn_blocking(move || {
        let status = run_chromium(
            &work_path.join("profile-shot"),
            &[format!("--screenshot={}", shot.display()), "--window-size=1200,1600".into(), url],
            &work_path.join("shot.out"),
            Duration::from_secs(90),
        );
        assert!(status.success(), "chromium --screenshot failed: {status}");
        let status = run_chromium(
            &work_path.join("profile-dom"),
            &["--dump-dom".into(), url_for_dom],
            &dom_path,
            Duration::from_secs(90),
        );
        assert!(status.success(), "chromium --dump-dom failed: {status}");
    })
    .await
    .unwrap();

    let png = std::fs::read(&screenshot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    assert!(png.len() > 10 * 1024, "a non-trivial screenshot ({} bytes)", png.len());
    let dom = std::fs::read_to_string(&dom).unwrap();
    assert!(dom.contains("Ceramic Coffee Mug"), "{dom}");
    assert!(dom.contains(&usd(total)), "total {} in {dom}", usd(total));
    assert!(dom.contains("Standard shipping") && dom.contains("Choose a shipping option."), "{dom}");
    eprintln!("screenshot: {}", screenshot.display());
}
