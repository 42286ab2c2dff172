//! Hardened defaults over a real start (issue 8 item 6): the data directory is the owner's
//! only, and so are the database, its WAL and the outbox messages.

use serde_json::json;

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::helpers::spawn_app;

#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_its_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let app = spawn_app().await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let completed = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");

    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let data = app.data_dir.path();
    assert_eq!(mode(data), 0o700, "the data directory");
    for name in ["ucpd.db", "ucpd.db-wal", "signing-key.pem", "cursor-secret"] {
        assert_eq!(mode(&data.join(name)), 0o600, "{name}");
    }
    let outbox = data.join("outbox");
    assert_eq!(mode(&outbox), 0o700, "the outbox");
    let messages: Vec<_> = std::fs::read_dir(&outbox).unwrap().map(|entry| entry.unwrap().path()).collect();
    assert!(!messages.is_empty(), "the confirmation was written");
    for message in messages {
        assert_eq!(mode(&message), 0o600, "{}", message.display());
    }
}
