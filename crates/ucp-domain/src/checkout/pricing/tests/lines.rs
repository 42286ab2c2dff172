//! Line numbering (cart.md §3; checklist 111, 129).

use super::*;

fn request(id: Option<&str>, item_id: &str, quantity: i64) -> LineRequest {
    LineRequest { id: id.map(String::from), item_id: item_id.into(), quantity }
}

fn line_ids(session: &Session) -> Vec<&str> {
    session.lines.iter().map(|line| line.id.as_str()).collect()
}

#[test]
fn replace_lines_keeps_named_ids_and_never_reuses_numbers() {
    let mut session = Fixture::new(SessionKind::Checkout).session;
    session.replace_lines(vec![request(None, "v1", 1), request(None, "v2", 2)]);
    assert_eq!(line_ids(&session), ["li_1", "li_2"]);
    assert_eq!(session.next_line, 2);

    // Keep li_2 (with a new quantity), drop li_1, add one line.
    session.replace_lines(vec![request(Some("li_2"), "v2", 5), request(None, "v3", 1)]);
    assert_eq!(line_ids(&session), ["li_2", "li_3"]);
    assert_eq!(session.lines[0], Line { id: "li_2".into(), item_id: "v2".into(), quantity: 5 });

    // A removed id (li_1) or an id we never issued is not resurrected: the line is new.
    session.replace_lines(vec![
        request(Some("li_1"), "v1", 1),
        request(Some("li_3"), "v3", 2),
        request(Some("li_99"), "v4", 1),
    ]);
    assert_eq!(line_ids(&session), ["li_4", "li_3", "li_5"]);

    // Naming the same existing id twice keeps it once; the second line gets a fresh id.
    session.replace_lines(vec![request(Some("li_3"), "v3", 1), request(Some("li_3"), "v5", 1)]);
    assert_eq!(line_ids(&session), ["li_3", "li_6"]);

    // Clearing and re-adding continues the numbering.
    session.replace_lines(Vec::new());
    assert!(session.lines.is_empty());
    session.replace_lines(vec![request(None, "v1", 1)]);
    assert_eq!(line_ids(&session), ["li_7"]);
    assert_eq!(session.next_line, 7);
}

// Checklist 128: lines of the same variant share its stock; the line that overdraws it is named.
#[test]
fn stock_is_shared_by_lines_of_the_same_variant() {
    let mut fixture = Fixture::ready();
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(3);
    let mut second = fixture.session.lines[0].clone();
    second.id = "li_2".into();
    fixture.session.lines.push(second.clone());
    let priced = fixture.run();
    // 2 + 2 wanted, 3 left: the second line may have 1.
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[1].quantity");

    // A third line gets nothing: the message names the whole line.
    second.id = "li_3".into();
    fixture.session.lines.push(second);
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(4);
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[2]");
}
