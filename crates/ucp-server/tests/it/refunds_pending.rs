//! A merchant's refund is kept as pending before its processor is asked, and ends recorded on
//! the order, refused by the processor, or abandoned: made once and recorded once whatever
//! fails between the processor and the store. The server's clock decides when the recovery
//! sweeper (every second here) finds a refund old enough to settle.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::order_ops::{admin, app_with, get_order, place};
use crate::order_refunds::{Processor, acme, start_processor};
use crate::recovery::metric;

pub(crate) async fn shop(processor_url: &str) -> TestApp {
    app_with(|settings| {
        settings.payments.http = vec![acme(processor_url)];
        settings.payments.recovery_after_secs = 60;
        settings.checkout.sweep_interval_secs = 1;
        settings.metrics.public = true;
    })
    .await
}

/// The order's adjustments (as the platform sees them) once `done` holds, or after 15 s.
async fn adjustments_once(app: &TestApp, id: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let order = get_order(app, id).await;
        let adjustments = order["adjustments"].as_array().cloned().unwrap_or_default();
        if done(&adjustments) || tokio::time::Instant::now() > deadline {
            return adjustments;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) fn keys(processor: &Processor) -> Vec<String> {
    processor.refunds.lock().unwrap().iter().map(|(key, _)| key.clone()).collect()
}

// The processor makes the refund but its answer is lost (500): the merchant is told the refund
// is pending, and the order says nothing yet. Another change moves the order on (a credit);
// then the merchant repeats the refund. The repeat is the same refund, under the same key, so
// the processor refunds once, and the order records it once. Before the refund was kept, the
// repeat at the new order version drew a new key, and the buyer got the money twice.
#[tokio::test]
async fn a_refund_whose_answer_was_lost_is_the_same_refund_when_repeated_after_the_order_changed() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    let body = json!({ "amount": 500, "reason": "Scratched" });

    *processor.lost.lock().unwrap() = true;
    let (status, answer) = admin(&app, &refund, Some(body.clone())).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("refund_pending")),
        "{answer}"
    );
    assert!(answer["message"].as_str().unwrap().contains("repeating the request is safe"), "{answer}");
    assert_eq!(get_order(&app, &id).await["adjustments"], Value::Null, "not recorded yet");
    let made = keys(&processor);
    assert_eq!(made.len(), 1, "the processor made it");
    *processor.lost.lock().unwrap() = false;

    let credit = json!({ "type": "credit", "amount": -100, "description": "Goodwill" });
    let (status, _) = admin(&app, &format!("/orders/{id}/adjust"), Some(credit)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, details) = admin(&app, &refund, Some(body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["payment"]["refunded"], 500, "{details}");
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap();
    let refunds: Vec<&Value> = adjustments.iter().filter(|adjustment| adjustment["type"] == "refund").collect();
    assert_eq!(refunds.len(), 1, "{adjustments:?}");
    assert_eq!(refunds[0]["id"], made[0].as_str(), "recorded under the key the processor made it with");
    assert_eq!(refunds[0]["description"], "Scratched");
    assert_eq!(keys(&processor), vec![made[0].clone(), made[0].clone()], "asked again under the same key: one refund");
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0);

    // Once recorded, the same request again is a refund of its own.
    let (status, details) = admin(&app, &refund, Some(body)).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(1000)), "{details}");
    assert_ne!(keys(&processor)[2], made[0]);
}

// The processor is down when the merchant refunds: 503 `refund_pending`. Nobody repeats it.
// Once it is older than payments.recovery_after_secs the sweeper asks again (an operator sees
// it waiting meanwhile) and, the processor back, records it on the order under its key. The
// merchant's repeat after that is the same refund, once.
#[tokio::test]
async fn a_pending_refund_nobody_repeats_is_made_and_recorded_by_the_sweeper() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;

    *processor.down.lock().unwrap() = true;
    let (status, answer) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 400 }))).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("refund_pending")),
        "{answer}"
    );
    let first = processor.asked.lock().unwrap().clone();
    assert_eq!(first.len(), 1);
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0, "not overdue yet");

    app.clock.advance(61);
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 1.0);
    assert!(metric(&app, "ucpd_refunds_pending_oldest_seconds").await >= 61.0);
    // The sweeper keeps asking while the processor is down, always under the same key.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while processor.asked.lock().unwrap().len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(processor.asked.lock().unwrap().iter().all(|key| *key == first[0]), "one key");
    assert_eq!(get_order(&app, &id).await["adjustments"], Value::Null, "nothing recorded");

    *processor.down.lock().unwrap() = false;
    let adjustments = adjustments_once(&app, &id, |adjustments| !adjustments.is_empty()).await;
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!(adjustments[0]["id"], first[0].as_str());
    assert_eq!(adjustments[0]["totals"][0]["amount"], -400);
    assert_eq!(keys(&processor), vec![first[0].clone()], "made once");
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0);
    assert_eq!(metric(&app, "ucpd_refunds_pending_oldest_seconds").await, 0.0);

    // The merchant, told it was pending, repeats it after the sweeper recorded it: it is that
    // refund, not a new one. Asked again after that answer, it is a refund of its own.
    let refund = format!("/orders/{id}/refund");
    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 400 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(400)), "{details}");
    assert_eq!(keys(&processor), vec![first[0].clone()], "not asked again");
    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 400 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(800)), "{details}");
    assert_eq!(keys(&processor).len(), 2);
}

// A refund the processor refuses (400) is the merchant's 422 `refund_refused`, records nothing
// and is not kept: once it would be overdue nothing is pending and the sweeper never asks for
// it again. One pending past the sweeper's patience (12 h, inside the day processors keep a
// key) is abandoned, not asked for again; the merchant lists it and records it by hand.
#[tokio::test]
async fn a_refused_refund_is_not_kept_and_an_old_pending_one_is_abandoned() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");

    *processor.refusing.lock().unwrap() = true;
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": 300 }))).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_refused")),
        "{answer}"
    );
    assert!(answer["message"].as_str().unwrap().contains("refused the refund"), "{answer}");
    *processor.refusing.lock().unwrap() = false;
    app.clock.advance(61);
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0, "a refused refund is not kept");
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(processor.asked.lock().unwrap().len(), 1, "nor asked for again by the sweeper");

    *processor.down.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(json!({ "amount": 200 }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.down.lock().unwrap() = false;
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while metric(&app, "ucpd_refunds_pending").await != 0.0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0, "abandoned");
    assert_eq!(processor.asked.lock().unwrap().len(), 2, "not asked for again");
    assert!(keys(&processor).is_empty());
    assert_eq!(get_order(&app, &id).await["adjustments"], Value::Null, "nothing recorded");

    // The same request again at the same order version would carry the abandoned key: it is
    // not asked for (the processor may have forgotten the key by then), 409.
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": 200 }))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_abandoned")), "{answer}");
    assert_eq!(processor.asked.lock().unwrap().len(), 2);

    // The merchant reconciles: the abandoned refund is listed with its key; found made at the
    // processor, it is recorded on the order under that key without asking again, once.
    let asked = processor.asked.lock().unwrap().clone();
    let (status, listed) = admin(&app, "/refunds?state=abandoned", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let abandoned = &listed["refunds"][0];
    assert_eq!(listed["refunds"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!((abandoned["key"].as_str(), &abandoned["amount"]), (Some(asked[1].as_str()), &json!(200)));
    assert_eq!((&abandoned["order_id"], &abandoned["request"]), (&json!(id), &json!("refund")));
    let record = format!("/refunds/{}/record", asked[1]);
    for _ in 0..2 {
        let (status, details) = admin(&app, &record, Some(json!({}))).await;
        assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(200)), "{details}");
    }
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "recorded once: {adjustments:?}");
    assert_eq!(adjustments[0]["id"], asked[1].as_str());
    assert_eq!(processor.asked.lock().unwrap().len(), 2, "the processor is not asked");
    let (_, recorded) = admin(&app, "/refunds?state=recorded", None).await;
    assert_eq!(recorded["refunds"][0]["key"], asked[1].as_str(), "{recorded}");
    let (_, all) = admin(&app, "/refunds", None).await;
    assert_eq!(all["refunds"].as_array().map(Vec::len), Some(2), "the refused one too: {all}");

    // A refused refund was not made, an unknown key is no refund, a state must be one of six.
    let (status, answer) = admin(&app, &format!("/refunds/{}/record", asked[0]), Some(json!({}))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_not_abandoned")), "{answer}");
    let (status, answer) = admin(&app, "/refunds/adj_nope/record", Some(json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(answer["message"].as_str().unwrap().contains("No such refund"), "{answer}");
    let (status, _) = admin(&app, "/refunds?state=lost", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

// The merchant repeats a pending refund just as the sweeper settles it: both ask the processor
// under the one key at the same moment, and whichever records second finds it recorded. The
// repeat never turns into a fresh refund of the same request (a new key at the new version).
#[tokio::test]
async fn a_repeat_racing_the_sweeper_is_the_same_refund() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    let body = json!({ "amount": 350, "reason": "Late" });
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(body.clone())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    let made = keys(&processor);

    // The processor answers the next two asks together: the sweeper's and the repeat's.
    *processor.together.lock().unwrap() = Some(std::sync::Arc::new(tokio::sync::Barrier::new(2)));
    app.clock.advance(61);
    let (status, details) = admin(&app, &refund, Some(body)).await;
    *processor.together.lock().unwrap() = None;
    assert_eq!(status, StatusCode::OK, "{details}");
    let adjustments = adjustments_once(&app, &id, |_| true).await;
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!(adjustments[0]["id"], made[0].as_str());
    let keys = keys(&processor);
    assert!(keys.len() >= 2 && keys.iter().all(|key| *key == made[0]), "one key: {keys:?}");
}

// The console's refund form, pressed while the processor's answer is lost, says the refund is
// pending and that asking again is safe; pressed again (a request of its own, with no key), it
// settles the same refund: one key at the processor, one adjustment.
#[tokio::test]
async fn the_console_says_a_refund_is_pending_and_pressing_again_is_the_same_refund() {
    let (processor, url, _guard) = start_processor().await;
    let app = crate::helpers::spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(crate::console::KEY)];
        settings.payments.http = vec![acme(&url)];
    })
    .await;
    let (id, _) = place(&app, "acme").await;
    let cookie = crate::console::log_in(&app).await;
    let page = format!("/admin/orders/{id}");
    let (_, _, html) = crate::console::get(&app, &page, Some(&cookie)).await;
    let csrf = crate::console::csrf_of(&html);
    let fields = [("csrf", csrf.as_str()), ("amount", "250"), ("reason", "Dented")];
    let action = format!("{page}/refund");
    let press = || crate::console::post(&app, &action, Some(&cookie), Some(&app.base_url), &fields);

    *processor.lost.lock().unwrap() = true;
    let pending = press().await;
    assert_eq!(pending.status(), StatusCode::SERVICE_UNAVAILABLE);
    let text = pending.text().await.unwrap();
    assert!(text.contains("Refund pending") && text.contains("Asking for the same refund again is"), "{text}");
    *processor.lost.lock().unwrap() = false;

    assert_eq!(press().await.status(), StatusCode::SEE_OTHER);
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    let made = keys(&processor);
    assert_eq!(made.len(), 2);
    assert!(made.iter().all(|key| adjustments[0]["id"] == key.as_str()), "one key: {made:?}");
}

// A cancel whose refund the processor made while its answer was lost, abandoned after the
// sweeper's patience (the processor kept failing meanwhile), then recorded by hand: the order
// takes the cancel as asked, its lines too, under the refund's key, with no processor call.
#[tokio::test]
async fn an_abandoned_cancel_recorded_by_hand_cancels_its_lines_too() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &format!("/orders/{id}/cancel"), Some(json!({ "reason": "Out of stock" }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.down.lock().unwrap() = true;
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let abandoned = loop {
        let (_, listed) = admin(&app, "/refunds?state=abandoned", None).await;
        if listed["refunds"][0].is_object() || tokio::time::Instant::now() > deadline {
            break listed["refunds"][0].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(abandoned["request"], "cancel", "{abandoned}");
    let asked = processor.asked.lock().unwrap().len();

    let record = format!("/refunds/{}/record", abandoned["key"].as_str().unwrap());
    let (status, details) = admin(&app, &record, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "canceled", "the lines too: {details}");
    assert_eq!(details["payment"]["refunded"], abandoned["amount"], "{details}");
    let adjustments = details["order"]["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!((&adjustments[0]["id"], &adjustments[0]["type"]), (&abandoned["key"], &json!("cancellation")));
    assert_eq!(processor.asked.lock().unwrap().len(), asked, "the processor is not asked");
}

// The console's refunds page lists a refund abandoned after the sweeper's patience with a form
// that records it on its order, once the merchant found it made at the processor: 303 to the
// order, which shows it under its key; the processor is not asked again.
#[tokio::test]
async fn the_console_lists_an_abandoned_refund_and_records_it() {
    let (processor, url, _guard) = start_processor().await;
    let app = crate::helpers::spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(crate::console::KEY)];
        settings.payments.http = vec![acme(&url)];
        settings.payments.recovery_after_secs = 60;
        settings.checkout.sweep_interval_secs = 1;
    })
    .await;
    let (id, _) = place(&app, "acme").await;
    // A session and its CSRF token (the 12 hours below outlive a session: log in again then).
    let session = || async {
        let cookie = crate::console::log_in(&app).await;
        let (_, _, html) = crate::console::get(&app, &format!("/admin/orders/{id}"), Some(&cookie)).await;
        let csrf = crate::console::csrf_of(&html);
        (cookie, csrf)
    };
    let post = |path: String, cookie: String, fields: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let fields: Vec<(&str, &str)> = fields.iter().map(|(name, value)| (*name, value.as_str())).collect();
            crate::console::post(app, &path, Some(&cookie), Some(&app.base_url), &fields).await
        }
    };
    let (cookie, csrf) = session().await;
    *processor.lost.lock().unwrap() = true;
    let fields = vec![("csrf", csrf), ("amount", "250".to_owned())];
    let pending = post(format!("/admin/orders/{id}/refund"), cookie, fields).await;
    assert_eq!(pending.status(), StatusCode::SERVICE_UNAVAILABLE);
    *processor.down.lock().unwrap() = true;
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    let (cookie, csrf) = session().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let page = loop {
        let (status, _, page) = crate::console::get(&app, "/admin/refunds", Some(&cookie)).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        if page.contains("Record on the order") || tokio::time::Instant::now() > deadline {
            break page;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let key = keys(&processor)[0].clone();
    assert!(page.contains(&key) && page.contains("abandoned"), "{page}");
    let asked = processor.asked.lock().unwrap().len();

    let recorded = post(format!("/admin/refunds/{key}/record"), cookie.clone(), vec![("csrf", csrf)]).await;
    assert_eq!(recorded.status(), StatusCode::SEE_OTHER);
    assert_eq!(recorded.headers()[reqwest::header::LOCATION], format!("/admin/orders/{id}").as_str());
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!(adjustments[0]["id"], key.as_str());
    assert_eq!(processor.asked.lock().unwrap().len(), asked, "the processor is not asked");
    let forged = post(format!("/admin/refunds/{key}/record"), cookie, vec![]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN, "the CSRF token is required");
}

// A cancel worked out while another refund is pending gives back the rest (the pending one
// counts as given back). Its processor's answer lost, the merchant repeats it: the repeat is
// the same refund of the same rest, recorded under its key, not abandoned as "the order changed
// since" because it was worked out against the other pending refund.
#[tokio::test]
async fn a_cancel_made_beside_a_pending_refund_is_recorded_when_repeated() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, placed) = place(&app, "acme").await;
    let paid = crate::order_ops::total_of(&placed);

    *processor.down.lock().unwrap() = true;
    let (status, _) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 400 }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "pending");
    *processor.down.lock().unwrap() = false;

    let cancel = format!("/orders/{id}/cancel");
    *processor.lost.lock().unwrap() = true;
    let (status, answer) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("refund_pending")),
        "{answer}"
    );
    let made = processor.refunds.lock().unwrap().clone();
    assert_eq!(made.len(), 1, "the processor made the cancel's refund");
    assert_eq!(made[0].1["amount"], paid - 400, "the rest, beside the pending 400");
    *processor.lost.lock().unwrap() = false;

    let (status, details) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "canceled", "{details}");
    assert_eq!(details["payment"]["refunded"], paid - 400, "{details}");
    let keys: Vec<String> = processor.refunds.lock().unwrap().iter().map(|(key, _)| key.clone()).collect();
    assert_eq!(keys, vec![made[0].0.clone(), made[0].0.clone()], "asked again under its key: one refund");
}

// A refund whose answer was lost, the order moved on since (a credit), sent again twice at
// once (a client's retry and a double click): both find it pending before they wait for the
// order; the one that holds it first settles it under its key, and the other answers that
// record instead of refunding anew at the version the first left. One refund.
#[tokio::test]
async fn a_pending_refund_repeated_twice_at_once_is_made_once() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    let body = json!({ "amount": 500, "reason": "Late" });
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(body.clone())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    let credit = json!({ "type": "credit", "amount": -100, "status": "completed" });
    let (status, answer) = admin(&app, &format!("/orders/{id}/adjust"), Some(credit)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    *processor.delay.lock().unwrap() = Some(std::time::Duration::from_secs(3));
    let (first, second) =
        tokio::join!(admin(&app, &refund, Some(body.clone())), admin(&app, &refund, Some(body.clone())));
    for (status, details) in [&first, &second] {
        assert_eq!(*status, StatusCode::OK, "{details}");
        assert_eq!(details["payment"]["refunded"], 500, "{details}");
    }
    let made = keys(&processor);
    assert_eq!(made.len(), 2, "made once, asked once more under its key: {made:?}");
    assert_eq!(made[0], made[1]);
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap();
    let refunds: Vec<&Value> = adjustments.iter().filter(|adjustment| adjustment["type"] == "refund").collect();
    assert_eq!(refunds.len(), 1, "{adjustments:?}");
    assert_eq!(refunds[0]["id"], made[0].as_str());
}
