//! Cart and checkout request bodies: the wire types live in `ucp_protocol::requests` (a
//! client needs them too, and `tools/list` derives its schemas from them).

pub(super) use ucp_protocol::requests::LineItemRequest;
pub use ucp_protocol::requests::{CartRequest, CheckoutRequest};
