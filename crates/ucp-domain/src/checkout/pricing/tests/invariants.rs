//! The contract every priced session keeps, checked by the property test.

use super::*;

/// The contract of checkout.md §2, §6 and §9 on one priced session.
pub(super) fn check_invariants(fixture: &Fixture, priced: &Priced) {
    let session = &fixture.session;
    let totals = &priced.totals;

    // Checklist 120: exactly one subtotal and one total; the rest sums to the total.
    assert_eq!(totals.iter().filter(|total| total.kind == "subtotal").count(), 1, "{totals:?}");
    assert_eq!(totals.iter().filter(|total| total.kind == "total").count(), 1, "{totals:?}");
    let total = amount_of(totals, "total").unwrap();
    let sum: i64 = totals.iter().filter(|total| total.kind != "total").map(|total| total.amount).sum();
    assert_eq!(sum, total, "{totals:?}");
    assert!(total >= 0, "{totals:?}");
    // Checklist 120: discount types negative, subtotal/fulfillment/tax non-negative.
    for entry in totals {
        match entry.kind {
            "items_discount" | "discount" => assert!(entry.amount < 0, "{entry:?}"),
            "subtotal" | "fulfillment" | "tax" | "total" => assert!(entry.amount >= 0, "{entry:?}"),
            other => panic!("unexpected total type {other}"),
        }
    }

    // Lines: one priced line per stored line; subtotal + items_discount == total.
    assert_eq!(priced.lines.len(), session.lines.len());
    let mut line_discount_sum = 0;
    let mut subtotal_sum = 0;
    for (line, stored) in priced.lines.iter().zip(&session.lines) {
        assert_eq!(line.id, stored.id);
        assert_eq!(line.quantity, stored.quantity);
        let line_subtotal = amount_of(&line.totals, "subtotal").expect("line subtotal");
        let line_total = amount_of(&line.totals, "total").expect("line total");
        let line_discount = amount_of(&line.totals, "items_discount").unwrap_or(0);
        assert_eq!(line_subtotal, line.unit_price * line.quantity, "{line:?}");
        assert_eq!(line_subtotal + line_discount, line_total, "{line:?}");
        assert!(line_discount <= 0 && -line_discount <= line_subtotal, "discount exceeds line: {line:?}");
        assert!(line_total >= 0, "{line:?}");
        if amount_of(&line.totals, "items_discount").is_some() {
            assert!(line_discount < 0, "zero items_discount entry on {line:?}");
        }
        assert_eq!(line.totals.len(), 2 + usize::from(line_discount != 0), "{line:?}");
        line_discount_sum += line_discount;
        subtotal_sum += line_subtotal;
    }
    assert_eq!(amount_of(totals, "subtotal"), Some(subtotal_sum));
    // Checklist 144: top-level items_discount equals the sum over lines.
    assert_eq!(amount_of(totals, "items_discount").unwrap_or(0), line_discount_sum, "{priced:#?}");

    // Applied discounts: amounts >= 0, allocations sum to the amount and point at lines.
    let mut allocated_per_line = vec![0i64; priced.lines.len()];
    let mut item_level = 0;
    let mut order_level = 0;
    for (position, applied) in priced.applied_discounts.iter().enumerate() {
        assert!(applied.amount >= 0, "{applied:?}");
        assert!(applied.priority >= 1, "{applied:?}");
        assert_eq!(applied.automatic, applied.code.is_none(), "{applied:?}");
        assert!(
            priced.applied_discounts[..position].iter().all(|other| other.priority != applied.priority),
            "duplicate priority {applied:?}"
        );
        if applied.allocations.is_empty() {
            order_level += applied.amount;
        } else {
            assert_eq!(
                applied.allocations.iter().map(|(_, amount)| amount).sum::<i64>(),
                applied.amount,
                "{applied:?}"
            );
            item_level += applied.amount;
            for (allocation_path, amount) in &applied.allocations {
                assert!(*amount > 0, "{applied:?}");
                let index: usize = allocation_path
                    .strip_prefix("$.line_items[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .and_then(|index| index.parse().ok())
                    .unwrap_or_else(|| panic!("bad allocation path {allocation_path}"));
                assert!(index < priced.lines.len(), "{allocation_path}");
                allocated_per_line[index] += amount;
            }
        }
        if let Some(code) = &applied.code {
            assert!(
                session.discount_codes.iter().any(|submitted| submitted.trim().eq_ignore_ascii_case(code)),
                "applied {code} was not submitted"
            );
        }
    }
    for (index, line) in priced.lines.iter().enumerate() {
        assert_eq!(-amount_of(&line.totals, "items_discount").unwrap_or(0), allocated_per_line[index], "line {index}");
    }
    assert_eq!(item_level, -amount_of(totals, "items_discount").unwrap_or(0));
    assert_eq!(order_level, -amount_of(totals, "discount").unwrap_or(0));
    // Codes counted at completion are exactly the applied codes.
    let applied_codes: Vec<String> = priced
        .applied_discounts
        .iter()
        .filter_map(|applied| applied.code.as_ref().map(|code| code.to_uppercase()))
        .collect();
    assert_eq!(priced.used_codes, applied_codes);

    // Shipping: the fulfillment total is the selected option's price; free shipping never
    // discounts more than it costs.
    let selected_option =
        priced.fulfillment.as_ref().and_then(|fulfillment| fulfillment.group.as_ref()).and_then(|group| {
            group.selected_option_id.as_ref().and_then(|id| group.options.iter().find(|option| &option.id == id))
        });
    assert_eq!(amount_of(totals, "fulfillment"), selected_option.map(|option| option.amount));
    assert!(-amount_of(totals, "discount").unwrap_or(0) <= amount_of(totals, "fulfillment").unwrap_or(0));
    if session.kind == SessionKind::Cart || !fixture.fulfillment_enabled {
        assert!(priced.fulfillment.is_none());
    }

    // Messages: every path is a JSONPath; rejected codes point at a submitted code, once each.
    let mut rejected = vec![0; session.discount_codes.len()];
    for message in &priced.messages {
        if let Some(message_path) = &message.path {
            assert!(message_path.starts_with('$'), "{message:?}");
        }
        if message.kind == MessageKind::Error {
            assert!(message.severity.is_some(), "{message:?}");
        }
        if message.code.starts_with("discount_code_") {
            assert_eq!(message.kind, MessageKind::Warning, "{message:?}");
            let index: usize = path(message)
                .strip_prefix("$.discounts.codes[")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|index| index.parse().ok())
                .unwrap_or_else(|| panic!("bad rejection path {message:?}"));
            assert!(index < session.discount_codes.len(), "{message:?}");
            rejected[index] += 1;
        }
    }
    assert!(rejected.iter().all(|count| *count <= 1), "{:#?}", priced.messages);
    if !fixture.discounts_enabled {
        assert!(priced.applied_discounts.is_empty() && priced.discount_codes.is_empty());
        assert!(rejected.iter().all(|count| *count == 0));
    } else {
        assert_eq!(priced.discount_codes, session.discount_codes);
    }

    // Status (checklist 121, 122): derived from the error messages unless stored as final.
    let errors = errors(priced);
    let expected = if session.status.is_terminal() || session.status == Status::CompleteInProgress {
        session.status
    } else if session.kind == SessionKind::Cart {
        Status::Incomplete
    } else if errors
        .iter()
        .any(|message| matches!(message.severity, Some(Severity::RequiresBuyerInput | Severity::RequiresBuyerReview)))
    {
        Status::RequiresEscalation
    } else if !errors.is_empty() || session.lines.is_empty() {
        Status::Incomplete
    } else {
        Status::ReadyForComplete
    };
    assert_eq!(priced.status, expected, "{:#?}", priced.messages);
    if session.kind == SessionKind::Cart {
        // cart.md: carts have no checkout requirements (contact, payment, shipping).
        for message in &priced.messages {
            assert!(
                !["field_required", "invalid_email", "invalid_phone", "payment_unavailable", "requires_3ds"]
                    .contains(&message.code.as_str())
                    && message.code != "fulfillment_required",
                "{message:?}"
            );
        }
    }
}
