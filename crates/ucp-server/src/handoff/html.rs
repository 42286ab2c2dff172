//! HTML building blocks: the escaper the templates use, money and dates, and the small pages
//! (not found, errors, policies). The pages are askama templates under `templates/handoff/`,
//! checked at compile time and auto-escaped; no scripts, no external assets.

use std::fmt;

use askama::Template;
use ucp_domain::money::currency_exponent;

/// The escaper of every `.html` template (see `templates/askama.toml`): the five characters as
/// named entities, safe in HTML content and in double- or single-quoted attribute values.
/// (askama's own writes numeric ones such as `&#34;`; these read better and match the pages
/// from before the templates.)
#[derive(Debug, Clone, Copy)]
pub(crate) struct Html;

impl askama::filters::Escaper for Html {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, text: &str) -> fmt::Result {
        let mut last = 0;
        for (index, byte) in text.bytes().enumerate() {
            let entity = match byte {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'\'' => "&#39;",
                _ => continue,
            };
            dest.write_str(&text[last..index])?;
            dest.write_str(entity)?;
            last = index + 1;
        }
        dest.write_str(&text[last..])
    }
}

/// Renders a page template. Our templates only display strings and numbers, so rendering
/// cannot fail short of a bug; then the buyer gets a plain message, not a panic.
pub(super) fn render(page: &impl Template) -> String {
    page.render().unwrap_or_else(|error| {
        tracing::error!(%error, "rendering a handoff page failed");
        "<!doctype html>\n<html lang=\"en\"><title>Error</title><main><h1>Something went wrong</h1></main></html>\n"
            .to_owned()
    })
}

/// An amount in minor units as a buyer reads it: `3000 USD` → `$30.00`, `-500 EUR` → `−€5.00`,
/// `1200 JPY` → `¥1,200`, unknown symbols → `30.00 CHF`.
pub(crate) fn money(amount: i64, currency: &str) -> String {
    let exponent = currency_exponent(currency);
    let divisor = 10u128.pow(exponent);
    let magnitude = u128::from(amount.unsigned_abs());
    let whole = (magnitude / divisor).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let number = if exponent > 0 {
        format!("{grouped}.{:0width$}", magnitude % divisor, width = exponent as usize)
    } else {
        grouped
    };
    let sign = if amount < 0 { "\u{2212}" } else { "" };
    let symbol = match currency {
        "USD" => "$",
        "EUR" => "\u{20ac}",
        "GBP" => "\u{a3}",
        "JPY" => "\u{a5}",
        "CAD" => "CA$",
        "AUD" => "A$",
        "NZD" => "NZ$",
        "INR" => "\u{20b9}",
        _ => "",
    };
    if symbol.is_empty() { format!("{sign}{number} {currency}") } else { format!("{sign}{symbol}{number}") }
}

/// `2026-04-08` style date of a Unix timestamp, in words: `April 8, 2026`.
pub(super) fn date(seconds: i64) -> String {
    let Ok(instant) = time::OffsetDateTime::from_unix_timestamp(seconds) else { return String::new() };
    format!("{} {}, {}", instant.month(), instant.day(), instant.year())
}

/// A heading and a card of paragraphs, with an optional hint: the small pages.
#[derive(Template)]
#[template(path = "handoff/simple.html", config = "templates/askama.toml")]
struct SimplePage<'a> {
    business: &'a str,
    heading: &'a str,
    paragraphs: Vec<String>,
    hint: Option<&'a str>,
}

/// The friendly page for unknown or expired ids.
pub(super) fn not_found(business: &str, what: &str) -> String {
    render(&SimplePage {
        business,
        heading: &format!("{what} not found"),
        paragraphs: vec![
            format!(
                "This link does not lead anywhere any more: the {} may have expired, or the address may be mistyped.",
                what.to_lowercase()
            ),
            "Go back to your assistant or the place you came from to start again.".into(),
        ],
        hint: None,
    })
}

/// A page for a failure that is ours, not the buyer's.
pub(super) fn error_page(business: &str, heading: &str, text: &str) -> String {
    render(&SimplePage { business, heading, paragraphs: vec![text.to_owned()], hint: None })
}

/// The placeholder policies by slug.
pub(super) fn policy(business: &str, slug: &str) -> Option<String> {
    let (title, paragraphs): (&str, [String; 2]) = match slug {
        "privacy" => (
            "Privacy policy",
            [
                format!(
                    "{business} uses the details you give at checkout (name, email, phone, shipping address) only \
                     to process, ship and tell you about your order."
                ),
                "Payment credentials are handled by the payment processor and never stored by this shop.".into(),
            ],
        ),
        "terms" => (
            "Terms of service",
            [
                format!("Orders placed with {business} are offers to buy, accepted when the order is confirmed."),
                "Prices include the taxes and shipping shown at checkout before you place the order.".into(),
            ],
        ),
        "refunds" => (
            "Refund policy",
            [
                format!("You can return unused items to {business} within 30 days of delivery for a full refund."),
                "Refunds go back to the original payment method within 10 business days of the return arriving.".into(),
            ],
        ),
        "shipping" => (
            "Shipping policy",
            [
                format!(
                    "{business} ships to the countries offered at checkout, with the options and prices shown there."
                ),
                "Delivery estimates are in business days from the order; you receive an email when the order ships."
                    .into(),
            ],
        ),
        _ => return None,
    };
    Some(render(&SimplePage {
        business,
        heading: title,
        paragraphs: paragraphs.into(),
        hint: Some("This is a placeholder policy; the business has not published its own text yet."),
    }))
}

#[cfg(test)]
mod tests {
    use askama::filters::Escaper as _;

    use super::*;

    fn escape(text: &str) -> String {
        let mut out = String::new();
        Html.write_escaped_str(&mut out, text).unwrap();
        out
    }

    #[test]
    fn escapes_the_five_characters() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("plain text \u{e9}"), "plain text \u{e9}");
    }

    #[test]
    fn formats_minor_units_with_the_currency() {
        assert_eq!(money(3000, "USD"), "$30.00");
        assert_eq!(money(3817, "USD"), "$38.17");
        assert_eq!(money(5, "USD"), "$0.05");
        assert_eq!(money(0, "USD"), "$0.00");
        assert_eq!(money(-599, "USD"), "\u{2212}$5.99");
        assert_eq!(money(123_456_789, "EUR"), "\u{20ac}1,234,567.89");
        assert_eq!(money(1200, "JPY"), "\u{a5}1,200");
        assert_eq!(money(1234, "KWD"), "1.234 KWD");
        assert_eq!(money(100_000, "CHF"), "1,000.00 CHF");
        assert_eq!(money(i64::MIN, "USD"), "\u{2212}$92,233,720,368,547,758.08");
    }

    #[test]
    fn dates_read_in_words() {
        assert_eq!(date(1_775_606_400), "April 8, 2026");
    }
}
