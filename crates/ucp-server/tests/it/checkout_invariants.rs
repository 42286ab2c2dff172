//! Checkout invariants over MCP (checklist 120-148, continued from `checkout_edges.rs`):
//! expiry, determinism, message paths that resolve, integer money, stock checked across the
//! lines of one variant, and eligibility claims that never block.

use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, address, complete, ready_checkout};
use crate::checkout_edges::{assert_checkout, assert_not_found, create, get, update, update_of};
use crate::helpers::{
    ALL_CAPABILITIES, PlatformServer, assert_integer_money, assert_messages_resolve, messages_with, platform_profile,
    spawn_app, total_of,
};
use crate::schema;

// Checklist 126, 140: unknown and expired checkouts are not_found.
#[tokio::test]
async fn expired_checkout_is_not_found() {
    let app = spawn_app().await;
    assert_not_found(&app.tool("get_checkout", json!({ "id": "chk_nope" })).await);
    let created = create(&app, ready_checkout("mug-1", 1)).await;
    let id = created["id"].as_str().unwrap();
    let expires = time::OffsetDateTime::parse(
        created["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!((6 * 3600 - 60..=6 * 3600).contains(&(expires.unix_timestamp() - app.clock.now())), "6 h TTL");
    app.clock.advance(6 * 3600 + 1);
    assert_not_found(&app.tool("get_checkout", json!({ "id": id })).await);
    assert_not_found(
        &app.tool("update_checkout", json!({ "id": id, "checkout": update_of(&created, "mug-1", 1, json!({})) })).await,
    );
    assert_not_found(&complete(&app, id, TOKEN_SUCCESS).await);
    assert_not_found(&app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": id })).await);
}

// Checklist 124, 128: an item we do not sell stays a line of the checkout, reported
// `item_unavailable` (recoverable) at its path, and keeps the checkout incomplete until the
// platform removes it, on every read: an agent that trusts the status cannot complete an
// order without what the buyer asked for.
#[tokio::test]
async fn an_item_we_do_not_sell_keeps_the_checkout_incomplete_until_removed() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("mug-1", 1);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "nope" }, "quantity": 2 }));
    let created = create(&app, payload).await;
    let id = created["id"].as_str().unwrap();
    for body in [&created, &get(&app, id).await] {
        assert_eq!(body["status"], "incomplete", "{body}");
        assert_eq!(body["line_items"].as_array().unwrap().len(), 2, "{body}");
        assert_eq!(body["line_items"][1]["item"]["id"], "nope");
        let unavailable = messages_with(body, "item_unavailable");
        assert_eq!(unavailable.len(), 1, "{body}");
        assert_eq!(
            (&unavailable[0]["path"], &unavailable[0]["severity"]),
            (&json!("$.line_items[1]"), &json!("recoverable"))
        );
        assert_messages_resolve(body);
        assert_integer_money(body);
    }
    let refused = complete(&app, id, TOKEN_SUCCESS).await;
    assert_ne!(refused["status"], "completed", "{refused}");
    assert!(refused.get("order").is_none_or(Value::is_null), "no order: {refused}");
    // The platform removes the line: ready.
    let fixed = update(&app, id, update_of(&created, "mug-1", 1, json!({}))).await;
    assert_eq!(fixed["status"], "ready_for_complete", "{fixed}");
    assert!(messages_with(&fixed, "item_unavailable").is_empty(), "{fixed}");
}

// Checklist 141: two fresh checkouts with the same payload give identical totals and messages.
#[tokio::test]
async fn checkout_logic_is_deterministic() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("sweater-m", 2);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "shoe-green-10" }, "quantity": 1 }));
    payload["discounts"] = json!({ "codes": ["WELCOME10", "bogus"] });
    payload["buyer"]["phone_number"] = json!("nope");
    let first = create(&app, payload.clone()).await;
    let second = create(&app, payload).await;
    assert_ne!(first["id"], second["id"]);
    for field in ["status", "totals", "messages", "discounts", "line_items", "currency"] {
        assert_eq!(first[field], second[field], "{field} differs");
    }
    let first_again = get(&app, first["id"].as_str().unwrap()).await;
    assert_eq!(first_again["totals"], first["totals"]);
    assert_eq!(first_again["messages"], first["messages"]);
}

// Checklist 127, 148 across a whole walk, including messages of every kind.
#[tokio::test]
async fn every_response_has_resolvable_paths_and_integer_money() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("shoe-green-10", 9);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "mug-1" }, "quantity": 1 }));
    payload["discounts"] = json!({ "codes": ["nope", "WELCOME10", "welcome10"] });
    payload["buyer"]["email"] = json!("bad@");
    payload["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"] = json!("teleport");
    let body = create(&app, payload).await;
    let codes: Vec<&str> = body["messages"].as_array().unwrap().iter().map(|m| m["code"].as_str().unwrap()).collect();
    for expected in ["out_of_stock", "discount_code_invalid", "invalid_email", "invalid_input"] {
        assert!(codes.contains(&expected), "{expected} in {codes:?}");
    }
    let id = body["id"].as_str().unwrap();
    let mut fixed = ready_checkout("shoe-green-10", 1);
    fixed["line_items"][0]["id"] = body["line_items"][0]["id"].clone();
    fixed["fulfillment"]["methods"][0]["destinations"] = json!([address(), address()]);
    let body = update(&app, id, fixed).await;
    assert_eq!(messages_with(&body, "field_required")[0]["path"], "$.fulfillment.methods[0].selected_destination_id");
    let mut fixed = ready_checkout("shoe-green-10", 1);
    fixed["fulfillment"]["methods"][0]["selected_destination_id"] = json!("dest_1");
    let body = update(&app, id, fixed).await;
    assert_eq!(body["status"], "ready_for_complete", "{body}");
    let completed = complete(&app, id, TOKEN_SUCCESS).await;
    assert_checkout(&completed);
    assert_eq!(completed["status"], "completed");
    let order = app.tool("get_order", json!({ "id": completed["order"]["id"] })).await;
    assert_integer_money(&order);
}

#[test]
fn path_resolver_understands_the_message_paths() {
    use crate::helpers::resolve_path;
    let body =
        json!({ "line_items": [{ "quantity": 1 }], "signals": { "dev.ucp.buyer_ip": "x" }, "a": { "b": [0, [1, 2]] } });
    assert_eq!(resolve_path(&body, "$"), Some(&body));
    assert_eq!(resolve_path(&body, "$.line_items[0].quantity"), Some(&json!(1)));
    assert_eq!(resolve_path(&body, "$.signals['dev.ucp.buyer_ip']"), Some(&json!("x")));
    assert_eq!(resolve_path(&body, "$.a.b[1][0]"), Some(&json!(1)));
    for bad in ["$.line_items[1]", "$.missing", "line_items", "$.", "$.a.b[x]", "$.line_items[0]x"] {
        assert_eq!(resolve_path(&body, bad), None, "{bad}");
    }
}

// Checklist 128, 130: stock is checked over all lines of one variant (named by id or SKU), so a
// checkout is never ready_for_complete for more units than exist.
#[tokio::test]
async fn stock_is_checked_across_lines_of_the_same_variant() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("shoe-green-10", 2);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "SHOE-G-10" }, "quantity": 2 }));
    let body = create(&app, payload).await;
    assert_eq!(body["line_items"][1]["item"]["id"], "shoe-green-10", "the SKU resolves to the variant");
    assert_eq!(body["status"], "incomplete", "5 wanted, 3 in stock: {body}");
    let out = messages_with(&body, "out_of_stock");
    assert_eq!(out.len(), 1, "one message per problem: {body}");
    assert_eq!(out[0]["severity"], "recoverable");
    let completed = complete(&app, body["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert!(completed.get("order").is_none(), "{completed}");

    // Within stock across the lines: ready.
    let mut payload = ready_checkout("shoe-green-10", 2);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "SHOE-G-10" }, "quantity": 1 }));
    let body = create(&app, payload).await;
    assert_eq!(body["status"], "ready_for_complete", "{body}");
}

// Checklist 138: an eligibility claim this business does not recognize (it recognizes none)
// never blocks: each well-formed claim is echoed in `context` with an `eligibility_not_accepted`
// warning at its path, a value that is not a reverse-domain name or is sent twice is dropped,
// and the checkout still completes.
#[tokio::test]
async fn eligibility_claims_are_echoed_and_warned_about_but_never_block() {
    let app = spawn_app().await;
    let claims = json!(["com.example.loyalty_gold", "Not A Claim", "com.example.loyalty_gold", "org.school.student"]);
    let kept = json!(["com.example.loyalty_gold", "org.school.student"]);
    let mut payload = ready_checkout("mug-1", 1);
    payload["context"]["eligibility"] = claims.clone();
    let body = create(&app, payload).await;
    assert_eq!(body["status"], "ready_for_complete", "{body}");
    assert_eq!(body["context"]["eligibility"], kept, "{body}");
    let warnings = messages_with(&body, "eligibility_not_accepted");
    let paths: Vec<&str> = warnings.iter().map(|warning| warning["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["$.context.eligibility[0]", "$.context.eligibility[1]"], "{body}");
    assert!(warnings.iter().all(|warning| warning["type"] == "warning"), "{body}");
    let id = body["id"].as_str().unwrap();
    assert_eq!(get(&app, id).await["context"]["eligibility"], kept, "kept with the checkout");
    let completed = complete(&app, id, TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["order"]["id"].is_string(), "{completed}");

    // A cart carries them the same way.
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }], "context": { "eligibility": claims } } }),
        )
        .await;
    schema::assert_valid("shopping/cart.json", &cart);
    assert_messages_resolve(&cart);
    assert_eq!(cart["context"]["eligibility"], kept, "{cart}");
    assert_eq!(messages_with(&cart, "eligibility_not_accepted").len(), 2, "{cart}");

    // Past the limit, claims are ignored too: the first 16 are kept and warned about.
    let many: Vec<String> = (0..20).map(|index| format!("com.example.claim{index}")).collect();
    let mut payload = ready_checkout("mug-1", 1);
    payload["context"]["eligibility"] = json!(many);
    let body = create(&app, payload).await;
    assert_eq!(body["context"]["eligibility"], json!(many[..16]), "{body}");
    assert_eq!(messages_with(&body, "eligibility_not_accepted").len(), 16, "{body}");
    assert_eq!(body["status"], "ready_for_complete", "{body}");
}

// Checklist 143: one group per method, with or without the platform's `supports_multi_group`
// (ours never splits); option titles differ among siblings; the selected option's cost is the
// `fulfillment` total.
#[tokio::test]
async fn fulfillment_has_one_group_per_method_and_totals_the_selected_option() {
    let app = spawn_app().await;
    let mut profile = platform_profile(ALL_CAPABILITIES);
    profile["ucp"]["capabilities"]["dev.ucp.shopping.fulfillment"][0]["config"] =
        json!({ "supports_multi_group": true });
    let multi = PlatformServer::start(profile).await;
    for (platform, option, cost) in [(&app.platform, "standard", 599), (&multi, "express", 1999)] {
        let mut payload = ready_checkout("mug-1", 1);
        payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "sock-00-v" }, "quantity": 1 }));
        payload["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"] = json!(option);
        let meta = app.meta_for(&platform.profile_url());
        let body = app.tool("create_checkout", json!({ "meta": meta, "checkout": payload })).await;
        assert_checkout(&body);
        let method = &body["fulfillment"]["methods"][0];
        let groups = method["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "one group per method: {method}");
        assert_eq!(groups[0]["line_item_ids"], json!(["li_1", "li_2"]), "{method}");
        let options = groups[0]["options"].as_array().unwrap();
        let mut titles: Vec<&str> = options.iter().map(|option| option["title"].as_str().unwrap()).collect();
        titles.sort_unstable();
        titles.dedup();
        assert!(options.len() > 1 && titles.len() == options.len(), "titles distinguish siblings: {options:?}");
        let selected = options.iter().find(|candidate| candidate["id"] == option).unwrap();
        assert_eq!(groups[0]["selected_option_id"], option, "{method}");
        assert_eq!(total_of(&selected["totals"], "total"), Some(cost), "{selected}");
        assert_eq!(total_of(&body["totals"], "fulfillment"), Some(cost), "{body}");
    }
    assert_eq!(multi.fetch_count(), 1, "the flagged profile was the one negotiated");
}
