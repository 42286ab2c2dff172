//! The order body (`shopping/order.json`): the stored order under the `ucp` envelope.

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::order::Order;

#[derive(Debug, Serialize, JsonSchema)]
pub struct OrderBody<'a, U: Serialize> {
    pub ucp: U,
    #[serde(flatten)]
    #[schemars(schema_with = "super::shapes::order")]
    pub order: &'a Order,
}
