//! The order body (`shopping/order.json`): the stored order under the `ucp` envelope.

use serde::Serialize;
use ucp_domain::order::Order;

#[derive(Debug, Serialize)]
pub struct OrderBody<'a, U: Serialize> {
    pub ucp: U,
    #[serde(flatten)]
    pub order: &'a Order,
}
