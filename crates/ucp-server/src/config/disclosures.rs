//! `[[disclosures]]`: notices the merchant must keep visible beside the products they concern
//! (checkout.md §4: a Proposition 65 warning, allergens, an energy label). Each is sent as a
//! `warning` with `presentation: "disclosure"` on every catalog answer, cart and checkout that
//! shows one of its products (`ucp_domain::disclosure`).
//!
//! ```toml
//! [[disclosures]]
//! code = "prop65"                       # the warning's code: prop65, allergens, energy_label, or your own
//! content = "WARNING: This product can expose you to lead, which is known to the State of California to cause cancer."
//! content_type = "plain"                # or "markdown"
//! image_url = "https://shop.example/img/prop65.svg"   # optional: a required visual element
//! url = "https://www.p65warnings.ca.gov/"             # optional: where to read more
//! products = ["mug"]                    # product ids
//! categories = ["Home & Garden > Kitchen & Dining"]   # and everything below them
//! ```

use serde::{Deserialize, Serialize};
use ucp_domain::checkout::WarningDisplay;
use ucp_domain::disclosure::{Disclosure, Disclosures};

use super::{ConfigError, values};

/// Most disclosures a merchant declares.
const MAX_DISCLOSURES: usize = 256;
/// Longest text a disclosure displays, in bytes (a Proposition 65 warning is about 150).
const MAX_CONTENT_BYTES: usize = 2048;
/// Longest code, in bytes.
const MAX_CODE_BYTES: usize = 64;
/// Most product ids, and most categories, one disclosure names.
const MAX_NAMES: usize = 10_000;
/// Longest `image_url` or `url`, in bytes.
const MAX_URL_BYTES: usize = 2048;

/// A disclosure's text format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DisclosureFormat {
    #[default]
    Plain,
    Markdown,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DisclosureSettings {
    /// The warning's `code`: lower-case letters, digits and `_`.
    pub code: String,
    /// The text the platform must display.
    #[serde(deserialize_with = "values::text")]
    pub content: String,
    #[serde(default)]
    pub content_type: DisclosureFormat,
    /// An absolute https URL of a required visual element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    /// An absolute https URL to read more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Product ids it concerns (a TOML array: an id, like a category, may hold a comma).
    #[serde(default)]
    pub products: Vec<String>,
    /// Categories it concerns, each with everything below it (`A > B` covers `A > B > C`).
    #[serde(default)]
    pub categories: Vec<String>,
}

impl DisclosureSettings {
    fn validate(&self, at: usize) -> Result<(), ConfigError> {
        let fail = |reason: String| Err(ConfigError(format!("disclosures[{at}]: {reason}")));
        let code_ok = !self.code.is_empty()
            && self.code.len() <= MAX_CODE_BYTES
            && self.code.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_');
        if !code_ok {
            return fail(format!(
                "code {:?} must be 1 to {MAX_CODE_BYTES} lower-case letters, digits or '_' (prop65, allergens, energy_label)",
                self.code
            ));
        }
        if self.content.trim().is_empty() || self.content.len() > MAX_CONTENT_BYTES {
            return fail(format!("content must be text of 1 to {MAX_CONTENT_BYTES} bytes"));
        }
        if self.content.chars().any(|ch| ch.is_control() && ch != '\n' && ch != '\t') {
            return fail("content holds a control character (only line breaks and tabs are text)".into());
        }
        for (key, url) in [("image_url", &self.image_url), ("url", &self.url)] {
            if let Some(url) = url {
                let parsed =
                    values::web_url(url).map_err(|reason| ConfigError(format!("disclosures[{at}].{key}: {reason}")))?;
                if parsed.scheme() != "https" {
                    return fail(format!("{key} {url:?} must be an https URL (platforms show it to buyers)"));
                }
                if parsed.as_str().len() > MAX_URL_BYTES {
                    return fail(format!("{key} is longer than {MAX_URL_BYTES} bytes"));
                }
            }
        }
        if self.products.len() > MAX_NAMES || self.categories.len() > MAX_NAMES {
            return fail(format!("at most {MAX_NAMES} products and {MAX_NAMES} categories"));
        }
        let empty_category = |category: &String| category.split('>').all(|part| part.trim().is_empty());
        if self.products.iter().any(|id| id.trim().is_empty()) || self.categories.iter().any(empty_category) {
            return fail("an empty product id or category".into());
        }
        if self.products.iter().chain(&self.categories).next().is_none() {
            return fail("name the products it concerns: products (ids), categories, or both".into());
        }
        Ok(())
    }
}

pub(super) fn validate(disclosures: &[DisclosureSettings]) -> Result<(), ConfigError> {
    if disclosures.len() > MAX_DISCLOSURES {
        return Err(ConfigError(format!("disclosures: at most {MAX_DISCLOSURES} are allowed")));
    }
    disclosures.iter().enumerate().try_for_each(|(at, disclosure)| disclosure.validate(at))
}

/// The domain's index of the disclosures.
pub(super) fn disclosures(settings: &[DisclosureSettings]) -> Disclosures {
    Disclosures::new(settings.iter().map(|disclosure| Disclosure {
        code: disclosure.code.clone(),
        content: disclosure.content.clone(),
        display: WarningDisplay {
            markdown: disclosure.content_type == DisclosureFormat::Markdown,
            image_url: disclosure.image_url.as_deref().map(written),
            url: disclosure.url.as_deref().map(written),
        },
        product_ids: disclosure.products.iter().map(|id| id.trim().to_owned()).collect(),
        categories: disclosure.categories.clone(),
    }))
}

/// A checked URL as it is sent: its serialization (trimmed, spaces and the like encoded), so
/// every message carries a valid URI whatever the file's spelling.
fn written(url: &str) -> String {
    values::web_url(url).map_or_else(|_| url.to_owned(), |parsed| parsed.to_string())
}
