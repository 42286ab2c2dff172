//! Namespace authority binding (spec/overview.md §3): a capability's name says who governs it
//! (`dev.ucp.shopping.checkout` is ucp.dev's), so the documents a profile entry points at must
//! be published by that authority. The draft states the rule on the schema host: its labels,
//! reversed, equal the name or a label-aligned prefix of it. `2026-04-08` says the origin of
//! `spec` and `schema` must match the namespace; the host rule is how we read it for both.

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

    // overview.md §3: an entry published by another authority is left out and named once; a
    // capability left with no entry is not declared; the webhook of a left-out entry is not
    // taken. Up to 2026-04-08 `spec` binds too; after it only `schema` does.
    #[test]
    fn a_platform_profile_entry_that_fails_binding_is_left_out() {
        let profile = |version: &str| {
            format!(
                r#"{{"ucp":{{"version":"{version}","services":{{}},"capabilities":{{
                "dev.ucp.shopping.checkout":[
                    {{"version":"2026-01-23","spec":"https://ucp.dev/s","schema":"https://evil.example/checkout.json"}},
                    {{"version":"2026-04-08","spec":"https://ucp.dev/s","schema":"https://ucp.dev/checkout.json"}}],
                "dev.ucp.shopping.order":[
                    {{"version":"2026-04-08","spec":"https://ucp.dev/s","schema":"https://ucp.dev.evil.example/o.json","config":{{"webhook_url":"https://evil.example/hook"}}}}],
                "dev.ucp.shopping.cart":[
                    {{"version":"2026-04-08","spec":"https://docs.example/cart","schema":"https://ucp.dev/cart.json"}}],
                "dev.ucp.shopping.catalog.search":[{{"version":"2026-04-08","schema":7}}],
                "com.example.loyalty":[{{"version":"2026-04-08","spec":"https://example.com/l","schema":"https://example.com/l.json"}}]
            }}}}}}"#
            )
        };
        let released = PlatformProfile::parse(profile("2026-04-08").as_bytes()).unwrap();
        assert_eq!(released.capabilities["dev.ucp.shopping.checkout"], ["2026-04-08"]);
        assert_eq!(released.capabilities["com.example.loyalty"], ["2026-04-08"]);
        for gone in ["dev.ucp.shopping.order", "dev.ucp.shopping.cart", "dev.ucp.shopping.catalog.search"] {
            assert!(!released.capabilities.contains_key(gone), "{gone}");
        }
        assert_eq!(
            released.unbound_capabilities,
            [
                "dev.ucp.shopping.cart",
                "dev.ucp.shopping.catalog.search",
                "dev.ucp.shopping.checkout",
                "dev.ucp.shopping.order"
            ]
        );
        assert!(released.webhook_urls.is_empty(), "{:?}", released.webhook_urls);
        assert_eq!(released.missing_members, ["payment_handlers"]);

        let draft = PlatformProfile::parse(profile("2026-08-25").as_bytes()).unwrap();
        assert_eq!(draft.capabilities["dev.ucp.shopping.cart"], ["2026-04-08"], "the draft binds schema only");
        assert!(!draft.unbound_capabilities.contains(&"dev.ucp.shopping.cart".to_owned()));
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
            "https://ucp.dev./x",
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
