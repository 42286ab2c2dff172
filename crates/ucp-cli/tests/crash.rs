//! No charge without an order, across a crash (issue 9 item 3): the real `ucpd` binary
//! charges through a slow local stand-in processor, is SIGKILLed while the charges are in
//! flight, and restarts on the same data directory; its recovery sweeper then asks the
//! processor about every charge, and each approved one ends as an order or a refund.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use common::standin::{Client, Processor, TOKEN_LOST, mug_shop, pay_acme, ready_checkout, serve, start_stand_ins};

const COMPLETES: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_charges_leaves_every_approved_charge_an_order_or_a_refund() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("data");
    let processor = Processor::default();
    let base = start_stand_ins(processor.clone()).await;
    let config = mug_shop(directory.path(), &data, &base);
    let (mut first, url) = serve(&config, &data);
    let client =
        Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile: format!("{base}/profile.json") };
    let mut ids = Vec::new();
    for _ in 0..COMPLETES {
        let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
        assert_eq!(created["status"], "ready_for_complete", "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let lost = ids[0].clone();
    let client = Arc::new(client);
    for (index, id) in ids.iter().enumerate() {
        let token = if index == 0 { TOKEN_LOST } else { "tok_live" };
        let arguments = pay_acme(id, token);
        let client = Arc::clone(&client);
        tokio::spawn(async move { client.tool("complete_checkout", arguments).await });
    }
    // Every charge reached the processor, none has been answered: kill.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processor.received.load(Ordering::SeqCst) < COMPLETES as u64 {
        assert!(tokio::time::Instant::now() < deadline, "the charges never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert_eq!(processor.charges.lock().unwrap().len(), COMPLETES - 1, "approved charges (one was lost)");

    let (mut second, url) = serve(&config, &data);
    let client =
        Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile: format!("{base}/profile.json") };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut states = HashMap::new();
    loop {
        for id in &ids {
            let body = client.content("get_checkout", json!({ "id": id })).await;
            states.insert(id.clone(), body);
        }
        let stuck = states.values().filter(|body| body["status"] == "complete_in_progress").count();
        if stuck == 0 || tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    let charges = processor.charges.lock().unwrap().clone();
    let refunds = processor.refunds.lock().unwrap().clone();
    let orders = states.values().filter(|body| body["order"]["id"].is_string()).count();
    assert_eq!(orders, COMPLETES - 1, "stock is not tracked, so every approved charge became its order");
    for id in &ids {
        let body = &states[id];
        assert_ne!(body["status"], "complete_in_progress", "left stuck after the restart: {body}");
        let charge = charges.iter().find(|(key, _)| key.starts_with(id.as_str())).map(|(_, reference)| reference);
        match charge {
            Some(reference) => {
                let order = body["order"]["id"].as_str();
                let refunded = refunds.contains(reference);
                assert!(order.is_some() != refunded, "an approved charge is exactly one of order or refund: {body}");
                if let Some(order) = order {
                    let order = client.content("get_order", json!({ "id": order })).await;
                    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
                }
            }
            None => {
                assert_eq!(id, &lost);
                assert!(body.get("order").is_none(), "no order without a charge: {body}");
                assert_eq!(body["status"], "ready_for_complete", "the lost charge's checkout is open again: {body}");
            }
        }
    }
    second.kill().ok();
    second.wait().ok();
}
