//! EXTENSION POINT (issue 9 item 1): the order actions as forms on the order page.
//!
//! TODO(orders): once the merchant order operations land as `Commerce` methods
//! (`Commerce::ship_order`, `Commerce::deliver_order`, `Commerce::cancel_order`,
//! `Commerce::refund_order`, `Commerce::adjust_order` — names as the orders branch gives
//! them), return one [`ActionForm`] per action the order allows here, and add the POST
//! route `/admin/orders/{id}/{action}` in `super::router` whose handler calls that method
//! and redirects (303) back to the order page. The template (`console/order.html`, block
//! `actions`) already renders each form with the session's CSRF token, and the console's
//! guard already checks that token and the Origin on every post.

use ucp_domain::commerce::StoredOrderView;

/// One action form: a button posting to `path`, with extra fields (hidden or text).
pub(crate) struct ActionForm {
    pub label: String,
    pub path: String,
    pub fields: Vec<ActionField>,
}

pub(crate) struct ActionField {
    pub name: String,
    pub label: String,
    /// `hidden` or `text`.
    pub kind: &'static str,
    pub value: String,
}

/// The actions the order allows. None yet: see the module's TODO.
pub(crate) fn for_order(_order: &StoredOrderView) -> Vec<ActionForm> {
    Vec::new()
}
