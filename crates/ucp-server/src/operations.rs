//! The operation registry: every UCP operation declared once, with the capability it needs,
//! its payload member and its idempotency rule. The MCP `tools/list`, the MCP dispatcher (and
//! the REST router, when it comes) are all driven from this table, so an operation cannot
//! exist on one transport only.

/// The member of the MCP `arguments` (REST body) that carries the operation's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Catalog,
    Cart,
    Checkout,
    /// Only the `id` argument (get, cancel).
    None,
}

#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The UCP operation name, also the MCP tool name.
    pub name: &'static str,
    /// Short name of the capability the operation belongs to (`catalog.search`).
    pub capability: &'static str,
    pub payload: Payload,
    /// Whether the `id` argument names the target resource.
    pub takes_id: bool,
    /// Whether `meta["idempotency-key"]` is required.
    pub requires_idempotency_key: bool,
    pub description: &'static str,
    /// The REST binding: method and path below the REST endpoint (`{id}` is the id argument).
    pub rest_method: RestMethod,
    pub rest_path: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestMethod {
    Get,
    Post,
    Put,
}

impl RestMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            RestMethod::Get => "GET",
            RestMethod::Post => "POST",
            RestMethod::Put => "PUT",
        }
    }
}

impl Operation {
    /// Whether a successful call creates a resource (REST answers 201).
    pub fn creates(&self) -> bool {
        matches!(self.name, "create_cart" | "create_checkout")
    }

    /// Whether the REST request must carry `Idempotency-Key` (the OpenAPI marks it required
    /// on every cart and checkout POST and PUT).
    pub fn rest_requires_idempotency_key(&self) -> bool {
        self.rest_method != RestMethod::Get && matches!(self.capability, "cart" | "checkout")
    }
}

pub const OPERATIONS: &[Operation] = &[
    Operation {
        name: "search_catalog",
        capability: "catalog.search",
        payload: Payload::Catalog,
        takes_id: false,
        requires_idempotency_key: false,
        rest_method: RestMethod::Post,
        rest_path: "/catalog/search",
        description: "Search the merchant's catalog by free text and/or filters (categories, price in minor units). \
            Results are ranked by relevance and paginated with an opaque cursor (default 10 per page).",
    },
    Operation {
        name: "lookup_catalog",
        capability: "catalog.lookup",
        payload: Payload::Catalog,
        takes_id: false,
        requires_idempotency_key: false,
        rest_method: RestMethod::Post,
        rest_path: "/catalog/lookup",
        description: "Look up products by product id, variant id, SKU, barcode or handle. Each returned variant lists \
            the request ids that resolved to it in `inputs` (match `exact` or `featured`).",
    },
    Operation {
        name: "get_product",
        capability: "catalog.lookup",
        payload: Payload::Catalog,
        takes_id: false,
        requires_idempotency_key: false,
        rest_method: RestMethod::Post,
        rest_path: "/catalog/product",
        description: "Get one product by product or variant id, narrowed by option selections (`selected`, relaxed in \
            `preferences` order), with `available`/`exists` signals on every option value.",
    },
    operation(
        "create_cart",
        RestMethod::Post,
        "/carts",
        "cart",
        Payload::Cart,
        false,
        false,
        "Create a cart from line items (variant ids, SKUs or product ids). Returns the priced cart with estimated totals and a continue_url; all items unavailable yields an error response.",
    ),
    operation(
        "get_cart",
        RestMethod::Get,
        "/carts/{id}",
        "cart",
        Payload::None,
        true,
        false,
        "Get a cart by id: its current lines, live prices and estimated totals.",
    ),
    operation(
        "update_cart",
        RestMethod::Put,
        "/carts/{id}",
        "cart",
        Payload::Cart,
        true,
        false,
        "Replace a cart's contents (full replacement: lines not sent are removed).",
    ),
    operation(
        "cancel_cart",
        RestMethod::Post,
        "/carts/{id}/cancel",
        "cart",
        Payload::None,
        true,
        true,
        "Cancel a cart; returns its last state. Needs meta[\"idempotency-key\"].",
    ),
    operation(
        "create_checkout",
        RestMethod::Post,
        "/checkout-sessions",
        "checkout",
        Payload::Checkout,
        false,
        false,
        "Start a checkout from line items or a cart_id. The response's status says what is missing (messages with paths) until it is ready_for_complete.",
    ),
    operation(
        "get_checkout",
        RestMethod::Get,
        "/checkout-sessions/{id}",
        "checkout",
        Payload::None,
        true,
        false,
        "Get a checkout by id: lines, totals, status and the messages saying what is still missing.",
    ),
    operation(
        "update_checkout",
        RestMethod::Put,
        "/checkout-sessions/{id}",
        "checkout",
        Payload::Checkout,
        true,
        false,
        "Replace a checkout's line items, buyer, fulfillment (address, shipping option) and discount codes (full replacement).",
    ),
    operation(
        "complete_checkout",
        RestMethod::Post,
        "/checkout-sessions/{id}/complete",
        "checkout",
        Payload::Checkout,
        true,
        true,
        "Place the order with checkout.payment.instruments (one instrument, a handler from ucp.payment_handlers). Needs meta[\"idempotency-key\"].",
    ),
    operation(
        "cancel_checkout",
        RestMethod::Post,
        "/checkout-sessions/{id}/cancel",
        "checkout",
        Payload::None,
        true,
        true,
        "Cancel a checkout that is not completed. Needs meta[\"idempotency-key\"].",
    ),
    operation(
        "get_order",
        RestMethod::Get,
        "/orders/{id}",
        "order",
        Payload::None,
        true,
        false,
        "Get an order placed through this platform: line items, fulfillment expectations and events, totals.",
    ),
];

// One row of the table above; a constructor keeps each row on a few lines.
#[allow(clippy::too_many_arguments)]
const fn operation(
    name: &'static str,
    rest_method: RestMethod,
    rest_path: &'static str,
    capability: &'static str,
    payload: Payload,
    takes_id: bool,
    requires_idempotency_key: bool,
    description: &'static str,
) -> Operation {
    Operation { name, capability, payload, takes_id, requires_idempotency_key, description, rest_method, rest_path }
}

pub fn find(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|operation| operation.name == name)
}
