//! HTML building blocks: escaping, money, the page frame and the small pages (not found,
//! errors, policies). Plain strings: no templates, no scripts, no external assets.

use std::fmt::Write as _;

use ucp_domain::money::currency_exponent;

/// Escapes text for HTML content and double- or single-quoted attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// An amount in minor units as a buyer reads it: `3000 USD` → `$30.00`, `-500 EUR` → `−€5.00`,
/// `1200 JPY` → `¥1,200`, unknown symbols → `30.00 CHF`.
pub(super) fn money(amount: i64, currency: &str) -> String {
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
    if symbol.is_empty() { format!("{sign}{number} {}", escape(currency)) } else { format!("{sign}{symbol}{number}") }
}

/// `2026-04-08` style date of a Unix timestamp, in words: `April 8, 2026`.
pub(super) fn date(seconds: i64) -> String {
    let Ok(instant) = time::OffsetDateTime::from_unix_timestamp(seconds) else { return String::new() };
    format!("{} {}, {}", instant.month(), instant.day(), instant.year())
}

const STYLE: &str = r#"
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1c1917;background:#f5f5f4}
.site-header{background:#1f2937;color:#fff;padding:.85rem 1.5rem}
.site-header p{margin:0;font-weight:700;font-size:1.1rem;max-width:1100px;margin:0 auto}
main{display:block;max-width:1100px;margin:0 auto;padding:1.5rem}
h1{font-size:1.8rem;line-height:1.25;margin:.25rem 0 1.25rem}
h2{font-size:1.25rem;margin:0 0 .75rem}
h3{font-size:1.05rem;margin:1rem 0 .5rem}
p{margin:.5rem 0}
a{color:#1d4ed8}
.layout{display:grid;gap:1.5rem;grid-template-columns:minmax(0,1fr);align-items:start}
@media (min-width:900px){.layout{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}.layout .summary{order:2}}
.card{background:#fff;border:1px solid #d6d3d1;border-radius:10px;padding:1.25rem 1.5rem;margin:0 0 1.5rem}
table{width:100%;border-collapse:collapse}
caption{text-align:left;font-weight:700;font-size:1.25rem;padding:0 0 .5rem}
th,td{padding:.5rem .35rem;text-align:left;border-bottom:1px solid #e7e5e4;vertical-align:top}
thead th{font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;color:#44403c}
.num{text-align:right;white-space:nowrap}
tfoot th{font-weight:400}
tfoot .grand th,tfoot .grand td{font-weight:700;font-size:1.15rem;border-bottom:0;padding-top:.75rem}
.discounts{list-style:none;padding:0;margin:.75rem 0 0;color:#15803d;font-size:.95rem}
label{display:block;font-weight:600;margin:.85rem 0 .3rem}
input[type=text],input[type=email],input[type=tel]{width:100%;padding:.55rem .65rem;border:1px solid #57534e;border-radius:6px;font:inherit;color:inherit;background:#fff}
input[aria-invalid=true]{border:2px solid #b91c1c}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.row{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr))}
fieldset{border:1px solid #d6d3d1;border-radius:8px;margin:1.25rem 0;padding:.5rem 1.25rem 1.25rem}
legend{font-weight:700;font-size:1.1rem;padding:0 .35rem}
.option{display:flex;gap:.6rem;align-items:flex-start;margin:.6rem 0}
.option input{margin-top:.35rem;width:1.1rem;height:1.1rem}
.option label{display:inline;font-weight:400;margin:0}
.hint{color:#44403c;font-size:.92rem;margin:.3rem 0 0}
.field-error{color:#b91c1c;font-weight:600;font-size:.92rem;margin:.3rem 0 0}
button{font:inherit;font-weight:700;padding:.7rem 1.4rem;border-radius:8px;border:2px solid #1d4ed8;cursor:pointer;background:#1d4ed8;color:#fff}
button:hover{background:#1e40af;border-color:#1e40af}
button.secondary{background:#fff;color:#1d4ed8}
button.secondary:hover{background:#eff6ff}
.alert{border:1px solid #fca5a5;border-left:6px solid #b91c1c;background:#fef2f2;padding:.85rem 1.25rem;border-radius:8px;margin:0 0 1.5rem}
.alert h2{font-size:1.1rem;color:#7f1d1d}
.alert ul{margin:.25rem 0 0;padding-left:1.25rem}
.alert .warning{color:#1c1917}
.notice{border:1px solid #86efac;border-left:6px solid #15803d;background:#f0fdf4;padding:.85rem 1.25rem;border-radius:8px;margin:0 0 1.5rem}
.verify{border:2px solid #b45309;background:#fffbeb}
.status{display:inline-block;font-weight:700;background:#e0e7ff;color:#1e3a8a;border-radius:999px;padding:.1rem .75rem}
address{font-style:normal}
.site-footer{max-width:1100px;margin:0 auto;padding:0 1.5rem 2rem;color:#44403c;font-size:.92rem}
.site-footer ul{list-style:none;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;padding:0;margin:0}
"#;

/// A whole page: `lang`, title, the business name as banner, `<main>` and the policy links.
pub(super) fn page(business: &str, title: &str, main: &str) -> String {
    let business = escape(business);
    let mut out = String::with_capacity(main.len() + STYLE.len() + 1024);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"robots\" content=\"noindex\">\n<title>{title} \u{2013} {business}</title>\n<style>{STYLE}</style>\n</head>\n\
         <body>\n<header class=\"site-header\"><p>{business}</p></header>\n<main id=\"main\">\n{main}\n</main>\n\
         <footer class=\"site-footer\"><nav aria-label=\"Store policies\"><ul>\
         <li><a href=\"/policies/privacy\">Privacy policy</a></li>\
         <li><a href=\"/policies/terms\">Terms of service</a></li>\
         <li><a href=\"/policies/refunds\">Refund policy</a></li>\
         <li><a href=\"/policies/shipping\">Shipping policy</a></li>\
         </ul></nav></footer>\n</body>\n</html>\n",
        title = escape(title),
    );
    out
}

/// The friendly page for unknown or expired ids.
pub(super) fn not_found(business: &str, what: &str) -> String {
    let main = format!(
        "<h1>{} not found</h1>\n<div class=\"card\"><p>This link does not lead anywhere any more: the {} may have \
         expired, or the address may be mistyped.</p><p>Go back to your assistant or the place you came from to \
         start again.</p></div>",
        escape(what),
        escape(&what.to_lowercase()),
    );
    page(business, &format!("{what} not found"), &main)
}

/// A page for a failure that is ours, not the buyer's.
pub(super) fn error_page(business: &str, heading: &str, text: &str) -> String {
    let main = format!("<h1>{}</h1>\n<div class=\"card\"><p>{}</p></div>", escape(heading), escape(text));
    page(business, heading, &main)
}

/// The placeholder policies: `(title, paragraphs)` by slug.
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
    let main = format!(
        "<h1>{}</h1>\n<div class=\"card\"><p>{}</p><p>{}</p><p class=\"hint\">This is a placeholder policy; the \
         business has not published its own text yet.</p></div>",
        escape(title),
        escape(&paragraphs[0]),
        escape(&paragraphs[1]),
    );
    Some(page(business, title, &main))
}

#[cfg(test)]
mod tests {
    use super::*;

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
