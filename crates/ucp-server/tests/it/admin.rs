//! The admin credential (issue 9): the merchant's own key, separate from every platform's.

use reqwest::StatusCode;

use crate::helpers::spawn_app_with;

const KEY: &str = "admin-secret-for-tests";

#[tokio::test]
async fn the_admin_api_takes_only_the_admin_key() {
    let app = spawn_app_with(Vec::new(), |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
    })
    .await;
    let url = format!("{}/admin/api/status", app.base_url);

    let response = app.http.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"ucpd-admin\"");

    crate::helpers::capture_logs();
    let response = app.http.get(&url).bearer_auth("not-the-key").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["cache-control"], "no-store");
    // Guessing shows in the log, with where it came from (never the key sent).
    let logs = crate::helpers::captured_logs();
    let refused = logs.lines().find(|line| line.contains("admin key refused")).unwrap_or_else(|| panic!("{logs}"));
    assert!(refused.contains("client=127.0.0.1") && !refused.contains("not-the-key"), "{refused}");

    let response = app.http.get(&url).bearer_auth(KEY).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store", "an admin answer is never cached");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
}

#[tokio::test]
async fn without_admin_keys_the_admin_api_does_not_exist() {
    // The test settings are a demo start, which would generate a key: turn the demo off.
    let app = spawn_app_with(Vec::new(), |settings, _| settings.demo = false).await;
    let response = app.http.get(format!("{}/admin/api/status", app.base_url)).bearer_auth(KEY).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_demo_start_writes_its_admin_key_into_the_data_directory() {
    let app = spawn_app_with(Vec::new(), |settings, _| {
        settings.demo = true;
        settings.demo_products = 5;
    })
    .await;
    let key = std::fs::read_to_string(app.data_dir.path().join("admin-key")).expect("demo admin key");
    let response =
        app.http.get(format!("{}/admin/api/status", app.base_url)).bearer_auth(key.trim()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}
