//! Namespace authority binding (spec/overview.md §3): a capability's name says who governs it
//! (`dev.ucp.shopping.checkout` is ucp.dev's), so the schema a profile entry points at must be
//! published by that authority. The draft states the rule on the schema's host: its labels,
//! reversed, equal the name or a label-aligned prefix of it, and `spec` may be served from any
//! host. `2026-04-08` asks platforms to check the origin of a business's `spec` and `schema`;
//! the business-side check of platform profiles is the draft's, so it binds `schema` only.

/// Whether `url` is an https URL whose host binds to `name`: `https://ucp.dev/…` binds
/// `dev.ucp.shopping.checkout` and `dev.ucp`, not `dev.ucpx.shopping`. A one-label host, an
/// IP address, another scheme, userinfo or an unparsable URL binds nothing.
pub fn binds(name: &str, url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    if url.scheme() != "https" || !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    let Some(url::Host::Domain(host)) = url.host() else {
        return false;
    };
    // The draft's algorithm strips one trailing dot (a fully qualified name).
    let host = host.strip_suffix('.').unwrap_or(host);
    // A registrable name at least: one label (`https://dev/`) governs no namespace.
    let labels: Vec<&str> = host.split('.').rev().collect();
    if labels.len() < 2 || labels.contains(&"") {
        return false;
    }
    let authority = labels.join(".");
    name.strip_prefix(authority.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::binds;
    use crate::profile::PlatformProfile;

    // overview.md §3: an entry whose schema another authority publishes is left out and named
    // once; a capability left with no entry is not declared; the webhook of a left-out entry is
    // not taken. `spec` may be on any host, and a null schema counts as a missing one.
    #[test]
    fn a_platform_profile_entry_whose_schema_fails_binding_is_left_out() {
        let body = r#"{"ucp":{"version":"2026-04-08","services":{},"capabilities":{
            "dev.ucp.shopping.checkout":[
                {"version":"2026-01-23","spec":"https://ucp.dev/s","schema":"https://evil.example/checkout.json"},
                {"version":"2026-04-08","spec":"https://ucp.dev/s","schema":"https://ucp.dev/checkout.json"}],
            "dev.ucp.shopping.order":[
                {"version":"2026-04-08","spec":"https://ucp.dev/s","schema":"https://ucp.dev.evil.example/o.json","config":{"webhook_url":"https://evil.example/hook"}}],
            "dev.ucp.shopping.cart":[
                {"version":"2026-04-08","spec":"https://docs.example/cart","schema":"https://ucp.dev/cart.json"}],
            "dev.ucp.shopping.catalog.search":[{"version":"2026-04-08","spec":"https://ucp.dev/s","schema":7}],
            "dev.ucp.shopping.catalog.lookup":[{"version":"2026-04-08","spec":null,"schema":null}],
            "dev.ucp.shopping.fulfillment":[{"version":"2026-04-08","spec":"http://ucp.dev/f","schema":"https://ucp.dev/f.json"}],
            "com.example.loyalty":[{"version":"2026-04-08","spec":"https://example.com/l","schema":"https://example.com/l.json"}]
        }}}"#;
        let profile = PlatformProfile::parse(body.as_bytes()).unwrap();
        for kept in [
            "dev.ucp.shopping.checkout",
            "dev.ucp.shopping.cart",
            "dev.ucp.shopping.catalog.lookup",
            "com.example.loyalty",
        ] {
            assert_eq!(profile.capabilities[kept], ["2026-04-08"], "{kept}");
        }
        for gone in ["dev.ucp.shopping.order", "dev.ucp.shopping.catalog.search"] {
            assert!(!profile.capabilities.contains_key(gone), "{gone}");
        }
        assert_eq!(
            profile.unbound_capabilities,
            ["dev.ucp.shopping.catalog.search", "dev.ucp.shopping.checkout", "dev.ucp.shopping.order"]
        );
        assert_eq!(
            profile.incomplete_capabilities,
            ["dev.ucp.shopping.catalog.lookup", "dev.ucp.shopping.fulfillment"],
            "a null schema, a spec not on https"
        );
        assert!(profile.webhook_urls.is_empty(), "{:?}", profile.webhook_urls);
        assert_eq!(profile.missing_members, ["payment_handlers"]);
    }

    #[test]
    fn the_reversed_host_must_be_a_label_aligned_prefix_of_the_name() {
        let name = "dev.ucp.shopping.checkout";
        for url in [
            "https://ucp.dev/2026-04-08/schemas/shopping/checkout.json",
            "https://UCP.dev/specification/checkout",
            "https://ucp.dev:8443/x",
            "https://shopping.ucp.dev/x",
            "https://checkout.shopping.ucp.dev/x",
            "https://ucp.dev./x",
        ] {
            assert!(binds(name, url), "{url}");
        }
        assert!(binds("dev.ucp", "https://ucp.dev"), "the namespace itself");
        for url in [
            "http://ucp.dev/x",
            "https://evil.example/x",
            "https://ucp.dev.evil.example/x",
            "https://xucp.dev/x",
            "https://ucpx.dev/x",
            "https://www.ucp.dev/x",
            "https://more.checkout.shopping.ucp.dev/x",
            "https://dev/x",
            "https://ucp.dev../x",
            "https://user@ucp.dev/x",
            "https://1.2.3.4/x",
            "https://[::1]/x",
            "ucp.dev/x",
            "",
        ] {
            assert!(!binds(name, url), "{url}");
        }
        assert!(!binds("dev.ucpx.shopping", "https://ucp.dev/x"));
        assert!(binds("br.dev.bcp.shopping.catalog.search", "https://bcp.dev.br/2026-07-14/schemas/x.json"));
    }
}
