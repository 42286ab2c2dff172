//! Cart and checkout bodies (`shopping/cart.json`, `shopping/checkout.json`, with the
//! fulfillment and discount extensions).

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::checkout::{
    Address, AppliedDiscount, Buyer, Context, PricedFulfillment, PricedGroup, PricedLine, PricedOption, SessionKind,
    Status,
};
use ucp_domain::commerce::{Page, PageLinks, SessionView};
use ucp_domain::json::JsonMap;

use super::{Message, WireTotal, rfc3339, totals};

/// The legal links a checkout carries: (type, url), in order.
#[derive(Debug, Clone, Default)]
pub struct Links(pub Vec<(String, String)>);

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionBody<'a, U: Serialize> {
    pub ucp: U,
    pub id: &'a str,
    pub line_items: Vec<LineItem<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::requests::shapes::Buyer>")]
    pub buyer: Option<&'a Buyer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::requests::shapes::Context>")]
    pub context: Option<&'a Context>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    pub currency: &'a str,
    pub totals: Vec<WireTotal<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<Link<'a>>>,
    pub expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<OrderRef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulfillment: Option<Fulfillment<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discounts: Option<Discounts<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cart_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub attribution: Option<&'a JsonMap>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LineItem<'a> {
    pub id: &'a str,
    pub item: Item<'a>,
    pub quantity: i64,
    pub totals: Vec<WireTotal<'a>>,
}

/// A line's `item` (`types/item.json`): what was bought, at what unit price.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Item<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub price: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_url: Option<&'a str>,
}

impl<'a> From<&'a PricedLine> for Item<'a> {
    fn from(line: &'a PricedLine) -> Item<'a> {
        Item { id: &line.item_id, title: &line.title, price: line.unit_price, image_url: line.image_url.as_deref() }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Link<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub url: &'a str,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OrderRef<'a> {
    pub id: &'a str,
    pub permalink_url: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Fulfillment<'a> {
    pub methods: [Method<'a>; 1],
    pub available_methods: [AvailableMethod<'a>; 1],
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Method<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub line_item_ids: &'a [String],
    pub destinations: Vec<Destination<'a>>,
    /// Always present (null when nothing is selected): messages about a missing or invalid
    /// selection point here, and every message path must resolve (checklist 127).
    pub selected_destination_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<[Group<'a>; 1]>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Destination<'a> {
    #[serde(flatten)]
    #[schemars(with = "crate::requests::shapes::PostalAddress")]
    pub address: Address,
    pub id: &'a str,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Group<'a> {
    pub id: &'a str,
    pub line_item_ids: &'a [String],
    pub options: Vec<FulfillmentOption<'a>>,
    pub selected_option_id: Option<&'a str>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FulfillmentOption<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub totals: [WireTotal<'a>; 1],
    pub earliest_fulfillment_time: String,
    pub latest_fulfillment_time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carrier: Option<&'a str>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AvailableMethod<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub line_item_ids: &'a [String],
    pub fulfillable_on: &'static str,
    pub description: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Discounts<'a> {
    pub codes: &'a [String],
    pub applied: Vec<Applied<'a>>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Applied<'a> {
    pub title: &'a str,
    pub amount: i64,
    pub automatic: bool,
    pub method: &'a str,
    pub priority: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<Allocation<'a>>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Allocation<'a> {
    pub path: &'a str,
    pub amount: i64,
}

impl<'a, U: Serialize> SessionBody<'a, U> {
    /// The body of a cart or checkout view. `pages` makes the buyer pages' URLs (`continue_url`
    /// and the order permalink, each carrying its resource's token); `links` the checkout's
    /// legal links.
    pub fn new(ucp: U, view: &'a SessionView, pages: &dyn PageLinks, links: &'a Links) -> SessionBody<'a, U> {
        let session = &view.session;
        let priced = &view.priced;
        let checkout = session.kind == SessionKind::Checkout;
        let line_items = priced
            .lines
            .iter()
            .map(|line| LineItem {
                id: &line.id,
                item: Item::from(line),
                quantity: line.quantity,
                totals: totals(&line.totals),
            })
            .collect();
        // None on a terminal session: a canceled cart's page is gone with it (a cart's priced
        // status never says canceled; the session's does).
        let continue_url = (!priced.status.is_terminal() && !session.status.is_terminal()).then(|| {
            let page = if checkout { Page::Checkout } else { Page::Cart };
            pages.url(page, &session.id)
        });
        let order = match (priced.status, &session.order_id) {
            (Status::Completed, Some(order_id)) => {
                Some(OrderRef { id: order_id, permalink_url: pages.url(Page::Order, order_id) })
            }
            _ => None,
        };
        let fulfillment = match (&priced.fulfillment, checkout && view.fulfillment) {
            (Some(fulfillment), true) => Some(Fulfillment::new(fulfillment, view.as_of)),
            _ => None,
        };
        let discounts = view.discounts.then(|| Discounts {
            codes: &priced.discount_codes,
            applied: priced.applied_discounts.iter().map(Applied::from).collect(),
        });
        SessionBody {
            ucp,
            id: &session.id,
            line_items,
            buyer: session.buyer.as_ref(),
            context: session.context.as_ref(),
            status: checkout.then(|| priced.status.as_str()),
            currency: &session.currency,
            totals: totals(&priced.totals),
            messages: view.messages().map(Message::from).collect(),
            links: checkout.then(|| links.0.iter().map(|(kind, url)| Link { kind, url }).collect()),
            expires_at: rfc3339(session.expires_at),
            continue_url,
            order,
            fulfillment,
            discounts,
            cart_id: session.cart_id.as_deref(),
            attribution: session.attribution.as_ref(),
        }
    }
}

impl<'a> Fulfillment<'a> {
    fn new(fulfillment: &'a PricedFulfillment, as_of: i64) -> Fulfillment<'a> {
        Fulfillment {
            methods: [Method {
                id: &fulfillment.method_id,
                kind: "shipping",
                line_item_ids: &fulfillment.line_item_ids,
                destinations: fulfillment
                    .destinations
                    .iter()
                    .map(|destination| Destination {
                        address: Address { id: None, ..destination.address.clone() },
                        id: &destination.id,
                    })
                    .collect(),
                selected_destination_id: fulfillment.selected_destination_id.as_deref(),
                groups: fulfillment.group.as_ref().map(|group| [Group::new(group, as_of)]),
            }],
            available_methods: [AvailableMethod {
                kind: "shipping",
                line_item_ids: &fulfillment.line_item_ids,
                fulfillable_on: "now",
                description: "Shipped to your address; options and prices appear once an address is given.",
            }],
        }
    }
}

impl<'a> Group<'a> {
    fn new(group: &'a PricedGroup, as_of: i64) -> Group<'a> {
        Group {
            id: &group.id,
            line_item_ids: &group.line_item_ids,
            options: group.options.iter().map(|option| FulfillmentOption::new(option, as_of)).collect(),
            selected_option_id: group.selected_option_id.as_deref(),
        }
    }
}

impl<'a> FulfillmentOption<'a> {
    fn new(option: &'a PricedOption, as_of: i64) -> FulfillmentOption<'a> {
        FulfillmentOption {
            id: &option.id,
            title: &option.title,
            totals: [WireTotal { kind: "total", amount: option.amount, display_text: None }],
            earliest_fulfillment_time: rfc3339(as_of + i64::from(option.min_days) * 86_400),
            latest_fulfillment_time: rfc3339(as_of + i64::from(option.max_days) * 86_400),
            description: option.description.as_deref(),
            carrier: option.carrier.as_deref(),
        }
    }
}

impl<'a> From<&'a AppliedDiscount> for Applied<'a> {
    fn from(discount: &'a AppliedDiscount) -> Applied<'a> {
        Applied {
            title: &discount.title,
            amount: discount.amount,
            automatic: discount.automatic,
            method: discount.method,
            priority: discount.priority,
            code: discount.code.as_deref(),
            allocations: discount
                .allocations
                .iter()
                .map(|(path, amount)| Allocation { path, amount: *amount })
                .collect(),
        }
    }
}
