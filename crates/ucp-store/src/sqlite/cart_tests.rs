//! `insert_checkout_of_cart` (checklist 116, cart.md §6): one open checkout per cart and
//! platform, and none once the cart is done, decided in the write that inserts.

use ucp_domain::checkout::{Session, SessionKind, Status};
use ucp_domain::store::{CartCheckout, CommerceStore};

use super::SqliteStore;

fn session(id: &str, kind: SessionKind, platform: &str, cart_id: Option<&str>) -> Session {
    let mut session = Session::new(id.into(), kind, "USD".into(), platform.into(), 100, 3_600);
    session.cart_id = cart_id.map(str::to_owned);
    session
}

// A cart's checkout is inserted once; another create answers the open one; another platform's
// cart is not this platform's to check out; a cart canceled, or one already bought (its
// checkout completed, as when a create races the order; the cart is then ended), gets none;
// one whose expired checkout is still being paid for waits, and is free once that is canceled.
#[tokio::test]
async fn a_cart_has_one_open_checkout_and_none_once_it_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("carts.db"), 1).unwrap();
    let now = 200;
    for cart in ["cart_a", "cart_b", "cart_c"] {
        store.insert_session(&session(cart, SessionKind::Cart, "p", None)).await.unwrap();
    }

    let first = session("chk_1", SessionKind::Checkout, "p", Some("cart_a"));
    assert_eq!(store.insert_checkout_of_cart(&first, now).await.unwrap(), CartCheckout::Inserted);
    let second = session("chk_2", SessionKind::Checkout, "p", Some("cart_a"));
    match store.insert_checkout_of_cart(&second, now).await.unwrap() {
        CartCheckout::Open(open) => assert_eq!(open.id, "chk_1"),
        other => panic!("expected the open checkout, got {other:?}"),
    }
    let stranger = session("chk_3", SessionKind::Checkout, "q", Some("cart_a"));
    assert_eq!(store.insert_checkout_of_cart(&stranger, now).await.unwrap(), CartCheckout::CartDone);
    let nowhere = session("chk_4", SessionKind::Checkout, "p", Some("cart_none"));
    assert_eq!(store.insert_checkout_of_cart(&nowhere, now).await.unwrap(), CartCheckout::CartDone);

    // The checkout completes; the cart is still open (its end is a write of its own).
    let mut completed = store.session("chk_1").await.unwrap().unwrap();
    completed.status = Status::Completed;
    store.update_session(&completed).await.unwrap();
    let again = session("chk_5", SessionKind::Checkout, "p", Some("cart_a"));
    assert_eq!(store.insert_checkout_of_cart(&again, now).await.unwrap(), CartCheckout::CartDone, "bought once");
    let healed = store.session("cart_a").await.unwrap().unwrap();
    assert_eq!(healed.status, Status::Canceled, "a bought cart left open is ended");

    let mut canceled = store.session("cart_b").await.unwrap().unwrap();
    canceled.status = Status::Canceled;
    store.update_session(&canceled).await.unwrap();
    let late = session("chk_6", SessionKind::Checkout, "p", Some("cart_b"));
    assert_eq!(store.insert_checkout_of_cart(&late, now).await.unwrap(), CartCheckout::CartDone);

    // A checkout past its expiry still being completed holds the cart (recovery may place its
    // order); once it is canceled, the cart is free for a new checkout.
    let mut paying = session("chk_7", SessionKind::Checkout, "p", Some("cart_c"));
    paying.status = Status::CompleteInProgress;
    store.insert_session(&paying).await.unwrap();
    let expired = paying.expires_at + 1;
    let meanwhile = session("chk_8", SessionKind::Checkout, "p", Some("cart_c"));
    assert_eq!(store.insert_checkout_of_cart(&meanwhile, expired).await.unwrap(), CartCheckout::Completing);
    let mut released = store.session("chk_7").await.unwrap().unwrap();
    released.status = Status::Canceled;
    store.update_session(&released).await.unwrap();
    assert_eq!(store.insert_checkout_of_cart(&meanwhile, expired).await.unwrap(), CartCheckout::Inserted);
    for refused in ["chk_2", "chk_3", "chk_4", "chk_5", "chk_6"] {
        assert!(store.session(refused).await.unwrap().is_none(), "{refused} was not stored");
    }
}
