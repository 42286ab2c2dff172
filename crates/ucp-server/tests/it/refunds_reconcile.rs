//! Reconciling refunds by hand beyond recording them: an abandoned refund the processor did
//! not make is dismissed (and the same request then asks again under its key), abandoned ones
//! are counted for an alert, and the list pages with a cursor, over the admin API and in the
//! console.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::TestApp;
use crate::order_ops::{admin, get_order, place};
use crate::order_refunds::{acme, start_processor};
use crate::recovery::metric;

async fn shop(processor_url: &str) -> TestApp {
    crate::helpers::spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        let keys = [crate::console::KEY, crate::order_ops::KEY];
        settings.admin.api_keys = keys.iter().map(|key| ucp_server::auth::hash_key_hex(key)).collect();
        settings.payments.http = vec![acme(processor_url)];
        settings.payments.recovery_after_secs = 60;
        settings.checkout.sweep_interval_secs = 1;
        settings.metrics.public = true;
    })
    .await
}

/// `metric` once it equals `value`, or after 15 s.
async fn metric_once(app: &TestApp, metric_name: &str, value: f64) -> f64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let now = metric(app, metric_name).await;
        if now == value || tokio::time::Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// A refund the processor never answered is abandoned after the sweeper's patience: counted by
// `ucpd_refunds_abandoned`, and the same request is refused (409) rather than asked again. The
// merchant finds at the processor that it was not made and dismisses it (in the console, then
// again over the API: the same answer). The same request made again is then asked for under
// the same key, made once, and recorded under that key. A dismissed refund can no longer be
// dismissed once recorded, nor can an unknown key.
#[tokio::test]
async fn an_abandoned_refund_not_made_is_dismissed_and_the_same_request_asks_again() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    assert_eq!(metric(&app, "ucpd_refunds_abandoned").await, 0.0);

    *processor.down.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(json!({ "amount": 200 }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    assert_eq!(metric_once(&app, "ucpd_refunds_abandoned", 1.0).await, 1.0, "abandoned and counted");
    assert_eq!(metric(&app, "ucpd_refunds_pending").await, 0.0);
    let key = processor.asked.lock().unwrap()[0].clone();
    *processor.down.lock().unwrap() = false;
    let (status, answer) = admin(&app, &refund, Some(json!({ "amount": 200 }))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_abandoned")), "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("dismiss"), "the way out is named: {answer}");

    // Dismissed in the console (the form beside "Record on the order"), then over the API.
    let cookie = crate::console::log_in(&app).await;
    let (status, _, page) = crate::console::get(&app, "/admin/refunds", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains(&format!("/admin/refunds/{key}/dismiss")), "{page}");
    let csrf = crate::console::csrf_of(&page);
    let path = format!("/admin/refunds/{key}/dismiss");
    let forged = crate::console::post(&app, &path, Some(&cookie), Some(&app.base_url), &[]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN, "the CSRF token is required");
    assert_eq!(metric(&app, "ucpd_refunds_abandoned").await, 1.0, "a forged post dismisses nothing");
    let dismissed =
        crate::console::post(&app, &path, Some(&cookie), Some(&app.base_url), &[("csrf", csrf.as_str())]).await;
    assert_eq!(dismissed.status(), StatusCode::SEE_OTHER);
    assert_eq!(dismissed.headers()[reqwest::header::LOCATION], "/admin/refunds");
    let (status, again) = admin(&app, &format!("/refunds/{key}/dismiss"), Some(json!({}))).await;
    assert_eq!((status, &again["state"], &again["key"]), (StatusCode::OK, &json!("dismissed"), &json!(key)), "{again}");
    assert!(again["ended_at"].is_string(), "{again}");
    assert_eq!(metric(&app, "ucpd_refunds_abandoned").await, 0.0, "nothing waits for the merchant");
    let (_, listed) = admin(&app, "/refunds?state=dismissed", None).await;
    assert_eq!(listed["refunds"][0]["key"], key.as_str(), "{listed}");

    // The same request again: asked under the same key, made once, recorded under it.
    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 200 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(200)), "{details}");
    let made: Vec<String> = processor.refunds.lock().unwrap().iter().map(|(key, _)| key.clone()).collect();
    assert_eq!(made, vec![key.clone()]);
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!(adjustments[0]["id"], key.as_str());
    let (_, recorded) = admin(&app, "/refunds?state=recorded", None).await;
    assert_eq!(recorded["refunds"][0]["key"], key.as_str(), "{recorded}");

    let (status, answer) = admin(&app, &format!("/refunds/{key}/dismiss"), Some(json!({}))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_not_abandoned")), "{answer}");
    let (status, answer) = admin(&app, "/refunds/adj_nope/dismiss", Some(json!({}))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")), "{answer}");
}

// 101 refunds: the admin list pages through all of them with `before` (each page's `next`),
// newest first, none twice, none left out, with no `next` after the last, also with a state;
// a malformed cursor is 400. The console shows the newest 100 and links to the one older.
#[tokio::test]
async fn the_refunds_list_pages_through_every_refund() {
    let (_processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    for _ in 0..101 {
        let (status, details) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 1 }))).await;
        assert_eq!(status, StatusCode::OK, "{details}");
    }
    let mut newest_first: Vec<String> = get_order(&app, &id).await["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|adjustment| adjustment["id"].as_str().unwrap().to_owned())
        .collect();
    newest_first.reverse();
    assert_eq!(newest_first.len(), 101);

    let mut listed = Vec::new();
    let mut path = "/refunds?limit=40".to_owned();
    let mut pages = 0;
    loop {
        let (status, page) = admin(&app, &path, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        pages += 1;
        listed.extend(
            page["refunds"].as_array().unwrap().iter().map(|refund| refund["key"].as_str().unwrap().to_owned()),
        );
        match page["next"].as_str() {
            Some(next) => path = format!("/refunds?limit=40&before={next}"),
            None => break,
        }
        assert!(pages < 10, "the cursor moves on");
    }
    assert_eq!(pages, 3);
    assert_eq!(listed.iter().collect::<HashSet<_>>().len(), 101, "none twice");
    assert_eq!(listed, newest_first);
    let (_, first) = admin(&app, "/refunds?state=recorded&limit=1", None).await;
    let after_first = first["next"].as_str().unwrap_or_else(|| panic!("a full page has a next: {first}"));
    let (_, recorded) = admin(&app, &format!("/refunds?state=recorded&limit=100&before={after_first}"), None).await;
    let keys: Vec<&str> = recorded["refunds"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys, newest_first[1..].iter().map(String::as_str).collect::<Vec<_>>(), "a state and a cursor");
    assert!(recorded["next"].is_string(), "a full page has a next, even the last: {recorded}");
    for bad in ["adj_nope", "12", "1.x", "+1.2", "1.-2", "01.2", "1.2.3", "99999999999999999999.1"] {
        let (status, answer) = admin(&app, &format!("/refunds?before={bad}"), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_input")), "{answer}");
    }

    let cookie = crate::console::log_in(&app).await;
    let (status, _, page) = crate::console::get(&app, "/admin/refunds", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains(&newest_first[99]) && !page.contains(&format!(">{}<", newest_first[100])), "{page}");
    let link = page.split("<a href=\"/admin/refunds?before=").nth(1).unwrap_or_else(|| panic!("an older link: {page}"));
    let older = format!("/admin/refunds?before={}", &link[..link.find('"').unwrap()]);
    let (status, _, page) = crate::console::get(&app, &older, Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains(&newest_first[100]) && !page.contains("Older refunds"), "{page}");
    let (status, _, _) = crate::console::get(&app, "/admin/refunds?before=adj_nope", Some(&cookie)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

// The processor made the refund but its answer was lost, and it kept failing until the refund
// was abandoned; the merchant dismisses it by mistake. The same request made again asks under
// the same key (a processor still holding the key answers the refund it made rather than
// making another), and the order records it once under that key. Dismissals racing each other
// are all answered dismissed; a recorded refund is not dismissed.
#[tokio::test]
async fn a_refund_dismissed_by_mistake_is_asked_for_under_its_own_key() {
    let (processor, url, _guard) = start_processor().await;
    let app = shop(&url).await;
    let (id, _) = place(&app, "acme").await;
    let refund = format!("/orders/{id}/refund");
    *processor.lost.lock().unwrap() = true;
    let (status, _) = admin(&app, &refund, Some(json!({ "amount": 300 }))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    *processor.lost.lock().unwrap() = false;
    *processor.down.lock().unwrap() = true;
    app.clock.advance(ucp_domain::commerce::REFUND_PATIENCE_SECS + 61);
    assert_eq!(metric_once(&app, "ucpd_refunds_abandoned", 1.0).await, 1.0);
    *processor.down.lock().unwrap() = false;
    let key = processor.refunds.lock().unwrap()[0].0.clone();
    // Pressed eight times at once (a double click, twice over): every press is answered dismissed.
    let path = format!("/refunds/{key}/dismiss");
    let presses = (0..8).map(|_| admin(&app, &path, Some(json!({}))));
    for (status, dismissed) in futures_util::future::join_all(presses).await {
        assert_eq!((status, &dismissed["state"]), (StatusCode::OK, &json!("dismissed")), "{dismissed}");
    }

    let (status, details) = admin(&app, &refund, Some(json!({ "amount": 300 }))).await;
    assert_eq!((status, &details["payment"]["refunded"]), (StatusCode::OK, &json!(300)), "{details}");
    let made: Vec<String> = processor.refunds.lock().unwrap().iter().map(|(key, _)| key.clone()).collect();
    assert_eq!(made, vec![key.clone(), key.clone()], "asked twice under one key: the processor's one refund");
    let adjustments = get_order(&app, &id).await["adjustments"].as_array().cloned().unwrap_or_default();
    assert_eq!(adjustments.len(), 1, "{adjustments:?}");
    assert_eq!(adjustments[0]["id"], key.as_str());
    let (status, answer) = admin(&app, &format!("/refunds/{key}/dismiss"), Some(json!({}))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("refund_not_abandoned")), "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("is recorded"), "{answer}");
}
