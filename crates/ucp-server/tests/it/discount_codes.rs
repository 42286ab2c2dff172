//! Discount codes against the status a checkout shows (checkout.md §2, §9; overview §7): a
//! code rejected in the answer to the platform's own write is a warning the platform saw with
//! its price, so the checkout stays ready and completes at that price; a code that applied at
//! the platform's last write and no longer does (used up by another order) makes it
//! `incomplete`, with `discount_code_rejected`, until the codes are written again.

use serde_json::{Value, json};
use ucp_domain::checkout::DiscountKind;
use ucp_server::config::DiscountSettings;

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::helpers::{TestApp, fixture_products, messages_with, spawn_app_with};

fn total(body: &Value) -> i64 {
    body["totals"].as_array().unwrap().iter().find(|total| total["type"] == "total").unwrap()["amount"]
        .as_i64()
        .unwrap()
}

async fn create(app: &TestApp, codes: &[&str]) -> Value {
    let mut checkout = ready_checkout("mug-1", 1);
    checkout["discounts"] = json!({ "codes": codes });
    app.tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": checkout })).await
}

#[tokio::test]
async fn a_rejected_code_the_platform_saw_does_not_block_and_a_lapsed_one_does() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.discounts.push(DiscountSettings {
            code: Some("ONCE".into()),
            title: "10% once".into(),
            kind: DiscountKind::Percentage(1000),
            min_subtotal: None,
            product_ids: vec![],
            categories: vec![],
            expires_at: None,
            usage_limit: Some(1),
            combinable: false,
        });
    })
    .await;

    // Rejected when written: the platform was shown the price without it.
    let created = create(&app, &["NOPE"]).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    assert_eq!(messages_with(&created, "discount_code_invalid").len(), 1, "{created}");
    let done = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(total(&done), total(&created), "charged the price it showed");

    // Applied when written, used up by another order since.
    let first = create(&app, &["ONCE"]).await;
    let second = create(&app, &["ONCE"]).await;
    assert_eq!(second["discounts"]["applied"][0]["code"], "ONCE", "{second}");
    let second_id = second["id"].as_str().unwrap();
    assert_eq!(complete(&app, first["id"].as_str().unwrap(), TOKEN_SUCCESS).await["status"], "completed");
    let read = app.tool("get_checkout", json!({ "id": second_id })).await;
    assert_eq!(read["status"], "incomplete", "the price it was shown is gone: {read}");
    let lapsed = messages_with(&read, "discount_code_rejected");
    assert_eq!((lapsed.len(), &lapsed[0]["severity"]), (1, &json!("recoverable")), "{read}");
    let refused = complete(&app, second_id, TOKEN_SUCCESS).await;
    assert!(refused.get("order").is_none(), "{refused}");
    assert_eq!(refused["status"], "incomplete", "{refused}");

    // Written again, the platform sees the new price, and the checkout completes at it.
    let mut again = ready_checkout("mug-1", 1);
    again["discounts"] = json!({ "codes": ["ONCE"] });
    let updated =
        app.tool("update_checkout", json!({ "meta": app.keyed_meta(), "id": second_id, "checkout": again })).await;
    assert_eq!(updated["status"], "ready_for_complete", "{updated}");
    assert!(messages_with(&updated, "discount_code_rejected").is_empty(), "{updated}");
    assert!(total(&updated) > total(&second), "{updated}");
    let done = complete(&app, second_id, TOKEN_SUCCESS).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(total(&done), total(&updated));
}
