//! Unguessable buyer-page URLs (the domain's `PageLinks` port): `continue_url` and order
//! permalinks carry a per-resource token, and the pages show nothing without it.
//!
//! A token is base64url (no padding) of the first 16 bytes of HMAC-SHA256 over
//! `"<page>:<id>"` (`cart`, `checkout` or `order`), under a key derived from the data
//! directory's cursor secret (so replacing `cursor-secret` invalidates every page link too).
//! The URL shape is `{base_url}/checkout/{id}?t={token}`; the pages check the token in
//! constant time and answer exactly as for an unknown id when it is missing or wrong.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use ucp_domain::commerce::{Page, PageLinks};

/// How many bytes of the HMAC a token keeps (128 bits: not guessable, short in a URL).
const TOKEN_BYTES: usize = 16;

/// The context the page-token key is derived under (never used for anything else).
const KEY_CONTEXT: &[u8] = b"ucpd handoff page tokens v1";

/// Signs and checks the buyer pages' tokens.
#[derive(Clone)]
pub struct PageTokens {
    key: [u8; 32],
    /// The business's public base URL, without a trailing slash.
    base_url: String,
}

impl std::fmt::Debug for PageTokens {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PageTokens").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// The path of a page (ids are ours, but encode them anyway: they come from the URL).
pub fn path_of(page: Page, id: &str) -> String {
    /// Everything but RFC 3986's unreserved characters is escaped.
    const SEGMENT: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    let prefix = match page {
        Page::Cart => "cart",
        Page::Checkout => "checkout",
        Page::Order => "orders",
    };
    format!("/{prefix}/{}", percent_encoding::utf8_percent_encode(id, SEGMENT))
}

impl PageTokens {
    /// `secret` is the data directory's cursor secret; `base_url` has no trailing slash.
    pub fn new(secret: &[u8], base_url: &str) -> PageTokens {
        let mut derive = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
        derive.update(KEY_CONTEXT);
        PageTokens { key: derive.finalize().into_bytes().into(), base_url: base_url.trim_end_matches('/').to_owned() }
    }

    fn mac(&self, page: Page, id: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(page.as_str().as_bytes());
        mac.update(b":");
        mac.update(id.as_bytes());
        mac
    }

    /// The token of one page.
    pub fn token(&self, page: Page, id: &str) -> String {
        URL_SAFE_NO_PAD.encode(&self.mac(page, id).finalize().into_bytes()[..TOKEN_BYTES])
    }

    /// Whether `token` is the page's token (constant time in the tag's bytes).
    pub fn verify(&self, page: Page, id: &str, token: Option<&str>) -> bool {
        let Some(token) = token else { return false };
        // A token is 22 characters; refuse anything else before decoding.
        if token.len() != 22 {
            return false;
        }
        match URL_SAFE_NO_PAD.decode(token) {
            Ok(tag) if tag.len() == TOKEN_BYTES => self.mac(page, id).verify_truncated_left(&tag).is_ok(),
            _ => false,
        }
    }

    /// The page's path and query (`/checkout/{id}?t={token}`): form actions and redirects.
    pub fn href(&self, page: Page, id: &str) -> String {
        self.href_to(page, id, "")
    }

    /// A path under the page (`/checkout/{id}/3ds?t={token}`), with the page's token.
    pub fn href_to(&self, page: Page, id: &str, suffix: &str) -> String {
        format!("{}{suffix}?t={}", path_of(page, id), self.token(page, id))
    }
}

impl PageLinks for PageTokens {
    fn url(&self, page: Page, id: &str) -> String {
        format!("{}{}", self.base_url, self.href(page, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_bound_to_the_page_the_id_and_the_secret() {
        let tokens = PageTokens::new(b"secret", "https://shop.example/");
        let token = tokens.token(Page::Checkout, "chk_1");
        assert_eq!(token.len(), 22);
        assert!(tokens.verify(Page::Checkout, "chk_1", Some(&token)));
        assert!(!tokens.verify(Page::Checkout, "chk_2", Some(&token)));
        assert!(!tokens.verify(Page::Cart, "chk_1", Some(&token)));
        assert!(!tokens.verify(Page::Checkout, "chk_1", None));
        assert!(!tokens.verify(Page::Checkout, "chk_1", Some(&token[..21])));
        assert!(!tokens.verify(Page::Checkout, "chk_1", Some("é")));
        assert!(!PageTokens::new(b"other", "https://shop.example").verify(Page::Checkout, "chk_1", Some(&token)));
        assert_eq!(
            tokens.url(Page::Order, "ord_1"),
            format!("https://shop.example/orders/ord_1?t={}", tokens.token(Page::Order, "ord_1"))
        );
    }
}
