//! What a failing disk does to money: the real `ucpd` binary, its SIGXFSZ ignored and its
//! soft file-size limit lowered to one byte at the moment that matters, so that every write to
//! a regular file fails (EFBIG) as on a failing disk, then put back. A commit the disk fails
//! may or may not be on disk: an approved charge is then kept for its order, never refunded;
//! a merchant's refund is made once, however often it is repeated before it is recorded; and
//! the buyer's page never says "nothing was charged" when it cannot know.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use common::standin::{ADMIN_KEY, Client, Processor, mug_shop, pay_acme, ready_checkout, serve_with, start_stand_ins};

/// A shop whose server's disk can be made to fail ([`fail_the_disk`]), charging through the
/// stand-in processor.
struct DiskShop {
    _directory: tempfile::TempDir,
    processor: Processor,
    server: common::Killed,
    url: String,
    client: Arc<Client>,
}

impl DiskShop {
    async fn start() -> DiskShop {
        let directory = tempfile::tempdir().unwrap();
        let data = directory.path().join("data");
        let processor = Processor::default();
        let base = start_stand_ins(processor.clone()).await;
        let config = mug_shop(directory.path(), &data, &base);
        let (server, url) = serve_on_a_disk_that_can_fail(&config, &data);
        let profile = format!("{base}/profile.json");
        let client = Arc::new(Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile });
        DiskShop { _directory: directory, processor, server, url, client }
    }
}

/// [`serve`] with SIGXFSZ ignored (inherited through exec), so that a write past the file-size
/// limit [`fail_the_disk`] sets fails, as on a failing disk, rather than killing the server.
fn serve_on_a_disk_that_can_fail(config: &std::path::Path, data: &std::path::Path) -> (common::Killed, String) {
    let mut ignoring = Command::new("sh");
    ignoring.args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_ucpd")]);
    let (server, url) = serve_with(ignoring, config, data);
    (common::Killed(server), url)
}

/// Lowers the running server's soft file-size limit to one byte (`prlimit`, util-linux), so
/// every write to a regular file fails, as on a failing disk, until the returned guard puts
/// the limit back.
fn fail_the_disk(server: &Child) -> DiskBack {
    let pid = server.id().to_string();
    let shown = Command::new("prlimit")
        .args(["--pid", &pid, "--fsize", "--output", "SOFT", "--noheadings", "--raw"])
        .output()
        .expect("prlimit (util-linux) runs");
    let soft = String::from_utf8(shown.stdout).unwrap().trim().to_owned();
    assert!(shown.status.success() && !soft.is_empty(), "prlimit could not read the file-size limit");
    set_file_size(&pid, "1");
    DiskBack { pid, soft }
}

fn set_file_size(pid: &str, soft: &str) {
    let status = Command::new("prlimit").args(["--pid", pid, &format!("--fsize={soft}:")]).status().unwrap();
    assert!(status.success(), "prlimit --fsize={soft}: failed");
}

/// Puts the server's file-size limit back when dropped.
struct DiskBack {
    pid: String,
    soft: String,
}

impl Drop for DiskBack {
    fn drop(&mut self) {
        set_file_size(&self.pid, &self.soft);
    }
}

// The disk fails the COMMIT that places an approved charge's order (every file write of the
// server fails with EFBIG, its soft file-size limit lowered to one byte while the processor is
// answering). SQLite cannot say whether such a commit's WAL frames reached the disk, so the
// order may stand: the charge is not refunded (before, it was, and a restart could then find
// the order beside its refund). The complete answers 503 "the payment was approved", and once
// the disk is back the recovery sweeper places the order from that one charge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_the_disk_fails_keeps_its_approved_charge_for_the_order() {
    let DiskShop { _directory, processor, server, url: _, client } = DiskShop::start().await;
    let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let arguments = pay_acme(&id, "tok_live");
    processor.holding.store(true, Ordering::SeqCst);
    let completing = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { client.tool("complete_checkout", arguments).await })
    };
    // The claim is stored and the charge approved; its answer is held until the disk is broken.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processor.received.load(Ordering::SeqCst) < 1 {
        assert!(tokio::time::Instant::now() < deadline, "the charge never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let broken = fail_the_disk(&server.0);
    processor.release.notify_one();
    let (status, reply) = completing.await.unwrap();
    drop(broken);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the payment was approved"), "{reply}");
    assert!(processor.refunds.lock().unwrap().is_empty(), "a charge whose order may stand is not refunded");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let settled = loop {
        let body = client.content("get_checkout", json!({ "id": id })).await;
        if body["status"] != "complete_in_progress" || tokio::time::Instant::now() > deadline {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(settled["status"], "completed", "{settled}");
    let order = settled["order"]["id"].as_str().expect("the order of the one charge");
    let order = client.content("get_order", json!({ "id": order })).await;
    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
    assert_eq!(processor.charges.lock().unwrap().len(), 1, "charged once");
    assert!(processor.refunds.lock().unwrap().is_empty(), "and kept");
}

// A merchant's refund the processor made but the store could not record (the disk failed the
// commit of its record) is made once, whatever the retries and whatever changed on the order
// meanwhile: it was kept as pending before the processor was asked, so the same request again,
// after another change moved the order on, settles it under the same key. Before, every
// attempt had a random key (each retry refunded the buyer again), and then a key derived from
// the order's version (a retry after another change refunded again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_the_disk_failed_to_record_is_made_once_by_its_retry() {
    let DiskShop { _directory, processor, server, url, client } = DiskShop::start().await;
    let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
    let completed = client.content("complete_checkout", pay_acme(created["id"].as_str().unwrap(), "tok_live")).await;
    let order = completed["order"]["id"].as_str().unwrap_or_else(|| panic!("{completed}")).to_owned();

    let post = |action: &str, body: Value| {
        client.http.post(format!("{url}/admin/api/orders/{order}/{action}")).bearer_auth(ADMIN_KEY).json(&body).send()
    };
    let refund = json!({ "amount": 500, "reason": "Scratched" });
    // The refund is kept and reaches the processor; the disk fails before its record.
    processor.holding.store(true, Ordering::SeqCst);
    let failing = tokio::spawn(post("refund", refund.clone()));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processor.refund_keys.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the refund never reached the processor");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let broken = fail_the_disk(&server.0);
    processor.holding.store(false, Ordering::SeqCst);
    processor.release.notify_one();
    let failed = failing.await.unwrap().unwrap();
    drop(broken);
    assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let failed: Value = failed.json().await.unwrap();
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.contains("may or may not have been saved: read the order before repeating"), "{failed}");
    assert_eq!(processor.refund_keys.lock().unwrap().len(), 1, "the processor refunded before the store failed");

    // Another change moves the order on before the merchant repeats the refund.
    let credited = post("adjust", json!({ "type": "credit", "amount": -100 })).await.unwrap();
    assert_eq!(credited.status(), StatusCode::OK);
    let retried = post("refund", refund.clone()).await.unwrap();
    assert_eq!(retried.status(), StatusCode::OK);
    let retried: Value = retried.json().await.unwrap();
    assert_eq!(retried["payment"]["refunded"], 500, "{retried}");
    let adjustments = retried["order"]["adjustments"].as_array().cloned().unwrap_or_default();
    let refunds: Vec<&Value> = adjustments.iter().filter(|adjustment| adjustment["type"] == "refund").collect();
    assert_eq!(refunds.len(), 1, "{retried}");
    let keys = processor.refund_keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 2, "asked twice: {keys:?}");
    assert_eq!(keys[0], keys[1], "under one key, so refunded once: {keys:?}");
    assert_eq!(keys[0], refunds[0]["id"].as_str().unwrap(), "the key is the adjustment's id");

    // A second refund of the same amount, asked for after the first was recorded, is a refund
    // of its own.
    let again: Value = post("refund", refund).await.unwrap().json().await.unwrap();
    assert_eq!(again["payment"]["refunded"], 1000, "{again}");
    let keys = processor.refund_keys.lock().unwrap().clone();
    assert_ne!(keys[2], keys[0], "{keys:?}");
}

// The buyer presses "Place order" on the checkout page while the disk fails. The page cannot
// know what happened (here the claim's commit failed, before any charge; after the charge it
// could be the order's), so it asks the buyer to reload and promises no second charge; it
// used to say "Nothing was charged" for any failure. Once the disk is back, the same button
// places the order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_buyer_page_never_says_nothing_was_charged_when_the_disk_failed() {
    let DiskShop { _directory, processor: _, server, url: _, client } = DiskShop::start().await;
    let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
    let continue_url = created["continue_url"].as_str().unwrap_or_else(|| panic!("{created}"));
    let (page, query) = continue_url.split_once('?').unwrap();
    let place = format!("{page}/place?{query}");
    let press = || client.http.post(&place).header("content-type", "application/x-www-form-urlencoded").body("").send();

    let broken = fail_the_disk(&server.0);
    let failed = press().await.unwrap();
    drop(broken);
    assert!(failed.status().is_server_error(), "{}", failed.status());
    let html = failed.text().await.unwrap();
    assert!(html.contains("Please reload") && html.contains("to see whether it was placed"), "{html}");
    assert!(!html.to_lowercase().contains("nothing was charged"), "{html}");

    let placed = press().await.unwrap();
    assert!(placed.status().is_success(), "{}", placed.status());
    let id = created["id"].as_str().unwrap();
    let checkout = client.content("get_checkout", json!({ "id": id })).await;
    assert_eq!(checkout["status"], "completed", "{checkout}");
}
