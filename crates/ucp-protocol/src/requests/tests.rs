use super::*;

fn cart(lines: Value) -> CartRequest {
    serde_json::from_value(serde_json::json!({ "line_items": lines })).unwrap()
}

#[test]
fn validation_names_the_offending_member() {
    let error =
        cart(serde_json::json!([{ "item": { "id": "v1" }, "quantity": 0 }])).validate("cart", None).unwrap_err();
    assert_eq!(error.0, "cart.line_items[0].quantity must be at least 1");
    let twice = serde_json::json!([
        { "id": "a", "item": { "id": "v1" }, "quantity": 1 },
        { "id": "a", "item": { "id": "v2" }, "quantity": 1 }
    ]);
    assert_eq!(cart(twice).validate("cart", None).unwrap_err().0, "cart.line_items[1].id \"a\" appears twice");
    let long = "x".repeat(MAX_LINE_ID_BYTES + 1);
    for line in [
        serde_json::json!([{ "item": { "id": long }, "quantity": 1 }]),
        serde_json::json!([{ "id": long, "item": { "id": "v1" }, "quantity": 1 }]),
    ] {
        let error = cart(line).validate("cart", None).unwrap_err();
        assert_eq!(error.0, "cart.line_items[0]: an id is longer than 256 bytes");
    }
    let fits = "x".repeat(MAX_LINE_ID_BYTES);
    cart(serde_json::json!([{ "id": fits, "item": { "id": fits }, "quantity": 1 }])).validate("cart", None).unwrap();
    let mut request = cart(serde_json::json!([]));
    request.id = Some("c1".into());
    assert_eq!(
        request.validate("cart", Some("c2")).unwrap_err().to_string(),
        "cart.id \"c1\" disagrees with the id argument \"c2\"; leave it out"
    );
}

#[test]
fn lists_are_bounded_while_they_deserialize() {
    let lines: Vec<Value> =
        (0..=MAX_LINES).map(|_| serde_json::json!({ "item": { "id": "v" }, "quantity": 1 })).collect();
    let error = serde_json::from_value::<CartRequest>(serde_json::json!({ "line_items": lines })).unwrap_err();
    assert!(error.to_string().contains("holds more than 100 items"), "{error}");
    let codes: Vec<String> = (0..=MAX_DISCOUNT_CODES).map(|n| n.to_string()).collect();
    let checkout = serde_json::json!({ "discounts": { "codes": codes } });
    assert!(serde_json::from_value::<CheckoutRequest>(checkout).is_err());
    let ok = serde_json::json!({ "line_items": null, "discounts": { "codes": ["A"] } });
    assert!(serde_json::from_value::<CheckoutRequest>(ok).unwrap().line_items.is_none());
    // Lookup ids past the wire limit are dropped unread, so the business's limit refuses them.
    let ids: Vec<String> = (0..5000).map(|n| n.to_string()).collect();
    let lookup: LookupRequest = serde_json::from_value(serde_json::json!({ "ids": ids })).unwrap();
    assert_eq!(lookup.ids.len(), MAX_LOOKUP_IDS_ON_WIRE + 1);
}

#[test]
fn free_form_objects_are_capped_by_serialized_size() {
    let payload = serde_json::json!({ "attribution": { "a": "x".repeat(2000) }, "context": { "b": 1 } });
    let payload = serde_json::value::to_raw_value(&payload).unwrap();
    assert_eq!(
        check_free_form_sizes(&payload, "cart", 1024).unwrap_err().0,
        "cart.attribution is larger than 1024 bytes serialized; send less"
    );
    assert!(check_free_form_sizes(&payload, "cart", 4096).is_ok());
    // The size is the compact serialization's, not the text's: whitespace does not count.
    let padded = format!(
        "{{\"signals\": {{ \"a\" : {}  1 }}, \"attribution\": [{}]}}",
        " ".repeat(3000),
        "\"y\",".repeat(250) + "1"
    );
    let padded = RawValue::from_string(padded).unwrap();
    assert!(check_free_form_sizes(&padded, "checkout", 1024).is_ok());
    assert_eq!(
        check_free_form_sizes(&padded, "checkout", 1000).unwrap_err().0,
        "checkout.attribution is larger than 1000 bytes serialized; send less"
    );
    // Not an object, or a member named twice: the request's own parse refuses it.
    for text in ["[1]", "5", r#"{"context":{},"context":{}}"#] {
        assert!(check_free_form_sizes(&RawValue::from_string(text.into()).unwrap(), "cart", 1).is_ok(), "{text}");
    }
}

#[test]
fn unknown_members_are_tolerated_and_credentials_are_redacted() {
    let request: CheckoutRequest = serde_json::from_value(serde_json::json!({
        "status": "incomplete", "totals": [], "context": { "eligibility": 5, "address_country": "US" },
        "payment": { "instruments": [{ "handler_id": "h", "type": "card", "credential": { "type": "token", "token": "tok_secret" } }] }
    }))
    .unwrap();
    assert!(!format!("{request:?}").contains("tok_secret"));
    let search: SearchRequest =
        serde_json::from_value(serde_json::json!({ "query": "shoes", "signals": {}, "context": { "intent": 3 } }))
            .unwrap();
    assert_eq!(search.query.as_deref(), Some("shoes"));
}
