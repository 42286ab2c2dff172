//! The operation registry: every UCP operation declared once, with the capability it needs,
//! its payload member, its id and idempotency rules and its REST binding. The MCP
//! `tools/list`, the dispatcher, the REST router and the OpenAPI document are all driven from
//! it, so an operation cannot exist on one transport only; and every property is an
//! exhaustive `match`, so a new operation does not compile until each one is declared.

use crate::capability::Capability;

/// A UCP operation (also the MCP tool of the same name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    SearchCatalog,
    LookupCatalog,
    GetProduct,
    CreateCart,
    GetCart,
    UpdateCart,
    CancelCart,
    CreateCheckout,
    GetCheckout,
    UpdateCheckout,
    CompleteCheckout,
    CancelCheckout,
    GetOrder,
}

/// The member of the MCP `arguments` (REST body) that carries the operation's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Catalog,
    Cart,
    Checkout,
    /// Only the `id` argument (get, cancel).
    None,
}

impl Payload {
    /// The member name: `catalog`, `cart`, `checkout`; `None` for id-only operations.
    pub const fn member(self) -> Option<&'static str> {
        match self {
            Payload::Catalog => Some("catalog"),
            Payload::Cart => Some("cart"),
            Payload::Checkout => Some("checkout"),
            Payload::None => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestMethod {
    Get,
    Post,
    Put,
}

impl RestMethod {
    pub const fn as_str(self) -> &'static str {
        match self {
            RestMethod::Get => "GET",
            RestMethod::Post => "POST",
            RestMethod::Put => "PUT",
        }
    }
}

impl Operation {
    /// Every operation, in the order `tools/list` and `ucpd routes` show them.
    pub const ALL: [Operation; 13] = [
        Operation::SearchCatalog,
        Operation::LookupCatalog,
        Operation::GetProduct,
        Operation::CreateCart,
        Operation::GetCart,
        Operation::UpdateCart,
        Operation::CancelCart,
        Operation::CreateCheckout,
        Operation::GetCheckout,
        Operation::UpdateCheckout,
        Operation::CompleteCheckout,
        Operation::CancelCheckout,
        Operation::GetOrder,
    ];

    /// The UCP operation name, also the MCP tool name.
    pub const fn name(self) -> &'static str {
        match self {
            Operation::SearchCatalog => "search_catalog",
            Operation::LookupCatalog => "lookup_catalog",
            Operation::GetProduct => "get_product",
            Operation::CreateCart => "create_cart",
            Operation::GetCart => "get_cart",
            Operation::UpdateCart => "update_cart",
            Operation::CancelCart => "cancel_cart",
            Operation::CreateCheckout => "create_checkout",
            Operation::GetCheckout => "get_checkout",
            Operation::UpdateCheckout => "update_checkout",
            Operation::CompleteCheckout => "complete_checkout",
            Operation::CancelCheckout => "cancel_checkout",
            Operation::GetOrder => "get_order",
        }
    }

    /// The operation called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|operation| operation.name() == name)
    }

    /// The capability the operation belongs to.
    pub const fn capability(self) -> Capability {
        match self {
            Operation::SearchCatalog => Capability::CatalogSearch,
            Operation::LookupCatalog | Operation::GetProduct => Capability::CatalogLookup,
            Operation::CreateCart | Operation::GetCart | Operation::UpdateCart | Operation::CancelCart => {
                Capability::Cart
            }
            Operation::CreateCheckout
            | Operation::GetCheckout
            | Operation::UpdateCheckout
            | Operation::CompleteCheckout
            | Operation::CancelCheckout => Capability::Checkout,
            Operation::GetOrder => Capability::Order,
        }
    }

    /// The member of the arguments (REST body) carrying the payload.
    pub const fn payload(self) -> Payload {
        match self {
            Operation::SearchCatalog | Operation::LookupCatalog | Operation::GetProduct => Payload::Catalog,
            Operation::CreateCart | Operation::UpdateCart => Payload::Cart,
            Operation::CreateCheckout | Operation::UpdateCheckout | Operation::CompleteCheckout => Payload::Checkout,
            Operation::GetCart
            | Operation::CancelCart
            | Operation::GetCheckout
            | Operation::CancelCheckout
            | Operation::GetOrder => Payload::None,
        }
    }

    /// Whether the payload may be left out: complete_checkout's is optional after a buyer
    /// passed 3-D Secure on our page.
    pub const fn payload_optional(self) -> bool {
        match self {
            Operation::CompleteCheckout => true,
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::CreateCart
            | Operation::GetCart
            | Operation::UpdateCart
            | Operation::CancelCart
            | Operation::CreateCheckout
            | Operation::GetCheckout
            | Operation::UpdateCheckout
            | Operation::CancelCheckout
            | Operation::GetOrder => false,
        }
    }

    /// Whether the `id` argument (REST: the `{id}` path segment) names the target resource.
    pub const fn takes_id(self) -> bool {
        match self {
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::CreateCart
            | Operation::CreateCheckout => false,
            Operation::GetCart
            | Operation::UpdateCart
            | Operation::CancelCart
            | Operation::GetCheckout
            | Operation::UpdateCheckout
            | Operation::CompleteCheckout
            | Operation::CancelCheckout
            | Operation::GetOrder => true,
        }
    }

    /// Whether MCP `meta["idempotency-key"]` is required.
    pub const fn requires_idempotency_key(self) -> bool {
        match self {
            Operation::CancelCart | Operation::CompleteCheckout | Operation::CancelCheckout => true,
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::CreateCart
            | Operation::GetCart
            | Operation::UpdateCart
            | Operation::CreateCheckout
            | Operation::GetCheckout
            | Operation::UpdateCheckout
            | Operation::GetOrder => false,
        }
    }

    /// Whether the REST request must carry `Idempotency-Key` (the OpenAPI marks it required
    /// on every cart and checkout POST and PUT).
    pub const fn rest_requires_idempotency_key(self) -> bool {
        match self.rest_method() {
            RestMethod::Get => false,
            RestMethod::Post | RestMethod::Put => match self.capability() {
                Capability::Cart | Capability::Checkout => true,
                Capability::CatalogSearch
                | Capability::CatalogLookup
                | Capability::Order
                | Capability::Fulfillment
                | Capability::Discount => false,
            },
        }
    }

    /// The REST method.
    pub const fn rest_method(self) -> RestMethod {
        match self {
            Operation::GetCart | Operation::GetCheckout | Operation::GetOrder => RestMethod::Get,
            Operation::UpdateCart | Operation::UpdateCheckout => RestMethod::Put,
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::CreateCart
            | Operation::CancelCart
            | Operation::CreateCheckout
            | Operation::CompleteCheckout
            | Operation::CancelCheckout => RestMethod::Post,
        }
    }

    /// The REST path below the REST endpoint (`{id}` is the id argument).
    pub const fn rest_path(self) -> &'static str {
        match self {
            Operation::SearchCatalog => "/catalog/search",
            Operation::LookupCatalog => "/catalog/lookup",
            Operation::GetProduct => "/catalog/product",
            Operation::CreateCart => "/carts",
            Operation::GetCart | Operation::UpdateCart => "/carts/{id}",
            Operation::CancelCart => "/carts/{id}/cancel",
            Operation::CreateCheckout => "/checkout-sessions",
            Operation::GetCheckout | Operation::UpdateCheckout => "/checkout-sessions/{id}",
            Operation::CompleteCheckout => "/checkout-sessions/{id}/complete",
            Operation::CancelCheckout => "/checkout-sessions/{id}/cancel",
            Operation::GetOrder => "/orders/{id}",
        }
    }

    /// Whether a successful call creates a resource (REST answers 201).
    pub const fn creates(self) -> bool {
        match self {
            Operation::CreateCart | Operation::CreateCheckout => true,
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::GetCart
            | Operation::UpdateCart
            | Operation::CancelCart
            | Operation::GetCheckout
            | Operation::UpdateCheckout
            | Operation::CompleteCheckout
            | Operation::CancelCheckout
            | Operation::GetOrder => false,
        }
    }

    /// Whether the operation changes nothing (the MCP `readOnlyHint`).
    pub const fn read_only(self) -> bool {
        match self {
            Operation::SearchCatalog
            | Operation::LookupCatalog
            | Operation::GetProduct
            | Operation::GetCart
            | Operation::GetCheckout
            | Operation::GetOrder => true,
            Operation::CreateCart
            | Operation::UpdateCart
            | Operation::CancelCart
            | Operation::CreateCheckout
            | Operation::UpdateCheckout
            | Operation::CompleteCheckout
            | Operation::CancelCheckout => false,
        }
    }

    /// What the tool does, for `tools/list` and the OpenAPI summary.
    pub const fn description(self) -> &'static str {
        match self {
            Operation::SearchCatalog => {
                "Search the merchant's catalog by free text and/or filters (categories, price in minor units). \
                Results are ranked by relevance and paginated with an opaque cursor (default 10 per page)."
            }
            Operation::LookupCatalog => {
                "Look up products by product id, variant id, SKU, barcode or handle. Each returned variant lists \
                the request ids that resolved to it in `inputs` (match `exact` or `featured`)."
            }
            Operation::GetProduct => {
                "Get one product by product or variant id, narrowed by option selections (`selected`, relaxed in \
                `preferences` order), with `available`/`exists` signals on every option value."
            }
            Operation::CreateCart => {
                "Create a cart from line items (variant ids, SKUs or product ids). Returns the priced cart with estimated totals and a continue_url; all items unavailable yields an error response."
            }
            Operation::GetCart => "Get a cart by id: its current lines, live prices and estimated totals.",
            Operation::UpdateCart => "Replace a cart's contents (full replacement: lines not sent are removed).",
            Operation::CancelCart => {
                "Cancel a cart; returns its last state. Needs an idempotency key (MCP: meta[\"idempotency-key\"]; REST: the Idempotency-Key header)."
            }
            Operation::CreateCheckout => {
                "Start a checkout from line items or a cart_id. The response's status says what is missing (messages with paths) until it is ready_for_complete."
            }
            Operation::GetCheckout => {
                "Get a checkout by id: lines, totals, status and the messages saying what is still missing."
            }
            Operation::UpdateCheckout => {
                "Replace a checkout's line items, buyer, fulfillment (address, shipping option) and discount codes (full replacement)."
            }
            Operation::CompleteCheckout => {
                "Place the order with checkout.payment.instruments (one instrument, a handler from ucp.payment_handlers). Needs an idempotency key (MCP: meta[\"idempotency-key\"]; REST: the Idempotency-Key header)."
            }
            Operation::CancelCheckout => {
                "Cancel a checkout that is not completed. Needs an idempotency key (MCP: meta[\"idempotency-key\"]; REST: the Idempotency-Key header)."
            }
            Operation::GetOrder => {
                "Get an order placed through this platform: line items, fulfillment expectations and events, totals."
            }
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_rows_are_consistent() {
        for operation in Operation::ALL {
            assert_eq!(Operation::from_name(operation.name()), Some(operation));
            assert_eq!(operation.takes_id(), operation.rest_path().contains("{id}"), "{operation}");
            assert_eq!(
                operation.read_only(),
                operation.name().starts_with("get_") || operation.capability().short_name().starts_with("catalog."),
                "{operation}"
            );
            if operation.creates() {
                assert!(operation.name().starts_with("create_"));
            }
        }
        assert_eq!(Operation::from_name("delete_cart"), None);
    }

    #[test]
    fn idempotency_rules_are_todays() {
        let mcp: Vec<&str> =
            Operation::ALL.into_iter().filter(|o| o.requires_idempotency_key()).map(Operation::name).collect();
        assert_eq!(mcp, ["cancel_cart", "complete_checkout", "cancel_checkout"]);
        let rest: Vec<&str> =
            Operation::ALL.into_iter().filter(|o| o.rest_requires_idempotency_key()).map(Operation::name).collect();
        assert_eq!(
            rest,
            [
                "create_cart",
                "update_cart",
                "cancel_cart",
                "create_checkout",
                "update_checkout",
                "complete_checkout",
                "cancel_checkout"
            ]
        );
    }
}
