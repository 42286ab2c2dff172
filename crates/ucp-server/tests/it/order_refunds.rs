//! Refunds of the merchant's order operations (issue 9 item 1): they reach the order's payment
//! processor with the amount and our own key per refund, and never exceed what was paid minus
//! what was refunded.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::post;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::config::HttpProcessorSettings;

use crate::checkout::{TOKEN_SUCCESS, pay, ready_checkout};
use crate::helpers::TestApp;
use crate::order_ops::{admin, app_with, get_order, place, total_of};

/// A processor stand-in: approves charges as `ch_1`, records refunds (key, body), and answers
/// 500 to refunds while `down` is set. While `lost` is set it makes the refund and answers 500
/// (its answer lost); while `refusing` is set it answers 400. `asked` holds the key of every
/// refund asked for. While `together` holds a barrier, each refund is answered only once that
/// many have arrived (at most 5 s); while `delay` is set, each refund made is answered that
/// much later.
#[derive(Clone, Default)]
pub(crate) struct Processor {
    pub(crate) delay: Arc<Mutex<Option<std::time::Duration>>>,
    pub(crate) refunds: Arc<Mutex<Vec<(String, Value)>>>,
    pub(crate) asked: Arc<Mutex<Vec<String>>>,
    pub(crate) down: Arc<Mutex<bool>>,
    pub(crate) lost: Arc<Mutex<bool>>,
    pub(crate) refusing: Arc<Mutex<bool>>,
    pub(crate) together: Arc<Mutex<Option<Arc<tokio::sync::Barrier>>>>,
}

pub(crate) async fn start_processor() -> (Processor, String, tokio_util::sync::DropGuard) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/charge", listener.local_addr().unwrap());
    let processor = Processor::default();
    let router = Router::new()
        .route("/charge", post(|| async { axum::Json(json!({ "status": "approved", "reference": "ch_1" })) }))
        .route(
            "/charge/refund",
            post(|State(processor): State<Processor>, headers: HeaderMap, axum::Json(body): axum::Json<Value>| async move {
                let key = headers["idempotency-key"].to_str().unwrap().to_owned();
                processor.asked.lock().unwrap().push(key.clone());
                if *processor.refusing.lock().unwrap() {
                    return axum::http::StatusCode::BAD_REQUEST.into_response();
                }
                if *processor.down.lock().unwrap() {
                    return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
                }
                processor.refunds.lock().unwrap().push((key, body));
                if *processor.lost.lock().unwrap() {
                    return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
                }
                let delay = *processor.delay.lock().unwrap();
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
                let together = processor.together.lock().unwrap().clone();
                if let Some(together) = together {
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), together.wait()).await;
                }
                axum::Json(json!({ "status": "refunded" })).into_response()
            }),
        )
        .with_state(processor.clone());
    let stop = CancellationToken::new();
    let cancelled = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, router).with_graceful_shutdown(cancelled.cancelled_owned()).await.ok()
    });
    (processor, url, stop.drop_guard())
}

pub(crate) fn acme(url: &str) -> HttpProcessorSettings {
    HttpProcessorSettings {
        id: "acme".into(),
        name: "com.acme.pay".into(),
        url: url.parse().unwrap(),
        timeout_ms: 6000,
        retries: 0,
        instrument_types: vec![],
        currencies: vec![],
        countries: vec![],
    }
}

// Refunds go to the order's processor with the amount and our own key per refund, and never
// exceed what was paid minus what was refunded; a processor that is down records nothing.
#[tokio::test]
async fn refunds_reach_the_processor_and_never_exceed_the_payment() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, placed) = place(&app, "acme").await;
    let paid = total_of(&placed);
    let refund = format!("/orders/{id}/refund");

    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 500, "reason": "Late delivery" }))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["payment"], json!({ "handler_id": "acme", "currency": "USD", "amount": paid, "refunded": 500 }));
    let order = get_order(&app, &id).await;
    let adjustment = &order["adjustments"][0];
    assert_eq!(adjustment["type"], "refund");
    assert_eq!(adjustment["totals"], json!([{ "type": "total", "amount": -500 }]));
    assert_eq!(adjustment["description"], "Late delivery");
    let refunds = processor.refunds.lock().unwrap().clone();
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].0, adjustment["id"].as_str().unwrap(), "our key: the adjustment's id");
    assert_eq!(refunds[0].1, json!({ "reference": "ch_1", "amount": 500, "currency": "USD" }));

    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": paid - 499 }))).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_exceeds_payment")),
        "{answer}"
    );
    assert_eq!(processor.refunds.lock().unwrap().len(), 1, "nothing sent for a refused refund");

    *processor.down.lock().unwrap() = true;
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": 100 }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert_eq!(get_order(&app, &id).await, order, "a failed refund records nothing");
    *processor.down.lock().unwrap() = false;

    // The refund left pending may have been made: what it asks back is not left to refund.
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": paid - 500 }))).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_exceeds_payment")),
        "{answer}"
    );
    assert!(answer["message"].as_str().unwrap().contains(&format!("({} of {paid} paid", paid - 600)), "{answer}");
    // Repeated, it is settled under its key; then the rest can go back.
    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 100 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(600)), "{details}");
    let (status, details) = admin(&app, &refund, Some(json!({ "amount": paid - 600 }))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["payment"]["refunded"], paid);
    let (status, _) = admin(&app, &refund, Some(json!({ "amount": 1 }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "fully refunded");
    let refunds = processor.refunds.lock().unwrap().clone();
    assert_eq!(refunds.len(), 3);
    assert_ne!(refunds[0].0, refunds[2].0, "one key per refund");

    // A manual adjustment is recorded as sent, signed, and moves no money.
    let (status, _) = admin(
        &app,
        &format!("/orders/{id}/adjust"),
        Some(json!({ "type": "credit", "amount": -250, "description": "Goodwill" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let order = get_order(&app, &id).await;
    assert_eq!(order["adjustments"][3]["type"], "credit");
    assert_eq!(order["adjustments"][3]["totals"][0]["amount"], -250);
    assert_eq!(processor.refunds.lock().unwrap().len(), 3);
}

// Refunds of different amounts asked at once, each within what is left but together more than
// was paid: the processor is asked for no more than the payment (the store decides, in the
// write that keeps the refund pending, against the refunds recorded and pending); the others
// are 422 refund_exceeds_payment and reach no processor.
#[tokio::test]
async fn refunds_asked_at_once_never_ask_back_more_than_was_paid() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, placed) = place(&app, "acme").await;
    let paid = total_of(&placed);
    let refund = format!("/orders/{id}/refund");
    let asks = (0..4).map(|n| {
        let (app, refund) = (&app, &refund);
        async move { admin(app, refund, Some(json!({ "amount": paid / 2 + 1 + n }))).await }
    });
    let answers = futures_util::future::join_all(asks).await;
    let made: Vec<&(StatusCode, Value)> = answers.iter().filter(|(status, _)| *status == StatusCode::OK).collect();
    assert_eq!(made.len(), 1, "{answers:?}");
    for (status, answer) in answers.iter().filter(|(status, _)| *status != StatusCode::OK) {
        assert_eq!(
            (*status, answer["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_exceeds_payment"))
        );
    }
    let asked: i64 = processor.refunds.lock().unwrap().iter().map(|(_, body)| body["amount"].as_i64().unwrap()).sum();
    assert!(asked <= paid, "{asked} asked back of {paid} paid");
    assert_eq!(processor.asked.lock().unwrap().len(), 1);
    assert_eq!(get_order(&app, &id).await["adjustments"].as_array().unwrap().len(), 1);
}

// The same refund asked twice at once (a double click, a client retrying a slow call) against
// the same order version is one refund: the record ids derive from the version each request
// found and the request, so the one that waits for the other's hold on the order finds the
// refund recorded under its own ids and answers the order as it stands.
#[tokio::test]
async fn the_same_refund_asked_twice_at_once_is_made_and_recorded_once() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    // Long enough for the second to read the order before the first records its refund.
    *processor.delay.lock().unwrap() = Some(std::time::Duration::from_secs(3));
    let body = json!({ "amount": 500, "reason": "Late delivery" });
    let (first, second) =
        tokio::join!(admin(&app, &refund, Some(body.clone())), admin(&app, &refund, Some(body.clone())));
    for (status, details) in [&first, &second] {
        assert_eq!(*status, StatusCode::OK, "{details}");
        assert_eq!(details["payment"]["refunded"], 500, "{details}");
    }
    let order = get_order(&app, &id).await;
    let adjustments = order["adjustments"].as_array().unwrap();
    assert_eq!(adjustments.len(), 1, "{order}");
    let refunds = processor.refunds.lock().unwrap().clone();
    assert_eq!(refunds.len(), 1, "asked once: {refunds:?}");
    assert_eq!(refunds[0].0, adjustments[0]["id"].as_str().unwrap());

    // Asked again once recorded, it is a refund of its own.
    *processor.delay.lock().unwrap() = None;
    let (status, details) = admin(&app, &refund, Some(body)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(1000)), "{details}");
    assert_ne!(processor.refunds.lock().unwrap()[1].0, refunds[0].0);
}

// Two partial cancels of one order at once, one unit each of a line of two: each refunds what
// it records. The one that holds the order second works out its refund on the order as the
// first left it: the last unit, with the rest of the shipping (CA taxes only the goods).
// Before the hold both refunded the first unit's share; the second, recorded as the last unit,
// was abandoned with 409 `refund_abandoned` though the processor had made it.
#[tokio::test]
async fn partial_cancels_at_once_each_refund_what_they_record() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, mug) = two_mugs(&app).await;

    *processor.delay.lock().unwrap() = Some(std::time::Duration::from_secs(1));
    let cancel = format!("/orders/{id}/cancel");
    let body = |reason: &str| Some(json!({ "line_items": [{ "id": mug, "quantity": 1 }], "reason": reason }));
    let (first, second) =
        tokio::join!(admin(&app, &cancel, body("Damaged in the warehouse")), admin(&app, &cancel, body("Buyer asked")));
    for (status, details) in [&first, &second] {
        assert_eq!(*status, StatusCode::OK, "{details}");
    }
    let order = get_order(&app, &id).await;
    let adjustments = order["adjustments"].as_array().unwrap();
    let mut given: Vec<i64> =
        adjustments.iter().map(|adjustment| -adjustment["totals"][0]["amount"].as_i64().unwrap()).collect();
    given.sort();
    assert_eq!(given, [1500 + 109, 1500 + 599 + 109], "a unit with its tax; the last with the shipping: {order}");
    assert_eq!(order["line_items"][0]["status"], "removed", "both units canceled: {order}");
    let refunds = processor.refunds.lock().unwrap().clone();
    let mut made: Vec<i64> = refunds.iter().map(|(_, body)| body["amount"].as_i64().unwrap()).collect();
    made.sort();
    assert_eq!(made, given, "the processor made what the order records");
    for adjustment in adjustments {
        assert!(refunds.iter().any(|(key, _)| adjustment["id"] == key.as_str()), "{adjustment} under its key");
    }
    let (_, abandoned) = admin(&app, "/refunds?state=abandoned", None).await;
    assert_eq!(abandoned["refunds"], json!([]), "{abandoned}");
}

/// An order of 2 × mug-1 paid through acme, and its line's id: 3000, standard shipping 599
/// (free only from 5000), CA tax 7.25 % of the goods (218). One unit canceled gives back 1609
/// (1500 and half the tax); the last, 2208 (the shipping too).
pub(crate) async fn two_mugs(app: &TestApp) -> (String, Value) {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 2) })).await;
    let mut payment = pay(TOKEN_SUCCESS);
    payment["payment"]["instruments"][0]["handler_id"] = json!("acme");
    let arguments = json!({ "meta": app.keyed_meta(), "id": created["id"], "checkout": payment });
    let completed = app.tool("complete_checkout", arguments).await;
    let id = completed["order"]["id"].as_str().unwrap().to_owned();
    let placed = get_order(app, &id).await;
    assert_eq!(total_of(&placed), 3000 + 599 + 218, "{placed}");
    (id, placed["line_items"][0]["id"].clone())
}

/// An admin API POST to `path` (under `/admin/api`) with the admin key and `key` as its
/// Idempotency-Key.
fn keyed(app: &TestApp, path: &str, key: &str) -> reqwest::RequestBuilder {
    app.http
        .post(format!("{}/admin/api{path}", app.base_url))
        .bearer_auth(crate::order_ops::KEY)
        .header("idempotency-key", key)
}

// A merchant's client that lost the reply to a refund sends it again with the same
// Idempotency-Key: the stored answer comes back and nothing runs (one processor refund, one
// adjustment), though the order has moved on since and the change's own ids would differ.
// The same key with another body is 409; a refusal is not stored, so its key is free again.
#[tokio::test]
async fn a_refund_sent_again_with_its_idempotency_key_is_answered_not_repeated() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, placed) = place(&app, "acme").await;
    let paid = total_of(&placed);
    let send = |key: &str, body: Value| keyed(&app, &format!("/orders/{id}/refund"), key).json(&body).send();
    let first = send("refund-1", json!({ "amount": 500 })).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    let again = send("refund-1", json!({ "amount": 500 })).await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.json::<Value>().await.unwrap(), first, "the stored answer");
    assert_eq!(processor.refunds.lock().unwrap().len(), 1, "refunded once");
    assert_eq!(get_order(&app, &id).await["adjustments"].as_array().map(Vec::len), Some(1));

    // The order id percent-encoded is the same order, and the same stored answer.
    let encoded: String = id.bytes().map(|byte| format!("%{byte:02X}")).collect();
    let same = keyed(&app, &format!("/orders/{encoded}/refund"), "refund-1")
        .json(&json!({ "amount": 500 }))
        .send()
        .await
        .unwrap();
    assert_eq!(same.json::<Value>().await.unwrap(), first, "the stored answer");
    assert_eq!(processor.refunds.lock().unwrap().len(), 1, "refunded once");

    let changed = send("refund-1", json!({ "amount": 600 })).await.unwrap();
    assert_eq!(changed.status(), StatusCode::CONFLICT);
    assert_eq!(changed.json::<Value>().await.unwrap()["code"], "idempotency_conflict");

    let refused = send("refund-2", json!({ "amount": paid })).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "over what is left");
    let fitted = send("refund-2", json!({ "amount": 100 })).await.unwrap();
    assert_eq!(fitted.status(), StatusCode::OK, "the refusal was not stored: its key is free");
    let (status, details) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 100 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(700)), "no key: as before");
    assert_eq!(processor.refunds.lock().unwrap().len(), 3);
}

// A blank body is no body, for the key as for the handler: a keyed cancel with a blank body
// sent twice answers the stored 200, not 409 `order_canceled`. And a client that gives up
// on a slow refund does not cancel it: the processor's refund is recorded all the same.
#[tokio::test]
async fn a_blank_keyed_change_replays_and_a_client_that_leaves_does_not_cancel_a_refund() {
    let (processor, url, _guard) = start_processor().await;
    let app = app_with(|settings| settings.payments.http = vec![acme(&url)]).await;
    let (id, _) = place(&app, "acme").await;
    let cancel = || keyed(&app, &format!("/orders/{id}/cancel"), "cancel-1").body(" ").send();
    let first = cancel().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    let again = cancel().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK, "replayed, not refused as canceled");
    assert_eq!(again.json::<Value>().await.unwrap(), first);

    let (other, _) = place(&app, "acme").await;
    // The processor holds the refund 5 s (a barrier nobody else reaches); the client waits 300 ms.
    *processor.together.lock().unwrap() = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let impatient = reqwest::Client::builder().timeout(std::time::Duration::from_millis(300)).build().unwrap();
    let gave_up = impatient
        .post(format!("{}/admin/api/orders/{other}/refund", app.base_url))
        .bearer_auth(crate::order_ops::KEY)
        .json(&json!({ "amount": 100 }))
        .send()
        .await;
    assert!(gave_up.is_err(), "the client gave up first");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    let recorded = loop {
        let order = get_order(&app, &other).await;
        if order["adjustments"].as_array().is_some_and(|adjustments| !adjustments.is_empty())
            || tokio::time::Instant::now() > deadline
        {
            break order;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(recorded["adjustments"][0]["totals"][0]["amount"], -100, "{recorded}");
}
