//! The operation registry: every UCP operation declared once, with the capability it needs,
//! its payload member and its idempotency rule. The MCP `tools/list`, the MCP dispatcher (and
//! the REST router, when it comes) are all driven from this table, so an operation cannot
//! exist on one transport only.

/// The member of the MCP `arguments` (REST body) that carries the operation's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Catalog,
}

#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The UCP operation name, also the MCP tool name.
    pub name: &'static str,
    /// Short name of the capability the operation belongs to (`catalog.search`).
    pub capability: &'static str,
    pub payload: Payload,
    /// Whether `meta["idempotency-key"]` is required.
    pub requires_idempotency_key: bool,
    pub description: &'static str,
}

pub const OPERATIONS: &[Operation] = &[
    Operation {
        name: "search_catalog",
        capability: "catalog.search",
        payload: Payload::Catalog,
        requires_idempotency_key: false,
        description: "Search the merchant's catalog by free text and/or filters (categories, price in minor units). \
            Results are ranked by relevance and paginated with an opaque cursor (default 10 per page).",
    },
    Operation {
        name: "lookup_catalog",
        capability: "catalog.lookup",
        payload: Payload::Catalog,
        requires_idempotency_key: false,
        description: "Look up products by product id, variant id, SKU, barcode or handle. Each returned variant lists \
            the request ids that resolved to it in `inputs` (match `exact` or `featured`).",
    },
    Operation {
        name: "get_product",
        capability: "catalog.lookup",
        payload: Payload::Catalog,
        requires_idempotency_key: false,
        description: "Get one product by product or variant id, narrowed by option selections (`selected`, relaxed in \
            `preferences` order), with `available`/`exists` signals on every option value.",
    },
];

pub fn find(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|operation| operation.name == name)
}
