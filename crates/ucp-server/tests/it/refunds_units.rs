//! The units a cancel takes while its refund is pending (its processor's answer lost, or the
//! processor down): no other cancel or shipment takes them, a cancel that leaves only them gives
//! back the rest, and a pending cancel whose units became the order's last anyway is recorded
//! at what the processor was asked for.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::order_ops::{admin, get_order, ship_body};
use crate::order_refunds::{start_processor, two_mugs};
use crate::refunds_pending::{keys, shop};

/// The processor's refunds as (key, amount).
fn made(processor: &crate::order_refunds::Processor) -> Vec<(String, i64)> {
    processor
        .refunds
        .lock()
        .unwrap()
        .iter()
        .map(|(key, body)| (key.clone(), body["amount"].as_i64().unwrap()))
        .collect()
}

/// The key of the newest refund the sweeper abandons once the clock passes its patience,
/// when `count` are abandoned.
async fn abandoned_key(app: &crate::helpers::TestApp, count: usize) -> String {
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (_, listed) = admin(app, "/refunds?state=abandoned", None).await;
        if listed["refunds"].as_array().map_or(0, Vec::len) >= count {
            return listed["refunds"][0]["key"].as_str().unwrap().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "abandoned by the sweeper");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn cancel_body(mug: &Value, reason: &str, units: i64) -> Option<Value> {
    Some(json!({ "line_items": [{ "id": mug, "quantity": units }], "reason": reason }))
}

// A cancel whose processor answer was lost stays pending, and its unit with it: another cancel
// of that unit, or a shipment of it, is refused (a live audit had it refunded twice, or refunded
// and shipped). A cancel of the other unit is then the order's last: it gives back the rest,
// less the pending 1609, and the pending cancel, repeated, settles as it was asked. Every cent
// paid goes back once, nothing abandoned.
#[tokio::test]
async fn a_unit_whose_cancel_is_pending_is_neither_canceled_again_nor_shipped() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    let body =
        |reason: &str, units: i64| Some(json!({ "line_items": [{ "id": mug, "quantity": units }], "reason": reason }));

    *processor.lost.lock().unwrap() = true;
    let (status, answer) = admin(&app, &cancel, body("Damaged", 1)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("refund_pending")));
    *processor.lost.lock().unwrap() = false;
    let (status, answer) = admin(&app, &cancel, body("Buyer asked", 2)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity_exceeded")));
    let ship = ship_body(json!([{ "id": mug, "quantity": 2 }]));
    let (status, answer) = admin(&app, &format!("/orders/{id}/ship"), Some(ship)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity_exceeded")));

    let (status, details) = admin(&app, &cancel, body("Buyer asked", 1)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(2208)), "{details}");
    let (status, details) = admin(&app, &cancel, body("Damaged", 1)).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "canceled", "{details}");
    assert_eq!(details["payment"]["refunded"], 3817, "everything paid, once");
    let made: Vec<(String, i64)> = processor
        .refunds
        .lock()
        .unwrap()
        .iter()
        .map(|(key, body)| (key.clone(), body["amount"].as_i64().unwrap()))
        .collect();
    assert_eq!(made.len(), 3, "{made:?}");
    assert_eq!(made[2], made[0], "the pending one asked again under its key");
    assert_eq!(made[0].1 + made[1].1, 3817);
    let (_, abandoned) = admin(&app, "/refunds?state=abandoned", None).await;
    assert_eq!(abandoned["refunds"], json!([]), "{abandoned}");
}

// A cancel of "what is left" kept pending (the processor down) takes every unit not shipped:
// a shipment meanwhile is refused (it would ship what is being refunded), and the cancel,
// repeated once the processor is back, gives back the whole payment once.
#[tokio::test]
async fn a_pending_cancel_of_what_is_left_keeps_its_units_from_shipping() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    *processor.down.lock().unwrap() = true;
    let (status, answer) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("refund_pending")));
    *processor.down.lock().unwrap() = false;
    let ship = ship_body(json!([{ "id": mug, "quantity": 1 }]));
    let (status, answer) = admin(&app, &format!("/orders/{id}/ship"), Some(ship)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity_exceeded")));
    assert!(keys(&processor).is_empty(), "nothing refunded yet");

    let (status, details) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!((&details["status"], &details["payment"]["refunded"]), (&json!("canceled"), &json!(3817)));
    let made = processor.refunds.lock().unwrap().clone();
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0].1["amount"], 3817);
}

// A cancel of one mug kept pending at 1609 (its answer lost); the merchant cancels the other mug
// naming a smaller amount, 1609 (keeping the shipping). The pending cancel's mug is then the
// order's last, which would give back the rest, 2208: the processor was asked for 1609 under its
// key, so repeated it is recorded at 1609, its mug canceled, not abandoned; the 599 left is the
// merchant's to refund.
#[tokio::test]
async fn a_pending_cancel_whose_units_became_the_last_is_recorded_at_what_it_asked() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    let smaller = json!({ "line_items": [{ "id": mug, "quantity": 1 }], "amount": 1609 });
    let (status, details) = admin(&app, &cancel, Some(smaller)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(1609)), "{details}");

    let (status, details) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!((&details["status"], &details["payment"]["refunded"]), (&json!("canceled"), &json!(3218)));
    let made = made(&processor);
    assert_eq!(made.len(), 3, "{made:?}");
    assert_eq!(made[2], made[0], "asked again under its key, for what it asked");
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap();
    assert_eq!(adjustments[1]["id"], made[0].0.as_str());
    assert_eq!(adjustments[1]["totals"][0]["amount"], -1609);
    let (_, abandoned) = admin(&app, "/refunds?state=abandoned", None).await;
    assert_eq!(abandoned["refunds"], json!([]), "{abandoned}");
    let (status, details) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 599 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(3817)), "{details}");
}

// A cancel of one mug and then a cancel of what is left, both kept pending (the processor
// down): the second took the other mug and the rest, 2208. Settled oldest first (the named
// one, as the sweeper does), the cancel of what is left does not take the named one's mug from
// it: both settle as asked.
#[tokio::test]
async fn a_pending_cancel_of_what_is_left_leaves_an_earlier_pending_cancel_its_units() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    *processor.down.lock().unwrap() = true;
    let (status, _) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, _) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.down.lock().unwrap() = false;

    let (status, details) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(1609)), "{details}");
    let (status, details) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!((&details["status"], &details["payment"]["refunded"]), (&json!("canceled"), &json!(3817)));
    let mut amounts: Vec<i64> = made(&processor).into_iter().map(|(_, amount)| amount).collect();
    amounts.sort();
    assert_eq!(amounts, [1609, 2208]);
}

// A cancel whose processor answer was lost, pending past the sweeper's patience, is abandoned:
// the processor may have made it, so until the merchant records or dismisses it, it still holds
// its money and its unit (a live audit had both refunded again by a cancel with another reason).
// The other unit's cancel is then the order's last and gives back the rest less it; recorded by
// hand, the abandoned cancel cancels its unit at what the processor made, and every cent paid
// went back once.
#[tokio::test]
async fn an_abandoned_cancel_holds_its_money_and_units_until_the_merchant_reconciles_it() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    *processor.down.lock().unwrap() = true;
    let key = abandoned_key(&app, 1).await;
    *processor.down.lock().unwrap() = false;

    let (status, answer) = admin(&app, &cancel, cancel_body(&mug, "Buyer asked", 2)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("quantity_exceeded")));
    let (status, details) = admin(&app, &cancel, cancel_body(&mug, "Buyer asked", 1)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(2208)), "{details}");
    let (status, answer) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 1 }))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_exceeds_payment")));

    let (status, details) = admin(&app, &format!("/refunds/{key}/record"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!((&details["status"], &details["payment"]["refunded"]), (&json!("canceled"), &json!(3817)));
    let made: i64 = made(&processor).iter().map(|(_, amount)| amount).sum();
    assert_eq!(made, 3817, "every cent once");
}

// The same cancel, abandoned (the processor silent past the sweeper's patience, though it made
// the refund), sent again after the order moved on (the other mug shipped): it would carry a
// new key at the new version, but it is that abandoned request, which may have been made: 409
// naming its key, nothing refunded twice. So for a refund of a fixed amount, which the
// order's money would still allow.
#[tokio::test]
async fn the_same_request_sent_again_beside_its_abandoned_refund_is_refused() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, mug) = two_mugs(&app).await;
    let cancel = format!("/orders/{id}/cancel");
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    let ship = ship_body(json!([{ "id": mug, "quantity": 1 }]));
    let (status, answer) = admin(&app, &format!("/orders/{id}/ship"), Some(ship)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    *processor.down.lock().unwrap() = true;
    abandoned_key(&app, 1).await;
    *processor.down.lock().unwrap() = false;

    let (status, answer) = admin(&app, &cancel, cancel_body(&mug, "Damaged", 1)).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_abandoned")), "{answer}");
    assert_eq!(made(&processor).len(), 1, "refunded once");

    let (other, _) = two_mugs(&app).await;
    let refund = format!("/orders/{other}/refund");
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(json!({ "amount": 500, "reason": "Late" }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    *processor.down.lock().unwrap() = true;
    abandoned_key(&app, 2).await;
    *processor.down.lock().unwrap() = false;
    let credit = json!({ "type": "credit", "amount": -100, "status": "completed" });
    let (status, _) = admin(&app, &format!("/orders/{other}/adjust"), Some(credit)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": 500, "reason": "Late" }))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_abandoned")), "{answer}");
    assert_eq!(made(&processor).len(), 2, "each refunded once");
}
