//! Status derivation (order.md §1, checklist 152) and the operations' quantity and money rules.

use super::changes::{ChangeError, LineQuantity, OrderAction, Pending, Stamp, Tracking, apply, in_transit};
use super::*;
use crate::tax::TaxRate;

fn quantity(total: i64, fulfilled: i64) -> OrderQuantity {
    OrderQuantity { original: total.max(1), total, fulfilled }
}

#[test]
fn line_status_is_derived_from_the_quantities() {
    assert_eq!(LineStatus::of(&quantity(0, 0)), LineStatus::Removed);
    assert_eq!(LineStatus::of(&quantity(3, 3)), LineStatus::Fulfilled);
    assert_eq!(LineStatus::of(&quantity(3, 1)), LineStatus::Partial);
    assert_eq!(LineStatus::of(&quantity(3, 0)), LineStatus::Processing);
    // Every combination: the rule's four cases and nothing else.
    for total in 0..5 {
        for fulfilled in 0..=total {
            let expected = match (total, fulfilled) {
                (0, _) => LineStatus::Removed,
                (t, f) if f == t => LineStatus::Fulfilled,
                (_, f) if f > 0 => LineStatus::Partial,
                _ => LineStatus::Processing,
            };
            assert_eq!(LineStatus::of(&quantity(total, fulfilled)), expected, "{total}/{fulfilled}");
        }
    }
}

fn line(id: &str, quantity: i64, price: i64) -> OrderLine {
    OrderLine {
        id: id.into(),
        item: OrderItem { id: format!("item-{id}"), title: id.into(), price, image_url: None },
        quantity: OrderQuantity { original: quantity, total: quantity, fulfilled: 0 },
        totals: vec![OrderTotal { kind: "total".into(), amount: price * quantity, display_text: None }],
        status: LineStatus::Processing,
    }
}

/// Two lines: 2 × 1000 and 1 × 500, paid 3000 (with shipping and tax).
fn order() -> Order {
    Order {
        id: "ord_1".into(),
        checkout_id: "chk_1".into(),
        permalink_url: "https://shop.example/orders/ord_1".into(),
        line_items: vec![line("li_1", 2, 1000), line("li_2", 1, 500)],
        fulfillment: OrderFulfillment::default(),
        currency: "USD".into(),
        totals: vec![OrderTotal { kind: "total".into(), amount: 3000, display_text: None }],
        attribution: None,
        adjustments: Vec::new(),
    }
}

fn run(order: &Order, action: OrderAction) -> Result<changes::Applied, ChangeError> {
    let mut counter = 0;
    let mut ids = |kind: &str| {
        counter += 1;
        format!("{kind}_{counter}")
    };
    apply(
        order,
        &action,
        Some(3000),
        &Pending::default(),
        &[],
        Stamp { occurred_at: "2026-01-01T00:00:00Z", ids: &mut ids },
    )
}

fn units(id: &str, quantity: i64) -> LineQuantity {
    LineQuantity { id: id.into(), quantity }
}

fn ship(lines: Vec<LineQuantity>) -> OrderAction {
    OrderAction::Ship {
        lines,
        tracking: Tracking {
            carrier: Some("UPS".into()),
            tracking_number: Some("1Z999".into()),
            tracking_url: Some("https://track.example/1Z999".into()),
        },
        description: None,
    }
}

#[test]
fn shipping_fulfills_units_and_derives_partial_then_fulfilled() {
    let partial = run(&order(), ship(vec![units("li_1", 1)])).unwrap();
    assert_eq!(partial.order.line_items[0].quantity.fulfilled, 1);
    assert_eq!(partial.order.line_items[0].status, LineStatus::Partial);
    assert_eq!(partial.order.line_items[1].status, LineStatus::Processing);
    assert_eq!(partial.order.status(), OrderStatus::Partial);
    assert_eq!(partial.order.fulfillment.events.len(), 1);
    assert_eq!(partial.order.fulfillment.events[0].tracking_number.as_deref(), Some("1Z999"));
    assert_eq!(partial.refund, None);

    let full = run(&partial.order, ship(vec![units("li_1", 1), units("li_2", 1)])).unwrap();
    assert!(full.order.line_items.iter().all(|line| line.status == LineStatus::Fulfilled));
    assert_eq!(full.order.status(), OrderStatus::Fulfilled);
    assert_eq!(in_transit(&full.order).get("li_1"), Some(&2));
}

#[test]
fn bad_shipments_are_refused_and_change_nothing() {
    let error = run(&order(), ship(vec![units("li_1", 3)])).unwrap_err();
    assert!(matches!(error, ChangeError::TooMany { requested: 3, available: 2, .. }), "{error}");
    // Split over two entries of the same line, still too many.
    assert!(run(&order(), ship(vec![units("li_1", 2), units("li_1", 1)])).is_err());
    assert_eq!(run(&order(), ship(vec![units("li_9", 1)])).unwrap_err(), ChangeError::UnknownLine("li_9".into()));
    assert!(run(&order(), ship(vec![units("li_1", 0)])).is_err());
    assert!(run(&order(), ship(Vec::new())).is_err());
    let untracked =
        OrderAction::Ship { lines: vec![units("li_1", 1)], tracking: Tracking::default(), description: None };
    assert!(run(&order(), untracked).is_err());
    let mut bad_url = ship(vec![units("li_1", 1)]);
    if let OrderAction::Ship { tracking, .. } = &mut bad_url {
        tracking.tracking_url = Some("javascript:alert(1)".into());
    }
    assert!(run(&order(), bad_url).is_err());
}

#[test]
fn delivery_needs_shipped_units() {
    let deliver = || OrderAction::Deliver { lines: None, description: None };
    assert!(run(&order(), deliver()).is_err(), "nothing shipped yet");
    let shipped = run(&order(), ship(vec![units("li_1", 2)])).unwrap().order;
    let over = OrderAction::Deliver { lines: Some(vec![units("li_2", 1)]), description: None };
    assert!(matches!(run(&shipped, over), Err(ChangeError::TooMany { .. })));
    let delivered = run(&shipped, deliver()).unwrap().order;
    let event = delivered.fulfillment.events.last().unwrap();
    assert_eq!(event.kind, changes::DELIVERED);
    assert_eq!(event.line_items, vec![ExpectedLine { id: "li_1".into(), quantity: 2 }]);
    assert_eq!(event.tracking_url.as_deref(), Some("https://track.example/1Z999"), "the shipment's tracking");
    assert!(run(&delivered, deliver()).is_err(), "delivered once");
}

#[test]
fn canceling_everything_refunds_the_payment_and_freezes_the_order() {
    let canceled = run(&order(), OrderAction::Cancel { lines: None, amount: None, description: None }).unwrap();
    assert_eq!(canceled.refund, Some(3000), "nothing shipped: everything paid goes back");
    assert!(canceled.order.line_items.iter().all(|line| line.status == LineStatus::Removed));
    assert!(canceled.order.line_items.iter().all(|line| line.quantity.original > 0), "original is kept");
    assert_eq!(canceled.order.status(), OrderStatus::Canceled);
    assert_eq!(canceled.order.refunded(), 3000);
    let adjustment = &canceled.order.adjustments[0];
    assert_eq!(adjustment.kind, changes::CANCELLATION);
    assert_eq!(adjustment.totals[0].amount, -3000);
    assert_eq!(adjustment.line_items[0].quantity, -2);
    for action in [
        ship(vec![units("li_1", 1)]),
        OrderAction::Cancel { lines: None, amount: None, description: None },
        OrderAction::Adjust {
            kind: "credit".into(),
            amount: -1,
            status: AdjustmentStatus::Completed,
            description: None,
        },
    ] {
        assert_eq!(run(&canceled.order, action).unwrap_err(), ChangeError::Canceled);
    }
    // A refund still goes through, within what is left: here nothing.
    let refund = |amount| OrderAction::Refund { amount, description: None };
    assert!(matches!(run(&canceled.order, refund(1)), Err(ChangeError::OverRefund { available: 0, .. })));

    // A cancel that named a smaller amount leaves the rest to refund.
    let partly = OrderAction::Cancel { lines: None, amount: Some(100), description: None };
    let canceled = run(&order(), partly).unwrap().order;
    assert_eq!((canceled.status(), canceled.refunded()), (OrderStatus::Canceled, 100));
    let rest = run(&canceled, refund(2900)).unwrap();
    assert_eq!((rest.refund, rest.order.refunded()), (Some(2900), 3000));
    assert!(matches!(run(&rest.order, refund(1)), Err(ChangeError::OverRefund { available: 0, .. })));
}

#[test]
fn canceling_part_refunds_the_units_share() {
    let shipped = run(&order(), ship(vec![units("li_1", 1)])).unwrap().order;
    let cancel = OrderAction::Cancel { lines: Some(vec![units("li_1", 1)]), amount: None, description: None };
    let applied = run(&shipped, cancel).unwrap();
    assert_eq!(applied.refund, Some(1000));
    assert_eq!(applied.order.line_items[0].quantity, OrderQuantity { original: 2, total: 1, fulfilled: 1 });
    assert_eq!(applied.order.line_items[0].status, LineStatus::Fulfilled);
    let shipped_unit = OrderAction::Cancel { lines: Some(vec![units("li_1", 2)]), amount: None, description: None };
    assert!(matches!(run(&shipped, shipped_unit), Err(ChangeError::TooMany { available: 1, .. })));
}

/// `order()` with shipping (500, less `shipping_discount`) and `tax` in its totals.
fn taxed_order(shipping_discount: i64, tax: i64) -> Order {
    let mut order = order();
    let total = 2500 + 500 - shipping_discount + tax;
    order.totals =
        [("subtotal", 2500), ("discount", -shipping_discount), ("fulfillment", 500), ("tax", tax), ("total", total)]
            .into_iter()
            .filter(|(_, amount)| *amount != 0)
            .map(|(kind, amount)| OrderTotal { kind: kind.into(), amount, display_text: None })
            .collect();
    order
}

#[test]
fn canceling_part_gives_back_the_units_tax_too() {
    let cancel_one = OrderAction::Cancel { lines: Some(vec![units("li_1", 1)]), amount: None, description: None };
    let refund = |order: &Order| {
        let shipped = run(order, ship(vec![units("li_1", 1)])).unwrap().order;
        run(&shipped, cancel_one.clone()).unwrap().refund
    };
    // 8 % on goods and shipping (240 on 3000): the unit's 1000 carried 80.
    assert_eq!(refund(&taxed_order(0, 240)), Some(1080));
    // Free shipping: 8 % of the goods alone (200 on 2500), still 80 on the unit.
    assert_eq!(refund(&taxed_order(500, 200)), Some(1080));
    // Shipping untaxed (200 on 2500 while shipping costs 500): spread over both, never more than
    // the unit carried (66 < 80); the merchant names an amount to give back more.
    assert_eq!(refund(&taxed_order(0, 200)), Some(1066));
    // Where the rate for the order's destination says shipping was untaxed and gives the tax
    // the order was charged (8 % of 2500), the goods carried all of it: 80 on the unit.
    let rates = |shipping_taxable| {
        vec![TaxRate { country: "US".into(), region: Some("CA".into()), parts_per_million: 80_000, shipping_taxable }]
    };
    let mut untaxed_shipping = taxed_order(0, 200);
    untaxed_shipping.fulfillment.expectations.push(Expectation {
        id: "exp_1".into(),
        line_items: Vec::new(),
        method_type: "shipping".into(),
        destination: Address {
            address_country: Some("us".into()),
            address_region: Some("ca".into()),
            ..Address::default()
        },
        description: None,
        fulfillable_on: "now".into(),
    });
    let with_rates = |order: &Order, rates: &[TaxRate]| {
        let shipped = run(order, ship(vec![units("li_1", 1)])).unwrap().order;
        let stamp = Stamp { occurred_at: "2026-01-01T00:00:00Z", ids: &mut |kind: &str| kind.to_owned() };
        apply(&shipped, &cancel_one, Some(3200), &Pending::default(), rates, stamp).unwrap().refund
    };
    assert_eq!(with_rates(&untaxed_shipping, &rates(false)), Some(1080));
    // Rates that no longer give the order's tax (shipping taxed now: 240, not 200): spread.
    assert_eq!(with_rates(&untaxed_shipping, &rates(true)), Some(1066));
    // Canceling every unit, one at a time after one shipped, gives back no more than was paid.
    let order = taxed_order(0, 240);
    let mut current = run(&order, ship(vec![units("li_2", 1)])).unwrap().order;
    let mut given = 0;
    for _ in 0..2 {
        let applied = run(&current, cancel_one.clone()).unwrap();
        given += applied.refund.unwrap_or(0);
        current = applied.order;
    }
    assert_eq!(given, 2160, "two units of 1000 with their 80 of tax each");
    assert!(given <= 3240);
}

#[test]
fn canceled_units_leave_the_promises() {
    let mut order = order();
    let expected = |lines: &[(&str, i64)]| Expectation {
        id: "exp_1".into(),
        line_items: lines.iter().map(|(id, quantity)| ExpectedLine { id: (*id).into(), quantity: *quantity }).collect(),
        method_type: "shipping".into(),
        destination: Address::default(),
        description: Some("Arrives in 2-3 business days".into()),
        fulfillable_on: "now".into(),
    };
    order.fulfillment.expectations = vec![expected(&[("li_1", 2), ("li_2", 1)])];
    let one = OrderAction::Cancel { lines: Some(vec![units("li_1", 1)]), amount: None, description: None };
    let applied = run(&order, one).unwrap().order;
    assert_eq!(applied.fulfillment.expectations, [expected(&[("li_1", 1), ("li_2", 1)])]);
    let line = OrderAction::Cancel { lines: Some(vec![units("li_2", 1)]), amount: None, description: None };
    let applied = run(&applied, line).unwrap().order;
    assert_eq!(applied.fulfillment.expectations, [expected(&[("li_1", 1)])]);
    let rest = run(&applied, OrderAction::Cancel { lines: None, amount: None, description: None }).unwrap().order;
    assert_eq!(rest.status(), OrderStatus::Canceled);
    assert!(rest.fulfillment.expectations.is_empty(), "a canceled order promises nothing");
}

#[test]
fn refunds_never_exceed_what_was_paid() {
    let first = run(&order(), OrderAction::Refund { amount: 1200, description: Some("Damaged box".into()) }).unwrap();
    assert_eq!(first.refund, Some(1200));
    assert_eq!(first.order.refunded(), 1200);
    let over = run(&first.order, OrderAction::Refund { amount: 1801, description: None }).unwrap_err();
    assert_eq!(over, ChangeError::OverRefund { requested: 1801, available: 1800, paid: 3000 });
    let rest = run(&first.order, OrderAction::Refund { amount: 1800, description: None }).unwrap();
    assert_eq!(rest.order.refunded(), 3000);
    assert!(run(&order(), OrderAction::Refund { amount: 0, description: None }).is_err());
    assert!(run(&order(), OrderAction::Refund { amount: -5, description: None }).is_err());
    // Refunds pending for other requests count as given back, for a refund and a cancel alike.
    let with_pending = |action: OrderAction| {
        apply(
            &first.order,
            &action,
            Some(3000),
            &Pending::amount(800),
            &[],
            Stamp { occurred_at: "2026-01-01T00:00:00Z", ids: &mut |kind: &str| kind.to_owned() },
        )
    };
    let over = with_pending(OrderAction::Refund { amount: 1001, description: None }).unwrap_err();
    assert_eq!(over, ChangeError::OverRefund { requested: 1001, available: 1000, paid: 3000 });
    assert!(with_pending(OrderAction::Refund { amount: 1000, description: None }).is_ok());
    let whole = with_pending(OrderAction::Cancel { lines: None, amount: None, description: None }).unwrap();
    assert_eq!(whole.refund, Some(1000), "what is left once the pending refunds are made");
}

#[test]
fn returns_take_fulfilled_units_off_the_line() {
    let shipped = run(&order(), ship(vec![units("li_2", 1)])).unwrap().order;
    let back = OrderAction::Return { lines: vec![units("li_2", 1)], tracking: Tracking::default(), description: None };
    let returned = run(&shipped, back.clone()).unwrap().order;
    assert_eq!(returned.line_items[1].quantity, OrderQuantity { original: 1, total: 0, fulfilled: 0 });
    assert_eq!(returned.line_items[1].status, LineStatus::Removed);
    assert_eq!(returned.adjustments[0].line_items[0].quantity, -1);
    assert!(run(&returned, back).is_err(), "returned once");
}

#[test]
fn adjustments_keep_their_sign_and_reserved_types_are_refused() {
    let adjust = |kind: &str, amount| OrderAction::Adjust {
        kind: kind.into(),
        amount,
        status: AdjustmentStatus::Completed,
        description: None,
    };
    let credit = run(&order(), adjust("credit", -250)).unwrap();
    assert_eq!(credit.order.adjustments[0].totals[0].amount, -250);
    assert_eq!(credit.refund, None, "no money moves through the processor");
    assert_eq!(credit.order.refunded(), 0);
    assert!(run(&order(), adjust("refund", -250)).is_err());
    assert!(run(&order(), adjust("Bad Type", 1)).is_err());
    // Amounts stay exact in JSON and safe to negate (a page shows a credit as money back).
    let most = crate::money::MAX_AMOUNT;
    assert!(run(&order(), adjust("credit", -most)).is_ok());
    for amount in [i64::MIN, -most - 1, most + 1, i64::MAX] {
        assert!(matches!(run(&order(), adjust("credit", amount)), Err(ChangeError::Invalid(_))), "{amount}");
    }
}

#[test]
fn descriptions_are_bounded_and_say_why_when_refused() {
    let refund = |description: &str| OrderAction::Refund { amount: 1, description: Some(description.into()) };
    let kept = run(&order(), refund("Damaged\tbox\nsecond line")).unwrap();
    assert_eq!(kept.order.adjustments[0].description.as_deref(), Some("Damaged\tbox\nsecond line"));
    let refused = |description: &str| match run(&order(), refund(description)).unwrap_err() {
        ChangeError::Invalid(message) => message,
        other => panic!("{other:?}"),
    };
    // A refund's text is its `reason` in the operations, and the refusal names it so.
    assert!(refused("bell\u{7}").starts_with("reason may not hold control characters"), "{}", refused("bell\u{7}"));
    assert!(refused(&"x".repeat(10_000)).starts_with("reason must be at most"));
    let fail = OrderAction::Adjust {
        kind: "credit".into(),
        amount: 1,
        status: AdjustmentStatus::Completed,
        description: Some("bell\u{7}".into()),
    };
    let ChangeError::Invalid(message) = run(&order(), fail).unwrap_err() else { panic!() };
    assert!(message.starts_with("description may not"), "{message}");
}

// The units a pending cancel takes (its refund asked of the processor, not recorded yet) are
// neither shipped nor canceled again, and count as gone when a cancel asks whether it takes
// the order's last units: otherwise a unit whose cancel's answer was lost could be refunded
// twice, or refunded and shipped, and the pending cancel then abandoned.
#[test]
fn units_a_pending_cancel_takes_are_neither_shipped_nor_canceled_again() {
    let apply_beside = |action: OrderAction, pending: &Pending| {
        let stamp = Stamp { occurred_at: "2026-01-01T00:00:00Z", ids: &mut |kind: &str| kind.to_owned() };
        apply(&order(), &action, Some(3000), pending, &[], stamp)
    };
    let cancel = |lines: Option<Vec<LineQuantity>>| OrderAction::Cancel { lines, amount: None, description: None };
    let mut one = Pending::default();
    one.add(&cancel(Some(vec![units("li_1", 1)])), 1000);

    let error = apply_beside(cancel(Some(vec![units("li_1", 2)])), &one).unwrap_err();
    assert!(matches!(error, ChangeError::TooMany { requested: 2, available: 1, .. }), "{error}");
    let error = apply_beside(ship(vec![units("li_1", 2)]), &one).unwrap_err();
    assert!(matches!(error, ChangeError::TooMany { requested: 2, available: 1, .. }), "{error}");
    assert!(apply_beside(ship(vec![units("li_1", 1)]), &one).is_ok(), "the other unit ships");

    // Of what is left, it cancels what the pending cancel does not take; with the pending
    // cancel's unit that is everything, so it gives back the rest: the pending refund's 1000 aside.
    let rest = apply_beside(cancel(None), &one).unwrap();
    assert_eq!(rest.order.line_items[0].quantity.total, 1, "the pending cancel's unit stays for it");
    assert_eq!(rest.refund, Some(2000));
    // A cancel of one line, leaving the other: its share only.
    let share = apply_beside(cancel(Some(vec![units("li_2", 1)])), &one).unwrap();
    assert_eq!(share.refund, Some(500));

    // A pending cancel of what is left takes every unit not shipped.
    let mut all = Pending::default();
    all.add(&cancel(None), 3000);
    assert!(apply_beside(cancel(None), &all).is_err());
    assert!(apply_beside(ship(vec![units("li_2", 1)]), &all).is_err());
    // Money alone takes no unit.
    assert!(apply_beside(ship(vec![units("li_1", 2)]), &Pending::amount(500)).is_ok());
}
