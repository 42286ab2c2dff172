//! Status rules (checkout.md §2; checklist 121, 122, 124, 130).

use super::*;

// Checklist 121, 130: with everything present the checkout may be completed.
#[test]
fn complete_checkout_is_ready() {
    let priced = Fixture::ready().run();
    assert_eq!(priced.status, Status::ReadyForComplete);
    assert!(priced.messages.is_empty(), "{:?}", priced.messages);
    assert_eq!(kinds(&priced.totals), ["subtotal", "fulfillment", "total"]);
    let fulfillment = priced.fulfillment.unwrap();
    assert_eq!(fulfillment.selected_destination_id.as_deref(), Some("dest_1"));
    assert_eq!(fulfillment.line_item_ids, ["li_1"]);
    assert_eq!(fulfillment.group.unwrap().selected_option_id.as_deref(), Some("std"));
}

// Checklist 124, 130: a missing email keeps the checkout incomplete.
#[test]
fn missing_email_is_required() {
    let mut fixture = Fixture::ready();
    fixture.session.buyer = Some(Buyer { first_name: Some("Ada".into()), ..Buyer::default() });
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "field_required");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.buyer.email"));

    // No buyer object at all: the path names the root, where `buyer` is missing.
    fixture.session.buyer = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "field_required")), "$");

    // Not required by the merchant: ready.
    fixture.rules.require_email = false;
    assert_eq!(fixture.run().status, Status::ReadyForComplete);

    // An invalid email is always reported.
    fixture.session.buyer = Some(Buyer { email: Some("ada@example".into()), ..Buyer::default() });
    let priced = fixture.run();
    assert_eq!((priced.status, path(only(&priced, "invalid_email"))), (Status::Incomplete, "$.buyer.email"));
}

#[test]
fn invalid_phone_keeps_the_checkout_incomplete() {
    let mut fixture = Fixture::ready();
    fixture.session.buyer.as_mut().unwrap().phone_number = Some("415 555 0123".into());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "invalid_phone");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.buyer.phone_number"));

    fixture.session.buyer.as_mut().unwrap().phone_number = Some("+14155550123".into());
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

#[test]
fn missing_destination_is_required() {
    let mut fixture = Fixture::ready();
    fixture.session.fulfillment = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "field_required");
    assert_eq!(path(message), "$.fulfillment.methods[0].destinations");
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // Two destinations and none selected: the selection is required.
    fixture.session.fulfillment = Some(FulfillmentChoice {
        destinations: vec![address("US", None), address("US", Some("NY"))],
        selected_destination_id: None,
        selected_option_id: Some("std".into()),
        ..Default::default()
    });
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].selected_destination_id");
    fixture.session.fulfillment.as_mut().unwrap().selected_destination_id = Some("dest_2".into());
    assert_eq!(fixture.run().status, Status::ReadyForComplete);

    // An incomplete address names the missing field.
    fixture.ship_to(Address { postal_code: Some("  ".into()), ..address("US", None) }, Some("std"));
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].destinations[0].postal_code");
}

// Checklist 124, 128: an undeliverable address is recoverable and points at the destination.
#[test]
fn undeliverable_country_is_reported_at_the_destination() {
    let mut fixture = Fixture::ready();
    fixture.ship_to(address("JP", None), Some("std"));
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "address_undeliverable");
    assert_eq!(
        (message.kind, message.severity, path(message)),
        (MessageKind::Error, Some(Severity::Recoverable), "$.fulfillment.methods[0].destinations[0]")
    );
    assert!(priced.fulfillment.unwrap().group.is_none());
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // A zone limited to regions excludes the others of its country.
    fixture.rules.shipping.zones[0].regions = vec!["NY".into()];
    fixture.ship_to(address("us", Some("ca")), Some("std"));
    assert_eq!(with_code(&fixture.run(), "address_undeliverable").len(), 1);
    fixture.ship_to(address("us", Some("ny")), Some("std"));
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

#[test]
fn shipping_option_must_be_selected() {
    let mut fixture = Fixture::ready();
    fixture.session.fulfillment.as_mut().unwrap().selected_option_id = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].groups[0].selected_option_id");
    let group = priced.fulfillment.unwrap().group.unwrap();
    assert_eq!(group.options.iter().map(|option| option.amount).collect::<Vec<_>>(), [500, 1_500]);
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // An option that is not offered is invalid input at the same path.
    fixture.session.fulfillment.as_mut().unwrap().selected_option_id = Some("overnight".into());
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "invalid_input")), "$.fulfillment.methods[0].groups[0].selected_option_id");
    assert_eq!(priced.status, Status::Incomplete);
}

// Checklist 122, 135: an open 3-D Secure challenge needs the buyer.
#[test]
fn pending_authentication_requires_escalation() {
    let mut fixture = Fixture::ready();
    fixture.session.pending_authentication = Some(unapproved_challenge());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    let message = only(&priced, "requires_3ds");
    assert_eq!((message.kind, message.severity), (MessageKind::Error, Some(Severity::RequiresBuyerInput)));

    // Escalation wins over recoverable problems.
    fixture.session.fulfillment = None;
    assert_eq!(fixture.run().status, Status::RequiresEscalation);

    // Once the buyer passed the challenge the checkout is ready again.
    fixture = Fixture::ready();
    fixture.session.pending_authentication = Some(PendingAuthentication { approved: true, ..unapproved_challenge() });
    let priced = fixture.run();
    assert_eq!(priced.status, Status::ReadyForComplete);
    assert!(with_code(&priced, "requires_3ds").is_empty());
}

fn unapproved_challenge() -> PendingAuthentication {
    PendingAuthentication {
        handler_id: "card".into(),
        instrument_type: "card".into(),
        reference: "pi_3ds".into(),
        ..Default::default()
    }
}

// Checklist 122: without the fulfillment extension, shipping is collected on our page.
#[test]
fn fulfillment_not_negotiated_requires_escalation() {
    let mut fixture = Fixture::ready();
    fixture.fulfillment_enabled = false;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    let message = only(&priced, "fulfillment_required");
    assert_eq!(message.severity, Some(Severity::RequiresBuyerInput));
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);

    // No payment handler: also escalated.
    fixture.fulfillment_enabled = true;
    fixture.payment_available = false;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    assert_eq!(only(&priced, "payment_unavailable").severity, Some(Severity::RequiresBuyerInput));
}

// Checklist 110, 128: stock problems are recoverable and point at the line or its quantity.
#[test]
fn stock_problems_point_at_the_line() {
    let mut fixture = Fixture::ready();
    fixture.line("v2", CatalogItem { available_quantity: Some(0), ..item("p2", 100) }, 1);
    fixture.line("v3", CatalogItem { available_quantity: Some(2), ..item("p3", 100) }, 3);
    fixture.line("v4", CatalogItem { available_quantity: Some(3), ..item("p4", 100) }, 3);
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let found: Vec<(Option<Severity>, &str)> =
        with_code(&priced, "out_of_stock").into_iter().map(|message| (message.severity, path(message))).collect();
    assert_eq!(
        found,
        [(Some(Severity::Recoverable), "$.line_items[1]"), (Some(Severity::Recoverable), "$.line_items[2].quantity")]
    );

    // Oversold stock (negative availability) is out of stock too, not "only -1 left".
    fixture.items.get_mut("v3").unwrap().available_quantity = Some(-1);
    let priced = fixture.run();
    let paths: Vec<&str> = with_code(&priced, "out_of_stock").into_iter().map(path).collect();
    assert_eq!(paths, ["$.line_items[1]", "$.line_items[2]"]);

    // An item missing from the catalog is unavailable and priced at zero.
    let mut fixture = Fixture::ready();
    fixture.line_without_item("gone", 2);
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "item_unavailable");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.line_items[1]"));
    assert_eq!(amount_of(&priced.lines[1].totals, "total"), Some(0));
    assert_eq!(amount_of(&priced.totals, "subtotal"), Some(5_000));
}

#[test]
fn empty_checkout_is_incomplete() {
    let mut fixture = Fixture::ready();
    fixture.session.lines.clear();
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "missing")), "$.line_items");
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);
}

// Checklist 132: terminal stored statuses are authoritative.
#[test]
fn terminal_statuses_are_kept() {
    for status in [Status::Completed, Status::Canceled, Status::CompleteInProgress] {
        let mut fixture = Fixture::ready();
        fixture.session.status = status;
        assert_eq!(fixture.run().status, status);
        // Even when the session would otherwise be incomplete or escalated.
        fixture.session.fulfillment = None;
        fixture.payment_available = false;
        assert_eq!(fixture.run().status, status);
    }
    // A stale stored non-final status is recomputed.
    let mut fixture = Fixture::ready();
    fixture.session.status = Status::RequiresEscalation;
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

// cart.md §3: a cart has no checkout requirements and no fulfillment.
#[test]
fn carts_have_no_checkout_requirements() {
    let mut fixture = Fixture::ready();
    fixture.session.kind = SessionKind::Cart;
    fixture.session.buyer = None;
    fixture.session.fulfillment = None;
    fixture.payment_available = false;
    fixture.fulfillment_enabled = false;
    fixture.session.pending_authentication = Some(unapproved_challenge());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert!(priced.messages.is_empty(), "{:?}", priced.messages);
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);

    // Stock problems are still reported on carts (checklist 110).
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(1);
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[0].quantity");

    // A canceled cart stays canceled.
    fixture.session.status = Status::Canceled;
    assert_eq!(fixture.run().status, Status::Canceled);
}

#[test]
fn sticky_messages_are_appended() {
    let mut fixture = Fixture::ready();
    let declined = Message::error("payment_failed", Severity::Recoverable, "Declined.", None);
    fixture.session.sticky_messages = vec![declined.clone()];
    let priced = fixture.run();
    assert_eq!(priced.messages.last(), Some(&declined));
}

// Checkout.md §2, §9: a code rejected in the answer to the platform's last write is a warning
// it saw with its price; one rejected since (it applied then) makes the checkout incomplete
// with `discount_code_rejected`, so nobody completes at a price the platform was not shown.
#[test]
fn a_code_that_lapsed_since_the_last_write_holds_the_checkout() {
    let mut fixture = Fixture::ready();
    fixture.codes(&["nope", "Gone"]);
    let written = fixture.run();
    assert_eq!(written.status, Status::ReadyForComplete, "{:?}", written.messages);
    assert_eq!(crate::checkout::rejected_codes(&fixture.session, &written.messages), ["NOPE", "GONE"]);
    fixture.session.rejections_seen = Some(vec!["NOPE".into(), "GONE".into()]);
    assert_eq!(fixture.run().status, Status::ReadyForComplete, "both were seen rejected");
    fixture.session.rejections_seen = Some(vec!["NOPE".into()]);
    let read = fixture.run();
    assert_eq!(read.status, Status::Incomplete);
    let lapsed: Vec<&Message> = read.messages.iter().filter(|m| m.code == "discount_code_rejected").collect();
    assert_eq!(lapsed.len(), 1, "{:?}", read.messages);
    assert_eq!((lapsed[0].kind, lapsed[0].path.as_deref()), (MessageKind::Error, Some("$.discounts.codes")));
    assert!(lapsed[0].content.starts_with("Gone") || lapsed[0].content.starts_with("GONE"), "{}", lapsed[0].content);
}

// Checklist 124: a method we do not offer (pickup) keeps the checkout from completing, rather
// than shipping what the buyer meant to collect.
#[test]
fn a_pickup_method_keeps_the_checkout_incomplete() {
    let mut fixture = Fixture::ready();
    fixture.session.fulfillment.as_mut().unwrap().unsupported = vec!["pickup".into()];
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "fulfillment_method_unsupported");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.fulfillment"));
    assert!(message.content.contains("pickup"), "{message:?}");
    // The shipping method is priced all the same, so the platform sees what shipping costs.
    assert!(amount_of(&priced.totals, "fulfillment").is_some());

    // A context asking for another currency: a note, the status unchanged.
    let mut fixture = Fixture::ready();
    fixture.session.context = Some(Context { currency: Some("EUR".into()), ..Context::default() });
    let priced = fixture.run();
    assert_eq!(priced.status, Status::ReadyForComplete);
    let note = only(&priced, "currency_unavailable");
    assert_eq!((note.kind, path(note)), (MessageKind::Info, "$.context.currency"));
    fixture.session.context = Some(Context { currency: Some("USD".into()), ..Context::default() });
    assert!(fixture.run().messages.is_empty(), "the store's own currency needs no note");
}
