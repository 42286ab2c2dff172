//! The console's browser login: a session cookie carrying its own expiry under an HMAC, and a
//! per-session CSRF token for every form. Nothing is stored server-side: a cookie is valid
//! until it expires, the cursor secret the key is derived from is replaced, or the admin keys
//! change (the key is derived from their hashes too).
//!
//! Cookie value: `<expiry>.<nonce>.<tag>`, `tag` = base64url(HMAC-SHA256(key,
//! "session:<expiry>.<nonce>")); the CSRF token is base64url(HMAC-SHA256(key,
//! "csrf:<cookie value>")) truncated to 128 bits. `HttpOnly; SameSite=Strict; Path=/admin`,
//! and `Secure` when the public URL is https.

use axum::http::{HeaderMap, header};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The cookie's name.
pub const COOKIE: &str = "ucpd_console";
/// How long a login lasts.
pub const SESSION_SECS: i64 = 8 * 3600;
/// The longest cookie value we look at.
const MAX_COOKIE_CHARS: usize = 200;
/// The context the console key is derived under (never used for anything else).
const KEY_CONTEXT: &[u8] = b"ucpd console sessions v1";

/// Signs and checks console sessions and their form tokens.
#[derive(Clone)]
pub struct ConsoleKeys {
    key: [u8; 32],
    secure: bool,
}

impl std::fmt::Debug for ConsoleKeys {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ConsoleKeys").field("secure", &self.secure).finish_non_exhaustive()
    }
}

impl ConsoleKeys {
    /// `secret` is the data directory's cursor secret; `admin_keys` what the sessions are
    /// bound to (`AdminKeys::fingerprint`); `secure` sets the cookie's `Secure` flag (the
    /// public URL is https).
    pub fn new(secret: &[u8], admin_keys: &[u8], secure: bool) -> ConsoleKeys {
        let mut derive = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
        derive.update(KEY_CONTEXT);
        derive.update(admin_keys);
        ConsoleKeys { key: derive.finalize().into_bytes().into(), secure }
    }

    fn mac(&self, purpose: &str, text: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.update(b":");
        mac.update(text.as_bytes());
        mac
    }

    /// A new session valid until `now + SESSION_SECS`.
    pub fn issue(&self, now: i64) -> String {
        let body = format!("{}.{}", now.saturating_add(SESSION_SECS), hex::encode(rand::random::<[u8; 12]>()));
        let tag = URL_SAFE_NO_PAD.encode(self.mac("session", &body).finalize().into_bytes());
        format!("{body}.{tag}")
    }

    /// Whether `value` is a session we issued that has not expired (tag checked in constant
    /// time).
    pub fn verify(&self, value: &str, now: i64) -> bool {
        if value.len() > MAX_COOKIE_CHARS {
            return false;
        }
        let Some((body, tag)) = value.rsplit_once('.') else { return false };
        let Some(expiry) = body.split_once('.').and_then(|(expiry, _)| expiry.parse::<i64>().ok()) else {
            return false;
        };
        let Ok(tag) = URL_SAFE_NO_PAD.decode(tag) else { return false };
        self.mac("session", body).verify_slice(&tag).is_ok() && now < expiry
    }

    /// The CSRF token of a session's forms.
    pub fn csrf(&self, session: &str) -> String {
        URL_SAFE_NO_PAD.encode(&self.mac("csrf", session).finalize().into_bytes()[..16])
    }

    /// Whether `token` is the session's CSRF token (constant time).
    pub fn verify_csrf(&self, session: &str, token: &str) -> bool {
        match URL_SAFE_NO_PAD.decode(token) {
            Ok(tag) if tag.len() == 16 => self.mac("csrf", session).verify_truncated_left(&tag).is_ok(),
            _ => false,
        }
    }

    fn flags(&self) -> &'static str {
        if self.secure { "; HttpOnly; SameSite=Strict; Secure" } else { "; HttpOnly; SameSite=Strict" }
    }

    /// The `Set-Cookie` value that logs a browser in.
    pub fn set_cookie(&self, value: &str) -> String {
        format!("{COOKIE}={value}; Path=/admin; Max-Age={SESSION_SECS}{}", self.flags())
    }

    /// The `Set-Cookie` value that logs a browser out.
    pub fn clear_cookie(&self) -> String {
        format!("{COOKIE}=; Path=/admin; Max-Age=0{}", self.flags())
    }
}

/// The console cookie's value on a request, if it sent one.
pub fn cookie_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_and_are_bound_to_the_key() {
        let keys = ConsoleKeys::new(b"secret", b"keys", false);
        let session = keys.issue(1_000);
        assert!(keys.verify(&session, 1_001));
        assert!(!keys.verify(&session, 1_000 + SESSION_SECS));
        assert!(!ConsoleKeys::new(b"other", b"keys", false).verify(&session, 1_001));
        assert!(!ConsoleKeys::new(b"secret", b"new keys", false).verify(&session, 1_001), "the admin keys changed");
        let forged = session.replacen(&(1_000 + SESSION_SECS).to_string(), &(9_000_000_000i64).to_string(), 1);
        assert!(!keys.verify(&forged, 1_001), "the expiry is under the tag");
        assert!(!keys.verify("", 0) && !keys.verify("1.2.3", 0) && !keys.verify("x.y", 0));
        let csrf = keys.csrf(&session);
        assert!(keys.verify_csrf(&session, &csrf));
        assert!(!keys.verify_csrf(&keys.issue(1_000), &csrf), "a token is bound to its session");
        assert!(!keys.verify_csrf(&session, "nope"));
        assert!(ConsoleKeys::new(b"s", b"keys", true).set_cookie("v").ends_with("; Secure"));
    }
}
