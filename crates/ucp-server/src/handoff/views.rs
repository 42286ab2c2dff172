//! The checkout, cart and order pages as HTML. Every dynamic value goes through `escape`.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;
use ucp_domain::checkout::{Message, MessageKind, Priced, PricedLine, Session, Status, Total};

use super::html::{date, escape, money, page};

/// What the buyer typed (or what is stored), field by field.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct CheckoutForm {
    pub(super) email: String,
    pub(super) first_name: String,
    pub(super) last_name: String,
    pub(super) phone: String,
    pub(super) street: String,
    pub street2: String,
    pub(super) city: String,
    pub(super) region: String,
    pub(super) postal_code: String,
    pub(super) country: String,
    pub(super) shipping_option: String,
    pub(super) discount_codes: String,
}

/// Longest value a form field may hold.
pub(super) const MAX_FIELD: usize = 256;

impl CheckoutForm {
    /// The stored buyer, selected destination, option and codes.
    pub(super) fn from_session(session: &Session, priced: &Priced) -> CheckoutForm {
        let buyer = session.buyer.clone().unwrap_or_default();
        let fulfillment = priced.fulfillment.as_ref();
        let address = fulfillment
            .and_then(|fulfillment| {
                let selected = fulfillment.selected_destination_id.as_ref();
                fulfillment
                    .destinations
                    .iter()
                    .find(|destination| Some(&destination.id) == selected)
                    .or(fulfillment.destinations.first())
                    .map(|destination| destination.address.clone())
            })
            .or_else(|| session.fulfillment.as_ref().and_then(|choice| choice.destinations.first().cloned()))
            .unwrap_or_default();
        let option = fulfillment
            .and_then(|fulfillment| fulfillment.group.as_ref())
            .and_then(|group| group.selected_option_id.clone())
            .or_else(|| session.fulfillment.as_ref().and_then(|choice| choice.selected_option_id.clone()));
        CheckoutForm {
            email: buyer.email.unwrap_or_default(),
            first_name: buyer.first_name.or(address.first_name).unwrap_or_default(),
            last_name: buyer.last_name.or(address.last_name).unwrap_or_default(),
            phone: buyer.phone_number.unwrap_or_default(),
            street: address.street_address.unwrap_or_default(),
            street2: address.extended_address.unwrap_or_default(),
            city: address.address_locality.unwrap_or_default(),
            region: address.address_region.unwrap_or_default(),
            postal_code: address.postal_code.unwrap_or_default(),
            country: address.address_country.unwrap_or_default(),
            shipping_option: option.unwrap_or_default(),
            discount_codes: session.discount_codes.join(", "),
        }
    }

    /// Trims every field; names the first field that is too long.
    pub(super) fn normalize(&mut self) -> Result<(), &'static str> {
        for (label, value) in [
            ("Email", &mut self.email),
            ("First name", &mut self.first_name),
            ("Last name", &mut self.last_name),
            ("Phone", &mut self.phone),
            ("Street address", &mut self.street),
            ("Apartment, suite", &mut self.street2),
            ("City", &mut self.city),
            ("State or region", &mut self.region),
            ("Postal code", &mut self.postal_code),
            ("Country", &mut self.country),
            ("Shipping option", &mut self.shipping_option),
            ("Discount codes", &mut self.discount_codes),
        ] {
            *value = value.trim().to_owned();
            if value.chars().count() > MAX_FIELD {
                return Err(label);
            }
        }
        self.country = self.country.to_uppercase();
        Ok(())
    }

    pub(super) fn has_address(&self) -> bool {
        [&self.street, &self.street2, &self.city, &self.region, &self.postal_code, &self.country]
            .iter()
            .any(|value| !value.is_empty())
    }

    /// The codes, split on commas and white space.
    pub(super) fn codes(&self) -> Vec<String> {
        self.discount_codes
            .split(|ch: char| ch == ',' || ch.is_whitespace())
            .filter(|code| !code.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// A message as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Notice {
    pub(super) error: bool,
    pub(super) code: String,
    pub(super) content: String,
    pub(super) path: Option<String>,
}

impl Notice {
    pub(super) fn error(code: &str, content: impl Into<String>) -> Notice {
        Notice { error: true, code: code.into(), content: content.into(), path: None }
    }
}

impl From<&Message> for Notice {
    fn from(message: &Message) -> Notice {
        Notice {
            error: message.kind == MessageKind::Error,
            code: message.code.clone(),
            content: message.content.clone(),
            path: message.path.clone(),
        }
    }
}

/// The form field a message's path points at.
fn field_of(path: &str) -> Option<&'static str> {
    if path.starts_with("$.buyer.") {
        return match path.rsplit('.').next()? {
            "email" => Some("email"),
            "phone_number" => Some("phone"),
            "first_name" => Some("first_name"),
            "last_name" => Some("last_name"),
            _ => None,
        };
    }
    if path.starts_with("$.discounts") {
        return Some("discount_codes");
    }
    if path.ends_with("selected_option_id") {
        return Some("shipping_option");
    }
    if path.contains(".destinations") {
        if path.ends_with(".destinations") || path.ends_with("selected_destination_id") {
            return Some("street");
        }
        if path.ends_with(']') {
            // The destination as a whole: we do not deliver there.
            return Some("country");
        }
        return match path.rsplit('.').next()? {
            "street_address" => Some("street"),
            "extended_address" => Some("street2"),
            "address_locality" => Some("city"),
            "address_region" => Some("region"),
            "postal_code" => Some("postal_code"),
            "address_country" => Some("country"),
            _ => None,
        };
    }
    None
}

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

/// The `role="alert"` region listing the messages (nothing when there are none).
fn alert(out: &mut String, notices: &[Notice]) {
    if notices.is_empty() {
        return;
    }
    let heading = if notices.iter().any(|notice| notice.error) { "Please check the following" } else { "Please note" };
    let _ = write!(
        out,
        "<div class=\"alert\" role=\"alert\" aria-labelledby=\"alert-heading\">\n<h2 id=\"alert-heading\">{heading}</h2>\n<ul>"
    );
    for notice in notices {
        let class = if notice.error { "error" } else { "warning" };
        let _ = write!(out, "<li class=\"{class}\">{}</li>", escape(&notice.content));
    }
    out.push_str("</ul>\n</div>\n");
}

struct Row<'a> {
    title: &'a str,
    quantity: i64,
    unit_price: i64,
    total: i64,
}

/// The items and totals table.
fn summary_table(out: &mut String, caption: &str, rows: &[Row<'_>], totals: &[(String, i64)], currency: &str) {
    let _ = write!(
        out,
        "<table>\n<caption>{}</caption>\n<thead><tr><th scope=\"col\">Item</th><th scope=\"col\" class=\"num\">Qty</th>\
         <th scope=\"col\" class=\"num\">Price</th><th scope=\"col\" class=\"num\">Total</th></tr></thead>\n<tbody>\n",
        escape(caption)
    );
    for row in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(row.title),
            row.quantity,
            money(row.unit_price, currency),
            money(row.total, currency),
        );
    }
    out.push_str("</tbody>\n<tfoot>\n");
    for (kind, amount) in totals {
        let class = if kind == "total" { " class=\"grand\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr{class}><th scope=\"row\" colspan=\"3\">{}</th><td class=\"num\">{}</td></tr>",
            total_label(kind),
            money(*amount, currency),
        );
    }
    out.push_str("</tfoot>\n</table>\n");
}

fn line_total(line: &PricedLine) -> i64 {
    line.totals.iter().find(|total| total.kind == "total").map_or(line.unit_price * line.quantity, |total| total.amount)
}

fn priced_summary(out: &mut String, caption: &str, priced: &Priced, currency: &str) {
    let rows: Vec<Row<'_>> = priced
        .lines
        .iter()
        .map(|line| Row {
            title: &line.title,
            quantity: line.quantity,
            unit_price: line.unit_price,
            total: line_total(line),
        })
        .collect();
    let totals: Vec<(String, i64)> =
        priced.totals.iter().map(|Total { kind, amount, .. }| ((*kind).to_owned(), *amount)).collect();
    summary_table(out, caption, &rows, &totals, currency);
    if !priced.applied_discounts.is_empty() {
        out.push_str("<ul class=\"discounts\" aria-label=\"Applied discounts\">");
        for discount in &priced.applied_discounts {
            let name = match &discount.code {
                Some(code) => format!("{} ({code})", discount.title),
                None => discount.title.clone(),
            };
            let _ = write!(out, "<li>{}: {}</li>", escape(&name), money(-discount.amount, currency));
        }
        out.push_str("</ul>\n");
    }
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
}

struct Field<'a> {
    name: &'a str,
    label: &'a str,
    kind: &'a str,
    value: &'a str,
    autocomplete: &'a str,
    required: bool,
    hint: Option<&'a str>,
}

fn text_field(out: &mut String, field: &Field<'_>, notices: &[Notice]) {
    let id = format!("f-{}", field.name);
    let errors: Vec<&Notice> = notices
        .iter()
        .filter(|notice| notice.error && notice.path.as_deref().and_then(field_of) == Some(field.name))
        .collect();
    let mut described = Vec::new();
    let required = if field.required { " <span class=\"hint\">(required)</span>" } else { "" };
    let _ = write!(out, "<label for=\"{id}\">{}{required}</label>", escape(field.label));
    let mut after = String::new();
    if let Some(hint) = field.hint {
        let _ = write!(after, "<p class=\"hint\" id=\"{id}-hint\">{}</p>", escape(hint));
        described.push(format!("{id}-hint"));
    }
    if !errors.is_empty() {
        let text: Vec<String> = errors.iter().map(|notice| escape(&notice.content)).collect();
        let _ = write!(after, "<p class=\"field-error\" id=\"{id}-error\">{}</p>", text.join(" "));
        described.push(format!("{id}-error"));
    }
    let _ = writeln!(
        out,
        "<input type=\"{}\" id=\"{id}\" name=\"{}\" value=\"{}\" autocomplete=\"{}\"{}{}{}>{after}",
        field.kind,
        field.name,
        escape(field.value),
        field.autocomplete,
        if field.required { " required" } else { "" },
        if errors.is_empty() { "" } else { " aria-invalid=\"true\"" },
        if described.is_empty() { String::new() } else { format!(" aria-describedby=\"{}\"", described.join(" ")) },
    );
}

fn field<'a>(name: &'a str, label: &'a str, value: &'a str, autocomplete: &'a str, required: bool) -> Field<'a> {
    Field { name, label, kind: "text", value, autocomplete, required, hint: None }
}

pub(super) fn checkout_page(view: &CheckoutView<'_>) -> String {
    let session = view.session;
    let priced = view.priced;
    let id = escape(&session.id);
    let status = priced.status;
    let pending = session.pending_authentication.as_ref().filter(|pending| !pending.approved && !status.is_terminal());
    let notices: Vec<Notice> =
        view.notices.iter().filter(|notice| !(pending.is_some() && notice.code == "requires_3ds")).cloned().collect();
    let mut out = String::with_capacity(16 * 1024);
    out.push_str("<h1>Checkout</h1>\n");
    let _ = writeln!(out, "<p>Status: <span class=\"status\">{}</span></p>", status_label(status));
    match (status, &session.order_id) {
        (Status::Completed, Some(order_id)) => {
            let _ = writeln!(
                out,
                "<div class=\"notice\"><p><strong>Thank you: your order is placed.</strong></p>\
                 <p><a href=\"/orders/{0}\">View order {0}</a></p></div>",
                escape(order_id)
            );
        }
        (Status::Canceled, _) => {
            out.push_str("<div class=\"notice\"><p>This checkout was canceled; nothing was charged.</p></div>\n");
        }
        _ => {}
    }
    alert(&mut out, &notices);
    out.push_str("<div class=\"layout\">\n<section class=\"card summary\" aria-label=\"Order summary\">\n");
    priced_summary(&mut out, "Order summary", priced, &session.currency);
    out.push_str("</section>\n<div>\n");
    if !status.is_terminal() && status != Status::CompleteInProgress {
        if pending.is_some() {
            let _ = writeln!(
                out,
                "<section class=\"card verify\" aria-labelledby=\"verify-heading\">\n<h2 id=\"verify-heading\">Verify your card</h2>\n\
                 <p>Your card issuer asks you to confirm this payment of <strong>{}</strong> (3-D Secure).</p>\n\
                 <form method=\"post\" action=\"/checkout/{id}/3ds\"><button type=\"submit\">Approve payment</button></form>\n</section>",
                money(total_of(priced), &session.currency)
            );
        }
        details_form(&mut out, view, &id);
        if status == Status::ReadyForComplete {
            let _ = write!(
                out,
                "<section class=\"card\" aria-labelledby=\"place-heading\">\n<h2 id=\"place-heading\">Place your order</h2>\n<p>Total to pay: <strong>{}</strong></p>\n",
                money(total_of(priced), &session.currency)
            );
            if view.sandbox {
                let _ = writeln!(
                    out,
                    "<p class=\"hint\">Test payment: this shop runs in sandbox mode, no money moves.</p>\n\
                     <form method=\"post\" action=\"/checkout/{id}/place\"><button type=\"submit\">Place order</button></form>"
                );
            } else {
                out.push_str("<p>Your assistant can now complete the purchase with your payment method.</p>\n");
            }
            out.push_str("</section>\n");
        }
    }
    out.push_str("</div>\n</div>\n");
    page(view.business, "Checkout", &out)
}

fn total_of(priced: &Priced) -> i64 {
    priced.totals.iter().find(|total| total.kind == "total").map_or(0, |total| total.amount)
}

fn details_form(out: &mut String, view: &CheckoutView<'_>, id: &str) {
    let form = view.form;
    let notices = &view.notices;
    let _ = writeln!(
        out,
        "<section class=\"card\" aria-labelledby=\"details-heading\">\n<h2 id=\"details-heading\">Your details</h2>\n\
         <form method=\"post\" action=\"/checkout/{id}\" accept-charset=\"utf-8\">"
    );
    out.push_str("<fieldset><legend>Contact</legend>\n");
    text_field(
        out,
        &Field {
            name: "email",
            label: "Email",
            kind: "email",
            value: &form.email,
            autocomplete: "email",
            required: view.require_email,
            hint: Some("For the order confirmation."),
        },
        notices,
    );
    out.push_str("<div class=\"row\"><div>");
    text_field(out, &field("first_name", "First name", &form.first_name, "given-name", false), notices);
    out.push_str("</div><div>");
    text_field(out, &field("last_name", "Last name", &form.last_name, "family-name", false), notices);
    out.push_str("</div></div>\n");
    text_field(
        out,
        &Field {
            name: "phone",
            label: "Phone",
            kind: "tel",
            value: &form.phone,
            autocomplete: "tel",
            required: false,
            hint: Some("Optional. International format, e.g. +14155550123."),
        },
        notices,
    );
    out.push_str("</fieldset>\n<fieldset><legend>Shipping address</legend>\n");
    text_field(out, &field("street", "Street address", &form.street, "address-line1", true), notices);
    text_field(out, &field("street2", "Apartment, suite (optional)", &form.street2, "address-line2", false), notices);
    out.push_str("<div class=\"row\"><div>");
    text_field(out, &field("city", "City", &form.city, "address-level2", true), notices);
    out.push_str("</div><div>");
    text_field(out, &field("region", "State or region", &form.region, "address-level1", false), notices);
    out.push_str("</div></div>\n<div class=\"row\"><div>");
    text_field(out, &field("postal_code", "Postal code", &form.postal_code, "postal-code", true), notices);
    out.push_str("</div><div>");
    text_field(
        out,
        &Field {
            name: "country",
            label: "Country",
            kind: "text",
            value: &form.country,
            autocomplete: "country",
            required: true,
            hint: Some("Two-letter code, e.g. US."),
        },
        notices,
    );
    out.push_str("</div></div>\n</fieldset>\n");
    shipping_options(out, view);
    text_field(
        out,
        &Field {
            name: "discount_codes",
            label: "Discount codes",
            kind: "text",
            value: &form.discount_codes,
            autocomplete: "off",
            required: false,
            hint: Some("Optional. Separate several codes with commas."),
        },
        notices,
    );
    out.push_str("<p><button type=\"submit\" class=\"secondary\">Save details</button></p>\n</form>\n</section>\n");
}

fn shipping_options(out: &mut String, view: &CheckoutView<'_>) {
    let options = view
        .priced
        .fulfillment
        .as_ref()
        .and_then(|fulfillment| fulfillment.group.as_ref())
        .map(|group| group.options.as_slice())
        .unwrap_or_default();
    let errors: Vec<String> = view
        .notices
        .iter()
        .filter(|notice| notice.error && notice.path.as_deref().and_then(field_of) == Some("shipping_option"))
        .map(|notice| escape(&notice.content))
        .collect();
    let described = if errors.is_empty() { "" } else { " aria-describedby=\"f-shipping_option-error\"" };
    let _ = writeln!(out, "<fieldset{described}><legend>Shipping option</legend>");
    if !errors.is_empty() {
        let _ = write!(out, "<p class=\"field-error\" id=\"f-shipping_option-error\">{}</p>", errors.join(" "));
    }
    if options.is_empty() {
        // Keep a chosen option across the save that brings the options in.
        if !view.form.shipping_option.is_empty() {
            let _ = write!(
                out,
                "<input type=\"hidden\" name=\"shipping_option\" value=\"{}\">",
                escape(&view.form.shipping_option)
            );
        }
        out.push_str(
            "<p class=\"hint\">Enter your shipping address and save: the options and prices for it appear here.</p>\n",
        );
    }
    for (index, option) in options.iter().enumerate() {
        let input_id = format!("f-shipping-{index}");
        let checked = if option.id == view.form.shipping_option { " checked" } else { "" };
        let mut detail = format!("{}-{} business days", option.min_days, option.max_days);
        if let Some(carrier) = &option.carrier {
            detail = format!("{carrier}, {detail}");
        }
        let _ = writeln!(
            out,
            "<div class=\"option\"><input type=\"radio\" id=\"{input_id}\" name=\"shipping_option\" value=\"{}\"{checked}>\
             <label for=\"{input_id}\"><strong>{}</strong>: {} <span class=\"hint\">({})</span></label></div>",
            escape(&option.id),
            escape(&option.title),
            if option.amount == 0 { "Free".to_owned() } else { money(option.amount, &view.session.currency) },
            escape(&detail),
        );
    }
    out.push_str("</fieldset>\n");
}

/// The cart page: its items, totals and the button that starts a checkout.
pub(super) fn cart_page(business: &str, session: &Session, priced: &Priced, notices: &[Notice]) -> String {
    let mut out = String::with_capacity(8 * 1024);
    out.push_str("<h1>Your cart</h1>\n");
    alert(&mut out, notices);
    out.push_str("<section class=\"card\" aria-label=\"Cart contents\">\n");
    priced_summary(&mut out, "Cart", priced, &session.currency);
    out.push_str("<p class=\"hint\">Shipping and tax are calculated at checkout.</p>\n");
    if !priced.lines.is_empty() {
        let _ = writeln!(
            out,
            "<form method=\"post\" action=\"/cart/{}/checkout\"><p><button type=\"submit\">Check out</button></p></form>",
            escape(&session.id)
        );
    }
    out.push_str("</section>\n");
    page(business, "Your cart", &out)
}

fn readable(code: &str) -> String {
    let text = code.replace('_', " ");
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The order permalink page, from the stored order document.
pub(super) fn order_page(business: &str, document: &Value, created_at: i64) -> String {
    let currency = document["currency"].as_str().unwrap_or("USD");
    let order_id = document["id"].as_str().unwrap_or_default();
    let lines = document["line_items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut statuses: Vec<&str> = lines.iter().filter_map(|line| line["status"].as_str()).collect();
    statuses.dedup();
    let status = match statuses.as_slice() {
        [one] => readable(one),
        [] => "Placed".to_owned(),
        _ => "Partially fulfilled".to_owned(),
    };
    let mut out = String::with_capacity(8 * 1024);
    out.push_str("<h1>Your order</h1>\n");
    let _ = writeln!(
        out,
        "<div class=\"notice\"><p><strong>Thank you for your order.</strong> A confirmation was sent to your email.</p></div>\n\
         <p>Order number: <strong>{}</strong><br>Placed on {}<br>Status: <span class=\"status\">{}</span></p>",
        escape(order_id),
        date(created_at),
        escape(&status),
    );
    out.push_str("<div class=\"layout\">\n<section class=\"card summary\" aria-label=\"Order summary\">\n");
    let rows: Vec<Row<'_>> = lines
        .iter()
        .map(|line| Row {
            title: line["item"]["title"].as_str().unwrap_or_default(),
            quantity: line["quantity"]["total"].as_i64().unwrap_or_default(),
            unit_price: line["item"]["price"].as_i64().unwrap_or_default(),
            total: totals_amount(&line["totals"], "total").unwrap_or_default(),
        })
        .collect();
    let totals: Vec<(String, i64)> = document["totals"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|total| Some((total["type"].as_str()?.to_owned(), total["amount"].as_i64()?)))
        .collect();
    summary_table(&mut out, "Items", &rows, &totals, currency);
    out.push_str("</section>\n<section class=\"card\" aria-labelledby=\"shipping-heading\">\n<h2 id=\"shipping-heading\">Shipping</h2>\n");
    let expectations = document["fulfillment"]["expectations"].as_array().map(Vec::as_slice).unwrap_or_default();
    if expectations.is_empty() {
        out.push_str("<p>No shipment is expected for this order.</p>\n");
    }
    for expectation in expectations {
        if let Some(description) = expectation["description"].as_str() {
            let _ = writeln!(out, "<p>{}</p>", escape(description));
        }
        let destination = &expectation["destination"];
        let name = [&destination["first_name"], &destination["last_name"]]
            .iter()
            .filter_map(|part| part.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let locality = [&destination["address_locality"], &destination["address_region"], &destination["postal_code"]]
            .iter()
            .filter_map(|part| part.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let parts: Vec<String> = [
            Some(name),
            destination["street_address"].as_str().map(str::to_owned),
            destination["extended_address"].as_str().map(str::to_owned),
            Some(locality),
            destination["address_country"].as_str().map(str::to_owned),
        ]
        .into_iter()
        .flatten()
        .filter(|part| !part.is_empty())
        .map(|part| escape(&part))
        .collect();
        let _ = writeln!(out, "<h3>Shipping to</h3>\n<address>{}</address>", parts.join("<br>"));
    }
    out.push_str("</section>\n</div>\n");
    page(business, &format!("Order {order_id}"), &out)
}

fn totals_amount(totals: &Value, kind: &str) -> Option<i64> {
    totals.as_array()?.iter().find(|total| total["type"] == kind)?["amount"].as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_paths_point_at_form_fields() {
        assert_eq!(field_of("$.buyer.email"), Some("email"));
        assert_eq!(field_of("$.buyer.phone_number"), Some("phone"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations"), Some("street"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations[0].postal_code"), Some("postal_code"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations[0]"), Some("country"));
        assert_eq!(field_of("$.fulfillment.methods[0].groups[0].selected_option_id"), Some("shipping_option"));
        assert_eq!(field_of("$.discounts.codes[1]"), Some("discount_codes"));
        assert_eq!(field_of("$.line_items[0]"), None);
        assert_eq!(field_of("$"), None);
    }

    #[test]
    fn codes_split_on_commas_and_spaces() {
        let form = CheckoutForm { discount_codes: " save10, SHIP  free,,".into(), ..CheckoutForm::default() };
        assert_eq!(form.codes(), vec!["save10", "SHIP", "free"]);
    }

    #[test]
    fn normalize_trims_and_bounds() {
        let mut form = CheckoutForm { country: " us ".into(), email: " a@b.co ".into(), ..CheckoutForm::default() };
        assert_eq!(form.normalize(), Ok(()));
        assert_eq!((form.country.as_str(), form.email.as_str()), ("US", "a@b.co"));
        let mut long = CheckoutForm { city: "x".repeat(MAX_FIELD + 1), ..CheckoutForm::default() };
        assert_eq!(long.normalize(), Err("City"));
    }
}
