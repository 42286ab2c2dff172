//! The checkout, cart and order pages. Rust gathers what a page shows into plain structs
//! (strings unescaped, money already formatted); the askama templates under
//! `templates/handoff/` lay them out and escape every value.

mod form;
mod order;

use askama::Template;
use ucp_domain::checkout::{Priced, PricedLine, Session, Status, Total};

use super::html::{money, render};
use form::field_of;
pub(super) use form::{CheckoutForm, MAX_FIELD, Notice};
pub(super) use order::order_page;

fn total_label(kind: &str) -> &'static str {
    match kind {
        "subtotal" => "Subtotal",
        "items_discount" => "Discounts",
        "discount" => "Order discount",
        "fulfillment" => "Shipping",
        "tax" => "Tax",
        "total" => "Total",
        _ => "Other",
    }
}

fn status_label(status: Status) -> &'static str {
    match status {
        Status::Incomplete => "Needs your details",
        Status::RequiresEscalation => "Needs your action",
        Status::ReadyForComplete => "Ready to place",
        Status::CompleteInProgress => "Being placed",
        Status::Completed => "Order placed",
        Status::Canceled => "Canceled",
    }
}

/// The `role="alert"` region: its heading and one item per message.
struct Alert<'a> {
    heading: &'static str,
    items: Vec<AlertItem<'a>>,
}

struct AlertItem<'a> {
    class: &'static str,
    content: &'a str,
}

/// The alert for `notices`, or none when there are none. Disclosures are not alerts: each
/// shows under its line in the summary ([`priced_summary`]).
fn alert(notices: &[Notice]) -> Option<Alert<'_>> {
    let notices: Vec<&Notice> = notices.iter().filter(|notice| !notice.disclosure).collect();
    if notices.is_empty() {
        return None;
    }
    let heading = if notices.iter().any(|notice| notice.error) { "Please check the following" } else { "Please note" };
    let items = notices
        .iter()
        .map(|notice| AlertItem { class: if notice.error { "error" } else { "warning" }, content: &notice.content })
        .collect();
    Some(Alert { heading, items })
}

/// The items and totals table, and the applied discounts under it.
struct Summary<'a> {
    caption: &'static str,
    rows: Vec<Row<'a>>,
    totals: Vec<TotalRow>,
    discounts: Vec<AppliedDiscount>,
}

struct Row<'a> {
    title: &'a str,
    quantity: i64,
    unit_price: String,
    total: String,
    /// The merchant's disclosures about the line's product (checkout.md §4), shown under it.
    disclosures: Vec<Disclosed<'a>>,
}

/// A disclosure as a page shows it: its symbol (the pages' Content-Security-Policy allows
/// images from the disclosures' image origins alone), its text and where to read more.
struct Disclosed<'a> {
    image_url: Option<&'a str>,
    /// The symbol's alternative text: the disclosure's code in words (`energy label`).
    label: String,
    content: &'a str,
    url: Option<&'a str>,
}

struct TotalRow {
    label: &'static str,
    amount: String,
    grand: bool,
}

struct AppliedDiscount {
    name: String,
    amount: String,
}

impl<'a> Row<'a> {
    fn new(title: &'a str, quantity: i64, unit_price: i64, total: i64, currency: &str) -> Row<'a> {
        Row {
            title,
            quantity,
            unit_price: money(unit_price, currency),
            total: money(total, currency),
            disclosures: Vec::new(),
        }
    }
}

fn total_rows<'k>(totals: impl Iterator<Item = (&'k str, i64)>, currency: &str) -> Vec<TotalRow> {
    totals
        .map(|(kind, amount)| TotalRow {
            label: total_label(kind),
            amount: money(amount, currency),
            grand: kind == "total",
        })
        .collect()
}

fn line_total(line: &PricedLine) -> i64 {
    line.totals.iter().find(|total| total.kind == "total").map_or(line.unit_price * line.quantity, |total| total.amount)
}

fn priced_summary<'a>(caption: &'static str, priced: &'a Priced, currency: &str) -> Summary<'a> {
    let rows = priced
        .lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let mut row = Row::new(&line.title, line.quantity, line.unit_price, line_total(line), currency);
            let path = format!("$.line_items[{index}]");
            row.disclosures = priced
                .messages
                .iter()
                .filter(|message| message.path.as_deref() == Some(path.as_str()))
                .filter_map(|message| {
                    let display = message.disclosure.as_deref()?;
                    Some(Disclosed {
                        image_url: display.image_url.as_deref(),
                        label: message.code.replace('_', " "),
                        content: &message.content,
                        url: display.url.as_deref(),
                    })
                })
                .collect();
            row
        })
        .collect();
    let totals = total_rows(priced.totals.iter().map(|Total { kind, amount, .. }| (*kind, *amount)), currency);
    let discounts = priced
        .applied_discounts
        .iter()
        .map(|discount| AppliedDiscount {
            name: match &discount.code {
                Some(code) => format!("{} ({code})", discount.title),
                None => discount.title.clone(),
            },
            amount: money(-discount.amount, currency),
        })
        .collect();
    Summary { caption, rows, totals, discounts }
}

/// Everything the checkout page shows.
pub(super) struct CheckoutView<'a> {
    pub(super) business: &'a str,
    pub(super) session: &'a Session,
    pub(super) priced: &'a Priced,
    pub(super) notices: Vec<Notice>,
    pub(super) form: &'a CheckoutForm,
    /// The sandbox handler is configured: the page can take (test) payment itself.
    pub(super) sandbox: bool,
    pub(super) require_email: bool,
    /// The checkout's page token, for the forms' actions.
    pub(super) token: &'a str,
    /// The token of the order a completed checkout became, for its link.
    pub(super) order_token: Option<String>,
}

#[derive(Template)]
#[template(path = "handoff/checkout.html", config = "templates/askama.toml")]
struct CheckoutPage<'a> {
    business: &'a str,
    id: &'a str,
    /// The checkout's page token: every form action carries it.
    token: &'a str,
    status: &'static str,
    /// The order a completed checkout became, and its page token.
    order: Option<OrderLink<'a>>,
    canceled: bool,
    alert: Option<Alert<'a>>,
    summary: Summary<'a>,
    /// The total to approve while a 3-D Secure challenge is open.
    verify: Option<String>,
    /// The details form, while the buyer can still change the checkout.
    form: Option<DetailsForm<'a>>,
    place: Option<Place>,
}

struct OrderLink<'a> {
    id: &'a str,
    token: &'a str,
}

struct Place {
    total: String,
    /// The page takes (test) payment itself: the "Place order" button.
    sandbox: bool,
}

/// A labelled input, its hint and the errors of the messages that point at it.
struct Field<'a> {
    id: String,
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    value: &'a str,
    autocomplete: &'static str,
    required: bool,
    hint: Option<&'static str>,
    error: Option<String>,
    /// The ids of the hint and the error, for `aria-describedby`.
    described_by: String,
}

/// The error text of the messages whose path points at form field `name`.
fn field_errors(notices: &[Notice], name: &str) -> Option<String> {
    let errors: Vec<&str> = notices
        .iter()
        .filter(|notice| notice.error && notice.path.as_deref().and_then(field_of) == Some(name))
        .map(|notice| notice.content.as_str())
        .collect();
    (!errors.is_empty()).then(|| errors.join(" "))
}

/// What a field is, before the messages about it are known.
struct Spec {
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    autocomplete: &'static str,
    required: bool,
    hint: Option<&'static str>,
}

const fn text(name: &'static str, label: &'static str, autocomplete: &'static str, required: bool) -> Spec {
    Spec { name, label, kind: "text", autocomplete, required, hint: None }
}

impl Spec {
    fn field<'a>(self, value: &'a str, notices: &[Notice]) -> Field<'a> {
        let id = format!("f-{}", self.name);
        let error = field_errors(notices, self.name);
        let mut described = Vec::new();
        if self.hint.is_some() {
            described.push(format!("{id}-hint"));
        }
        if error.is_some() {
            described.push(format!("{id}-error"));
        }
        Field {
            described_by: described.join(" "),
            id,
            name: self.name,
            label: self.label,
            kind: self.kind,
            value,
            autocomplete: self.autocomplete,
            required: self.required,
            hint: self.hint,
            error,
        }
    }
}

struct DetailsForm<'a> {
    email: Field<'a>,
    first_name: Field<'a>,
    last_name: Field<'a>,
    phone: Field<'a>,
    street: Field<'a>,
    street2: Field<'a>,
    city: Field<'a>,
    region: Field<'a>,
    postal_code: Field<'a>,
    country: Field<'a>,
    shipping: Shipping<'a>,
    discount_codes: Field<'a>,
}

/// The shipping option radios, or the hint that they come with an address.
struct Shipping<'a> {
    error: Option<String>,
    /// The option in the form, kept in a hidden input while there are no options to show.
    chosen: &'a str,
    options: Vec<ShippingOption<'a>>,
}

struct ShippingOption<'a> {
    input_id: String,
    value: &'a str,
    title: &'a str,
    price: String,
    detail: String,
    checked: bool,
}

fn details_form<'a>(view: &CheckoutView<'a>) -> DetailsForm<'a> {
    let form = view.form;
    let notices = &view.notices;
    let email = Spec {
        name: "email",
        label: "Email",
        kind: "email",
        autocomplete: "email",
        required: view.require_email,
        hint: Some("For the order confirmation."),
    };
    let phone = Spec {
        name: "phone",
        label: "Phone",
        kind: "tel",
        autocomplete: "tel",
        required: false,
        hint: Some("Optional. International format, e.g. +14155550123."),
    };
    let country = Spec { hint: Some("Two-letter code, e.g. US."), ..text("country", "Country", "country", true) };
    let discount_codes = Spec {
        hint: Some("Optional. Separate several codes with commas."),
        ..text("discount_codes", "Discount codes", "off", false)
    };
    DetailsForm {
        email: email.field(&form.email, notices),
        first_name: text("first_name", "First name", "given-name", false).field(&form.first_name, notices),
        last_name: text("last_name", "Last name", "family-name", false).field(&form.last_name, notices),
        phone: phone.field(&form.phone, notices),
        street: text("street", "Street address", "address-line1", true).field(&form.street, notices),
        street2: text("street2", "Apartment, suite (optional)", "address-line2", false).field(&form.street2, notices),
        city: text("city", "City", "address-level2", true).field(&form.city, notices),
        region: text("region", "State or region", "address-level1", false).field(&form.region, notices),
        postal_code: text("postal_code", "Postal code", "postal-code", true).field(&form.postal_code, notices),
        country: country.field(&form.country, notices),
        shipping: shipping(view),
        discount_codes: discount_codes.field(&form.discount_codes, notices),
    }
}

fn shipping<'a>(view: &CheckoutView<'a>) -> Shipping<'a> {
    let options = view
        .priced
        .fulfillment
        .as_ref()
        .and_then(|fulfillment| fulfillment.group.as_ref())
        .map(|group| group.options.as_slice())
        .unwrap_or_default();
    let options = options
        .iter()
        .enumerate()
        .map(|(index, option)| {
            let mut detail = format!("{}-{} business days", option.min_days, option.max_days);
            if let Some(carrier) = &option.carrier {
                detail = format!("{carrier}, {detail}");
            }
            ShippingOption {
                input_id: format!("f-shipping-{index}"),
                value: &option.id,
                title: &option.title,
                price: if option.amount == 0 {
                    "Free".to_owned()
                } else {
                    money(option.amount, &view.session.currency)
                },
                detail,
                checked: option.id == view.form.shipping_option,
            }
        })
        .collect();
    Shipping { error: field_errors(&view.notices, "shipping_option"), chosen: &view.form.shipping_option, options }
}

fn total_of(priced: &Priced) -> i64 {
    priced.totals.iter().find(|total| total.kind == "total").map_or(0, |total| total.amount)
}

pub(super) fn checkout_page(view: &CheckoutView<'_>) -> String {
    let session = view.session;
    let priced = view.priced;
    let status = priced.status;
    let pending = session.pending_authentication.as_ref().filter(|pending| !pending.approved && !status.is_terminal());
    // While the challenge is open, its own section says what `requires_3ds` would.
    let notices: Vec<Notice> =
        view.notices.iter().filter(|notice| !(pending.is_some() && notice.code == "requires_3ds")).cloned().collect();
    let open = !status.is_terminal() && status != Status::CompleteInProgress;
    let total = money(total_of(priced), &session.currency);
    let page = CheckoutPage {
        business: view.business,
        id: &session.id,
        token: view.token,
        status: status_label(status),
        order: match (session.order_id.as_deref(), view.order_token.as_deref()) {
            (Some(id), Some(token)) if status == Status::Completed => Some(OrderLink { id, token }),
            _ => None,
        },
        canceled: status == Status::Canceled,
        alert: alert(&notices),
        summary: priced_summary("Order summary", priced, &session.currency),
        verify: (open && pending.is_some()).then(|| total.clone()),
        form: open.then(|| details_form(view)),
        place: (open && status == Status::ReadyForComplete).then_some(Place { total, sandbox: view.sandbox }),
    };
    render(&page)
}

#[derive(Template)]
#[template(path = "handoff/cart.html", config = "templates/askama.toml")]
struct CartPage<'a> {
    business: &'a str,
    alert: Option<Alert<'a>>,
    summary: Summary<'a>,
    /// The cart id for the "Check out" button; none for an empty cart.
    checkout_from: Option<&'a str>,
    /// The cart's page token, for the button's action.
    token: &'a str,
}

/// The cart page: its items, totals and the button that starts a checkout.
pub(super) fn cart_page(business: &str, session: &Session, priced: &Priced, notices: &[Notice], token: &str) -> String {
    render(&CartPage {
        business,
        token,
        alert: alert(notices),
        summary: priced_summary("Cart", priced, &session.currency),
        checkout_from: (!priced.lines.is_empty()).then_some(session.id.as_str()),
    })
}
