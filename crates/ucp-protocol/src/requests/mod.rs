//! The request payloads of every operation (the `catalog`, `cart` or `checkout` member of the
//! MCP arguments, the REST body): tolerant of unknown and response-only fields, strict on what
//! a business acts on (quantities, ids, line counts). Their JSON Schemas, derived here, are the
//! `tools/list` input schemas.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use ucp_domain::catalog::SelectedOption;
use ucp_domain::checkout::{Address, Buyer, Context, FulfillmentChoice};

/// Most line items a cart or checkout may hold.
pub const MAX_LINES: usize = 100;
/// Largest quantity of one line.
pub const MAX_QUANTITY: i64 = 10_000;
/// Longest item id or line id of a line, in bytes: an item we do not sell stays a line of the
/// session as it was sent (checklist 124), so what a session stores of a line is bounded.
pub const MAX_LINE_ID_BYTES: usize = 256;
/// Most discount codes one cart or checkout may carry.
pub const MAX_DISCOUNT_CODES: usize = 20;
/// Most ids a lookup request may carry on the wire, duplicates included; the business's own
/// (smaller) limit on distinct ids applies after. Further ids are skipped unread, so the
/// limit check sees an over-long list without the cost of one.
pub const MAX_LOOKUP_IDS_ON_WIRE: usize = 1000;
/// Most option selections (`selected`), preferences or category filters of one request.
pub const MAX_OPTIONS: usize = 32;
/// Most fulfillment methods, destinations or groups, and payment instruments, of one request.
pub const MAX_FULFILLMENT_ENTRIES: usize = 16;

// Every list of a request is bounded while it deserializes: the item past the limit fails the
// request (or, for lookup ids, ends the list) before any further item is converted, so no later
// step ever iterates over more than the limit (issue 8 item 5).

/// A request that deserialized but asks for something no business may act on; the message
/// names the offending member (`cart.line_items[0].quantity must be at least 1`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

// ---- catalog -------------------------------------------------------------------------------

/// search_catalog: free text and/or filters, paginated. At least one of query or filters.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [{ "required": ["query"] }, { "required": ["filters"] }]))]
pub struct SearchRequest {
    /// Free-text search query (at least one word).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub query: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Context>")]
    pub context: Option<RequestContext>,
    #[serde(default)]
    pub filters: Option<Filters>,
    #[serde(default)]
    pub pagination: Option<PaginationRequest>,
}

/// lookup_catalog: products by id, variant id, SKU, barcode or handle.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct LookupRequest {
    /// Product ids, variant ids, SKUs, barcodes or handles.
    #[schemars(length(min = 1))]
    #[serde(deserialize_with = "bounded::truncated::<_, _, { MAX_LOOKUP_IDS_ON_WIRE + 1 }>")]
    pub ids: Vec<String>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Context>")]
    pub context: Option<RequestContext>,
    #[serde(default)]
    pub filters: Option<Filters>,
}

/// get_product: one product, narrowed by option selections.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct GetProductRequest {
    /// Product id or variant id.
    pub id: String,
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_OPTIONS>")]
    #[schemars(with = "Vec<shapes::SelectedOption>")]
    pub selected: Vec<SelectedOption>,
    /// Option names in the order selections may be relaxed.
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_OPTIONS>")]
    pub preferences: Vec<String>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Context>")]
    pub context: Option<RequestContext>,
    #[serde(default)]
    pub filters: Option<Filters>,
}

/// Hints from the platform. Only `currency` changes what a business answers; the rest is accepted
/// and ignored (unknown eligibility claims included, checklist 106).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RequestContext {
    #[serde(default)]
    pub currency: Option<String>,
}

/// Most names of unsupported filters one request keeps (for its messages); others are skipped.
pub const MAX_UNSUPPORTED_FILTERS: usize = 8;
/// Longest name of an unsupported filter kept, in characters; the rest is cut.
pub const MAX_FILTER_NAME_CHARS: usize = 64;

/// All filters combine with AND. categories: any of the values. price: minor units of context.currency.
#[derive(Debug, Default, JsonSchema)]
pub struct Filters {
    #[serde(default, deserialize_with = "bounded::optional_list::<_, _, MAX_OPTIONS>")]
    pub categories: Option<Vec<String>>,
    #[serde(default)]
    pub price: Option<PriceFilter>,
    /// The other members' names, in the order sent (search_filters.json is open to merchant
    /// filters; we have none): at most [`MAX_UNSUPPORTED_FILTERS`], their values never read.
    #[schemars(skip)]
    pub unsupported: Vec<String>,
}

// Deserialized by hand (`filters.rs`): a derive drops the members it does not know, and
// `flatten` would buffer them.
mod filters;

/// A price range in minor units.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PriceFilter {
    #[serde(default)]
    pub min: Option<u64>,
    #[serde(default)]
    pub max: Option<u64>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PaginationRequest {
    /// Opaque cursor from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Results per page (default 10).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

// ---- cart and checkout ---------------------------------------------------------------------

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LineItemRequest {
    /// Our line id, to keep a line on update.
    #[serde(default)]
    pub id: Option<String>,
    pub item: ItemRequest,
    #[schemars(range(min = 1))]
    pub quantity: i64,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ItemRequest {
    /// Variant id, SKU or product id.
    pub id: String,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct DiscountsRequest {
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_DISCOUNT_CODES>")]
    pub codes: Vec<String>,
}

/// create_cart and update_cart (full replacement: lines not sent are removed).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CartRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_LINES>")]
    pub line_items: Vec<LineItemRequest>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Buyer>")]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Context>")]
    pub context: Option<Context>,
    #[serde(default)]
    pub discounts: Option<DiscountsRequest>,
    #[serde(default)]
    pub attribution: Option<serde_json::Map<String, Value>>,
}

/// create_checkout, update_checkout (full replacement) and complete_checkout.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct CheckoutRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default, deserialize_with = "bounded::optional_list::<_, _, MAX_LINES>")]
    pub line_items: Option<Vec<LineItemRequest>>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Buyer>")]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    #[schemars(with = "Option<shapes::Context>")]
    pub context: Option<Context>,
    #[serde(default)]
    pub fulfillment: Option<FulfillmentRequest>,
    #[serde(default)]
    pub discounts: Option<DiscountsRequest>,
    /// Start from this cart (create only).
    #[serde(default)]
    pub cart_id: Option<String>,
    #[serde(default)]
    pub payment: Option<PaymentRequest>,
    #[serde(default)]
    pub attribution: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FulfillmentRequest {
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_FULFILLMENT_ENTRIES>")]
    pub methods: Vec<MethodRequest>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MethodRequest {
    /// `shipping` or `pickup`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_FULFILLMENT_ENTRIES>")]
    #[schemars(with = "Vec<shapes::PostalAddress>")]
    pub destinations: Vec<Address>,
    #[serde(default)]
    pub selected_destination_id: Option<String>,
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_FULFILLMENT_ENTRIES>")]
    pub groups: Vec<GroupRequest>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GroupRequest {
    #[serde(default)]
    pub selected_option_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PaymentRequest {
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_FULFILLMENT_ENTRIES>")]
    pub instruments: Vec<InstrumentRequest>,
}

/// One payment instrument: a handler from `ucp.payment_handlers` and its credential.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct InstrumentRequest {
    #[serde(default)]
    pub id: Option<String>,
    pub handler_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub credential: Option<CredentialRequest>,
}

/// A payment credential. Its `Debug` never shows the token.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct CredentialRequest {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub token: Option<String>,
}

impl std::fmt::Debug for InstrumentRequest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("InstrumentRequest")
            .field("id", &self.id)
            .field("handler_id", &self.handler_id)
            .field("kind", &self.kind)
            .field("credential", &self.credential)
            .finish()
    }
}

impl std::fmt::Debug for CredentialRequest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("CredentialRequest").field("kind", &self.kind).field("token", &"[redacted]").finish()
    }
}

impl FulfillmentRequest {
    /// The one shipping method we support, and the types of the methods we do not offer
    /// (pickup, or a type of the platform's own), which the checkout then refuses to complete
    /// rather than ship what was meant to be collected. None when no method was sent.
    pub fn into_choice(self) -> Option<FulfillmentChoice> {
        if self.methods.is_empty() {
            return None;
        }
        let mut unsupported: Vec<String> = Vec::new();
        let mut shipping = None;
        for method in self.methods {
            match method.kind.as_deref() {
                None | Some("shipping") => {
                    if shipping.is_none() {
                        shipping = Some(method);
                    }
                }
                Some(kind) => {
                    // Named back only as the schema's `pickup`: a platform's own words are
                    // not repeated on every read of the checkout.
                    let kind = if kind == "pickup" { kind } else { "other" };
                    if !unsupported.iter().any(|seen| seen == kind) {
                        unsupported.push(kind.to_owned());
                    }
                }
            }
        }
        let (destinations, selected_destination_id, selected_option_id) = match shipping {
            Some(method) => (
                method.destinations,
                method.selected_destination_id,
                method.groups.into_iter().find_map(|group| group.selected_option_id),
            ),
            None => (Vec::new(), None, None),
        };
        Some(FulfillmentChoice { destinations, selected_destination_id, selected_option_id, unsupported })
    }
}

impl From<FulfillmentRequest> for Option<FulfillmentChoice> {
    fn from(request: FulfillmentRequest) -> Option<FulfillmentChoice> {
        request.into_choice()
    }
}

fn check_lines(member: &str, lines: &[LineItemRequest]) -> Result<(), InvalidInput> {
    if lines.len() > MAX_LINES {
        return Err(InvalidInput(format!(
            "{member}.line_items has {} lines; at most {MAX_LINES} are allowed",
            lines.len()
        )));
    }
    let mut seen_ids: Vec<&str> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if line.quantity < 1 {
            return Err(InvalidInput(format!("{member}.line_items[{index}].quantity must be at least 1")));
        }
        if line.quantity > MAX_QUANTITY {
            return Err(InvalidInput(format!("{member}.line_items[{index}].quantity must be at most {MAX_QUANTITY}")));
        }
        if line.item.id.trim().is_empty() {
            return Err(InvalidInput(format!("{member}.line_items[{index}].item.id must not be empty")));
        }
        let too_long = |id: &str| id.len() > MAX_LINE_ID_BYTES;
        if too_long(&line.item.id) || line.id.as_deref().is_some_and(too_long) {
            return Err(InvalidInput(format!(
                "{member}.line_items[{index}]: an id is longer than {MAX_LINE_ID_BYTES} bytes"
            )));
        }
        if let Some(id) = &line.id {
            if seen_ids.contains(&id.as_str()) {
                return Err(InvalidInput(format!("{member}.line_items[{index}].id {id:?} appears twice")));
            }
            seen_ids.push(id);
        }
    }
    Ok(())
}

/// The resource id inside a payload may only repeat the target id.
fn check_id(member: &str, body_id: Option<&str>, target: Option<&str>) -> Result<(), InvalidInput> {
    match (body_id, target) {
        (Some(body), Some(target)) if body != target => {
            Err(InvalidInput(format!("{member}.id {body:?} disagrees with the id argument {target:?}; leave it out")))
        }
        _ => Ok(()),
    }
}

impl CartRequest {
    /// Checks the request under its member name (`cart`) against the target id, if any.
    pub fn validate(&self, member: &str, target: Option<&str>) -> Result<(), InvalidInput> {
        check_id(member, self.id.as_deref(), target)?;
        check_lines(member, &self.line_items)?;
        texts::check(member, self.buyer.as_ref(), self.discounts.as_ref(), None)
    }
}

impl CheckoutRequest {
    /// Checks the request under its member name (`checkout`) against the target id, if any.
    pub fn validate(&self, member: &str, target: Option<&str>) -> Result<(), InvalidInput> {
        check_id(member, self.id.as_deref(), target)?;
        if let Some(lines) = &self.line_items {
            check_lines(member, lines)?;
        }
        if let Some(discounts) = &self.discounts
            && discounts.codes.len() > MAX_DISCOUNT_CODES
        {
            return Err(InvalidInput(format!("{member}.discounts.codes holds more than 20 codes")));
        }
        texts::check(member, self.buyer.as_ref(), self.discounts.as_ref(), self.fulfillment.as_ref())
    }
}

/// The free-form objects of a payload whose size is capped (`attribution`, `context`,
/// `signals`): each must serialize to at most `max_bytes`, or the request fails naming it.
pub const FREE_FORM_MEMBERS: [&str; 3] = ["attribution", "context", "signals"];

/// Checks the serialized size of each [`FREE_FORM_MEMBERS`] object of `payload` (the `cart`,
/// `checkout` or `catalog` member, named `label` in messages, as the caller sent it). A member
/// whose text is within the cap is within it serialized (compact JSON is never longer than the
/// text it came from); a longer one is measured compact, counting stops at the cap. A payload
/// that is not an object, or names a member twice, is left to the request's own parse to
/// refuse.
pub fn check_free_form_sizes(payload: &RawValue, label: &str, max_bytes: usize) -> Result<(), InvalidInput> {
    #[derive(Deserialize)]
    struct FreeForm<'a> {
        #[serde(borrow, default)]
        attribution: Option<&'a RawValue>,
        #[serde(borrow, default)]
        context: Option<&'a RawValue>,
        #[serde(borrow, default)]
        signals: Option<&'a RawValue>,
    }
    // No member is longer than the whole: a payload within the cap (all but the abusive) is
    // not read again.
    if payload.get().len() <= max_bytes {
        return Ok(());
    }
    let Ok(members) = serde_json::from_str::<FreeForm<'_>>(payload.get()) else { return Ok(()) };
    let members = [members.attribution, members.context, members.signals];
    for (member, text) in FREE_FORM_MEMBERS.into_iter().zip(members) {
        let Some(text) = text.filter(|text| text.get().len() > max_bytes) else { continue };
        let mut counter = ByteCounter { count: 0, max: max_bytes };
        let too_large = match serde_json::from_str::<Value>(text.get()) {
            Ok(value) => serde_json::to_writer(&mut counter, &value).is_err() || counter.count > max_bytes,
            Err(_) => false,
        };
        if too_large {
            return Err(InvalidInput(format!(
                "{label}.{member} is larger than {max_bytes} bytes serialized; send less"
            )));
        }
    }
    Ok(())
}

/// Counts bytes written, failing once past `max` (so a huge value is not walked to its end).
struct ByteCounter {
    count: usize,
    max: usize,
}

impl std::io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.count += bytes.len();
        if self.count > self.max {
            return Err(std::io::Error::other("over the size cap"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub mod bounded;

pub mod shapes;
mod texts;

pub use texts::MAX_TEXT_BYTES;

#[cfg(test)]
mod tests;
