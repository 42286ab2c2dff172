//! The MCP endpoint as real clients call it: checklist 29-54.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{spawn_app, spawn_app_with};

// Checklist 29, 30, 31, 32: a Google-shaped raw POST (no Accept, no initialize, no session).
#[tokio::test]
async fn google_shaped_tool_call_works_on_one_post() {
    let app = spawn_app().await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"b3b8c9d0-1234-4ef5-89ab-cdef01234567","method":"tools/call","params":{{"name":"search_catalog","arguments":{{"meta":{{"ucp-agent":{{"profile":"{}"}},"idempotency-key":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}},"catalog":{{"query":"running shoes"}}}}}}}}"#,
        app.platform.profile_url()
    );
    let (status, headers, response) = app
        .post_with(
            body,
            &[
                ("content-type", "application/json"),
                ("idempotency-key", "0b7e4d43-9f4e-4c4d-9c55-0e1d8ab7d1a1"),
                ("request-id", "r-1"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
    assert!(headers.get("mcp-session-id").is_none());
    assert_eq!(response["jsonrpc"], "2.0");
    assert_eq!(response["id"], "b3b8c9d0-1234-4ef5-89ab-cdef01234567");
    assert!(response.get("error").is_none());
    assert_eq!(response["result"]["structuredContent"]["products"][0]["id"], "shoe");
}

// Checklist 31: a tool's answer is sent in pieces (envelope, body, mirror) but as one JSON
// document of announced length, not chunked, whose mirror is the structured content's JSON.
#[tokio::test]
async fn a_tool_answer_is_one_document_of_announced_length() {
    let app = spawn_app().await;
    for (id, name, arguments) in [
        (json!(7), "search_catalog", json!({ "catalog": { "query": "shoes" } })),
        (json!("s\"q"), "get_product", json!({ "catalog": { "id": "shoe" } })),
        (json!(-3), "get_product", json!({ "catalog": { "id": "no-such-product" } })),
        (json!(u64::MAX), "get_product", json!({ "catalog": { "id": "shoe" } })),
        (json!(i64::MIN), "get_product", json!({ "catalog": { "id": "shoe" } })),
    ] {
        let mut arguments = arguments;
        arguments["meta"] = json!({ "ucp-agent": { "profile": app.platform.profile_url() } });
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let response = app.send_mcp(body.to_string()).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers().get("transfer-encoding").is_none(), "{name}: {:?}", response.headers());
        let length: usize = response.headers()["content-length"].to_str().unwrap().parse().unwrap();
        let bytes = response.bytes().await.unwrap();
        assert_eq!(bytes.len(), length, "{name}");
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], id);
        let result = &answer["result"];
        let mirror: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(mirror, result["structuredContent"], "{name}");
        assert_eq!(result.as_object().unwrap().len(), 2, "{result}");
    }
}

#[tokio::test]
async fn any_accept_header_gets_plain_json() {
    let app = spawn_app().await;
    for accept in ["*/*", "application/json", "application/json, text/event-stream", "text/event-stream"] {
        let (status, headers, response) = app
            .post_with(
                r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
                &[("content-type", "application/json"), ("accept", accept)],
            )
            .await;
        assert_eq!(status, 200, "{accept}");
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
        assert_eq!(response, json!({ "jsonrpc": "2.0", "id": 7, "result": {} }));
    }
}

// Checklist 52: initialize, ping, tools/list; no session id.
#[tokio::test]
async fn lifecycle_methods_answer_and_tools_list_is_self_contained() {
    let app = spawn_app().await;
    let (status, headers, response) = app
        .post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .await;
    assert_eq!(status, 200);
    assert!(headers.get("mcp-session-id").is_none());
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(response["result"]["capabilities"]["tools"]["listChanged"], false);
    let (status, _, response) = app.post_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(response, Value::Null);
    // A JSON-RPC response POSTed by a client is accepted as a notification is (MCP Streamable
    // HTTP: 202, no body), though this server sends no requests for it to answer.
    for answer in
        [r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, r#"{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"no"}}"#]
    {
        let (status, _, response) = app.post_raw(answer).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        assert_eq!(response, Value::Null, "{answer}");
    }

    let (_, _, response) = app.post_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let tools = response["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        vec![
            "search_catalog",
            "lookup_catalog",
            "get_product",
            "create_cart",
            "get_cart",
            "update_cart",
            "cancel_cart",
            "create_checkout",
            "get_checkout",
            "update_checkout",
            "complete_checkout",
            "cancel_checkout",
            "get_order"
        ],
        "checklist 51: every operation of every advertised capability"
    );
    for tool in tools {
        assert!(tool["description"].as_str().unwrap().len() > 20);
        for schema in ["inputSchema", "outputSchema"] {
            assert_eq!(tool[schema]["type"], "object", "{schema} of {}", tool["name"]);
            let text = tool[schema].to_string();
            assert!(!text.contains("\"$ref\":\"http"), "no remote $ref in {schema}");
            jsonschema::draft202012::new(&tool[schema]).expect("a valid 2020-12 schema");
        }
        assert_eq!(tool["inputSchema"]["required"][0], "meta");
    }
}

// Every tool's outputSchema admits both its success response and the UCP error response.
#[tokio::test]
async fn structured_content_validates_against_each_output_schema() {
    let app = spawn_app().await;
    let (_, _, response) = app.post_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let tools = response["result"]["tools"].as_array().unwrap().clone();
    let schema_of = |name: &str| {
        let tool = tools.iter().find(|tool| tool["name"] == name).unwrap();
        jsonschema::draft202012::new(&tool["outputSchema"]).unwrap()
    };
    let calls = [
        ("search_catalog", json!({ "catalog": { "query": "shoes" } })),
        ("lookup_catalog", json!({ "catalog": { "ids": ["shoe", "mug-1", "nope"] } })),
        ("get_product", json!({ "catalog": { "id": "shoe" } })),
        ("get_product", json!({ "catalog": { "id": "nope" } })),
    ];
    for (name, arguments) in calls {
        let body = app.tool(name, arguments).await;
        let validator = schema_of(name);
        let errors: Vec<String> = validator.iter_errors(&body).map(|error| error.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}\n{body}");
    }
}

// Checklist 36, 38, 39, 40, 41, 42: JSON-RPC errors and their HTTP statuses.
#[tokio::test]
async fn malformed_requests_get_json_rpc_errors_with_matching_statuses() {
    let app = spawn_app().await;
    let cases: &[(&str, u16, i64, Value)] = &[
        ("{", 400, -32700, Value::Null),
        ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", 400, -32600, Value::Null),
        ("42", 400, -32600, Value::Null),
        (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, 400, -32600, json!(3)),
        (r#"{"jsonrpc":"2.0","id":4}"#, 400, -32600, json!(4)),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, 400, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":5,"method":"resources/list"}"#, 200, -32601, json!(5)),
        (r#"{"jsonrpc":"2.0","id":6,"method":"server/discover"}"#, 200, -32601, json!(6)),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"delete_checkout","arguments":{}}}"#,
            200,
            -32602,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_catalog","arguments":{"catalog":{"query":"x"}}}}"#,
            200,
            -32602,
            json!(8),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_catalog","arguments":{"meta":{},"catalog":{"query":"x"}}}}"#,
            200,
            -32602,
            json!(9),
        ),
        (r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"nope"}"#, 200, -32602, json!(10)),
        // MCP: a request id is a string or an integer, never null; one we could not echo
        // unchanged (a fraction, an exponent, past 64 bits) is refused.
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, 400, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, 400, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, 400, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#, 400, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":11,"method":"ping"} x"#, 400, -32700, Value::Null),
        (r#"{"jsonrpc":"2.0","method":7,"id":12}"#, 400, -32600, json!(12)),
    ];
    for (body, status, code, id) in cases {
        let (got_status, _, response) = app.post_raw(body.to_string()).await;
        assert_eq!(got_status.as_u16(), *status, "{body}: {response}");
        assert_eq!(response["error"]["code"], *code, "{body}: {response}");
        assert_eq!(response["id"], *id, "{body}");
        assert!(response["error"]["message"].as_str().unwrap().len() > 5);
    }
    // A keyed call's arguments are read as values for its fingerprint: JSON a parser cannot
    // hold there (a number out of range, a lone surrogate) is the sender's error, not a 500.
    for odd in ["1e400", r#""\ud800""#] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"name":"create_cart","arguments":{{"meta":{},"cart":{{"line_items":[{{"item":{{"id":"mug-1"}},"quantity":1}}]}},"x":{odd}}}}}}}"#,
            app.keyed_meta()
        );
        let (status, _, response) = app.post_raw(body).await;
        assert_eq!(status.as_u16(), 200, "{odd}: {response}");
        assert_eq!(response["error"]["code"], -32602, "{odd}: {response}");
    }
    // Read as a JSON value reads them: a member sent twice counts as its last, members the
    // endpoint does not read are ignored, whitespace may lead.
    let (status, _, response) = app
        .post_raw(" \r\n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":[{}],\"method\":\"ping\",\"id\":\"13\"}".to_owned())
        .await;
    assert_eq!(status.as_u16(), 200, "{response}");
    assert_eq!(response["id"], "13", "{response}");
    assert_eq!(response["result"], json!({}), "{response}");
    for method in [reqwest::Method::GET, reqwest::Method::DELETE, reqwest::Method::PUT] {
        let response = app.http.request(method.clone(), &app.mcp_url).send().await.unwrap();
        assert_eq!(response.status(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "POST");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["jsonrpc"], "2.0");
    }
}

// Checklist 59 (for MCP), body limit, protocol version header.
#[tokio::test]
async fn content_type_body_size_and_protocol_version_are_checked() {
    let app = spawn_app().await;
    let ping = r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#;
    let (status, _, response) = app.post_with(ping, &[("content-type", "text/plain")]).await;
    assert_eq!(status, 415);
    assert_eq!(response["id"], 11, "errors before dispatch echo the id");
    let (status, _, _) = app.post_with(ping, &[("content-type", "application/json; charset=utf-8")]).await;
    assert_eq!(status, 200);
    let (status, _, response) =
        app.post_with(ping, &[("content-type", "application/json"), ("mcp-protocol-version", "1999-01-01")]).await;
    assert_eq!(status, 400);
    assert_eq!(response["id"], 11);
    let (status, _, _) =
        app.post_with(ping, &[("content-type", "application/json"), ("mcp-protocol-version", "2025-06-18")]).await;
    assert_eq!(status, 200);
    let huge =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(2 * 1024 * 1024));
    let (status, _, response) = app.post_raw(huge).await;
    assert_eq!(status, 413);
    assert_eq!(response["jsonrpc"], "2.0");
    assert_eq!(response["id"], 1, "the id is read from the first bytes of an oversized body");
}

// Checklist 50: public Host names accepted; foreign Origin refused, own origin allowed.
#[tokio::test]
async fn host_and_origin_rules() {
    let app = crate::helpers::spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.public_url = Some("https://shop.example".parse().unwrap());
        settings.http.allowed_hosts.push("api.shop.example".into());
    })
    .await;
    let ping = r#"{"jsonrpc":"2.0","id":12,"method":"ping"}"#;
    // A fully qualified name (one trailing dot) is the same host.
    for host in ["shop.example", "api.shop.example:443", "shop.example.", "SHOP.example.:443"] {
        let (status, _, _) = app.post_with(ping, &[("content-type", "application/json"), ("host", host)]).await;
        assert_eq!(status, 200, "{host}");
    }
    let (status, _, response) =
        app.post_with(ping, &[("content-type", "application/json"), ("host", "evil.example")]).await;
    assert_eq!(status, 403);
    assert_eq!(response["id"], 12);
    assert_eq!(response["error"]["code"], -32000);
    let (status, _, _) =
        app.post_with(ping, &[("content-type", "application/json"), ("origin", "https://evil.example")]).await;
    assert_eq!(status, 403);
    // Origins compare as RFC 6454 serializations: the scheme's default port and a trailing
    // dot name the same origin; another port or scheme does not.
    for (origin, expected) in [
        ("https://shop.example", 200),
        ("https://shop.example:443", 200),
        ("https://Shop.Example.", 200),
        ("https://shop.example:8443", 403),
        ("http://shop.example", 403),
        ("null", 403),
    ] {
        let (status, _, _) = app.post_with(ping, &[("content-type", "application/json"), ("origin", origin)]).await;
        assert_eq!(status, expected, "{origin}");
    }
}

// Checklist 46, 54: reads accept Idempotency-Key headers and meta keys; unknown fields are ignored.
#[tokio::test]
async fn reads_tolerate_idempotency_keys_and_unknown_fields() {
    let app = spawn_app().await;
    let arguments = json!({
        "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "extra": true },
        "catalog": { "query": "mug", "foo": 1, "context": { "eligibility": ["com.unknown.claim"], "language": "pt-BR" } },
        "unknown": "ignored"
    });
    let body = app.tool("search_catalog", arguments).await;
    assert_eq!(body["products"][0]["id"], "mug");
    // Any 1-255 printable ASCII characters are a key (not only UUIDs); longer ones are not.
    let meta = json!({ "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": "not-a-uuid" });
    app.tool("search_catalog", json!({ "meta": meta, "catalog": { "query": "mug" } })).await;
    let (_, error) = app
        .tool_error("search_catalog", json!({ "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": "k".repeat(256) }, "catalog": { "query": "mug" } }))
        .await;
    assert_eq!(error["code"], -32602);
}

// Checklist 48, 49: an overloaded server answers 503 with Retry-After and data.retry_after.
#[tokio::test]
async fn overload_is_a_503_with_retry_after_echoing_the_id() {
    let (app, holder) = crate::helpers::spawn_overloaded_app().await;
    let (status, headers, response) = app.post_raw(r#"{"jsonrpc":"2.0","id":"late","method":"ping"}"#).await;
    assert_eq!(status, 503, "{response}");
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(response["id"], "late");
    assert_eq!(response["error"]["code"], -32000);
    assert_eq!(response["error"]["data"]["retry_after"], 1);
    let held = holder.await.unwrap().unwrap();
    assert_eq!(held.status(), 424);
    let (status, _, _) = app.post_raw(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(status, 200, "the place is free again");
}

// A POST to the MCP path is dispatched past the router (`ucp_server::app`); everything else on
// and around the path still goes through it. Both answer in the MCP binding's shape, behind
// the same stack: request ids, Host rules, and the JSON-RPC id echoed by a refusal.
#[tokio::test]
async fn the_mcp_path_answers_alike_past_the_router_and_through_it() {
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.http.mcp_path = "/agents/mcp".into();
    })
    .await;
    let url = format!("{}/agents/mcp", app.base_url);
    let ping = r#"{"jsonrpc":"2.0","id":"p-1","method":"ping"}"#;
    // The direct path, with a query string too (routing ignores it).
    for target in [url.clone(), format!("{url}?via=query")] {
        let response = app
            .http
            .post(&target)
            .header("content-type", "application/json")
            .header("request-id", "direct-1")
            .body(ping)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{target}");
        assert_eq!(response.headers()["x-request-id"], "direct-1");
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body, json!({ "jsonrpc": "2.0", "id": "p-1", "result": {} }));
    }
    // The old default path is not the MCP endpoint any more: the REST 404.
    let response =
        app.http.post(&app.mcp_url).header("content-type", "application/json").body(ping).send().await.unwrap();
    assert_eq!(response.status(), 404);
    // Neither is the path with a trailing slash.
    let response =
        app.http.post(format!("{url}/")).header("content-type", "application/json").body(ping).send().await.unwrap();
    assert_eq!(response.status(), 404);
    // Other methods go through the router to the same endpoint: 405 in JSON-RPC shape, with
    // the request id; HEAD gets the headers without the body.
    let response = app.http.get(&url).header("request-id", "routed-1").send().await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    assert_eq!(response.headers()["x-request-id"], "routed-1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    let response = app.http.head(&url).send().await.unwrap();
    assert_eq!(response.status(), 405);
    assert!(response.bytes().await.unwrap().is_empty());
    // The direct path has the whole stack: a foreign Host is refused, echoing the id.
    let response = app
        .http
        .post(&url)
        .header("content-type", "application/json")
        .header("host", "evil.example")
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["id"], "p-1", "{body}");
    // And the binding's checks: a body that is not JSON is a JSON-RPC parse error.
    let response =
        app.http.post(&url).header("content-type", "application/json").body("{not json").send().await.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");
}

// Checklist 45: complete_checkout, cancel_checkout and cancel_cart without
// meta["idempotency-key"] are -32602 (HTTP 200), and nothing is completed or canceled.
#[tokio::test]
async fn complete_and_cancels_need_a_meta_idempotency_key() {
    let app = spawn_app().await;
    let checkout =
        app.tool("create_checkout", json!({ "checkout": crate::checkout::ready_checkout("mug-1", 1) })).await;
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let pay = crate::checkout::pay(crate::checkout::TOKEN_SUCCESS);
    for (tool, arguments) in [
        ("complete_checkout", json!({ "id": checkout["id"], "checkout": pay })),
        ("cancel_checkout", json!({ "id": checkout["id"], "checkout": {} })),
        ("cancel_checkout", json!({ "id": checkout["id"] })),
        ("cancel_cart", json!({ "id": cart["id"] })),
    ] {
        let (status, error) = app.tool_error(tool, arguments).await;
        assert_eq!((status.as_u16(), error["code"].as_i64()), (200, Some(-32602)), "{tool}: {error}");
        assert!(error["message"].as_str().unwrap().contains("idempotency-key"), "{tool}: {error}");
    }
    let stored = app.tool("get_checkout", json!({ "id": checkout["id"] })).await;
    assert_eq!(stored["status"], "ready_for_complete", "{stored}");
    assert!(stored.get("order").is_none());
    let stored = app.tool("get_cart", json!({ "id": cart["id"] })).await;
    assert_eq!(stored["ucp"]["status"], "success", "the cart is still there: {stored}");
}

// Checklist 52: `tools/list` names only the tools of the capabilities we advertise: with the
// cart capability off, no cart tool is listed (and the discovery profile has no cart either),
// while the checkout tools remain.
#[tokio::test]
async fn tools_list_leaves_out_the_tools_of_a_capability_turned_off() {
    let app = crate::helpers::spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.capabilities.enabled.retain(|name| name != "cart");
    })
    .await;
    let (_, _, response) = app.post_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let names: Vec<&str> =
        response["result"]["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    for cart_tool in ["create_cart", "get_cart", "update_cart", "cancel_cart"] {
        assert!(!names.contains(&cart_tool), "{cart_tool} listed: {names:?}");
    }
    assert!(names.contains(&"create_checkout") && names.contains(&"search_catalog"), "{names:?}");
    let profile: Value =
        app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap().json().await.unwrap();
    assert!(profile["ucp"]["capabilities"].get("dev.ucp.shopping.cart").is_none(), "{profile}");
}
