//! `/.well-known/ucp`: checklist items 1-14.

use serde_json::Value;

use crate::helpers::{VERSION, spawn_app, spawn_app_with};
use crate::schema;

async fn get_profile(app: &crate::helpers::TestApp) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Value) {
    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.json().await.unwrap())
}

// Checklist 1, 2, 3, 4, 5, 6.
#[tokio::test]
async fn profile_is_cacheable_json_that_validates_as_a_business_profile() {
    let app = spawn_app().await;
    let (status, headers, profile) = get_profile(&app).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
    let cache_control = headers["cache-control"].to_str().unwrap();
    assert!(cache_control.contains("public"), "{cache_control}");
    let max_age: u64 = cache_control.split("max-age=").nth(1).unwrap().trim().parse().unwrap();
    assert!(max_age >= 60);
    for forbidden in ["private", "no-store", "no-cache"] {
        assert!(!cache_control.contains(forbidden));
    }
    assert_eq!(profile["ucp"]["version"], VERSION);
    assert!(profile["ucp"]["services"].is_object());
    let sandbox = &profile["ucp"]["payment_handlers"]["dev.ucpd.sandbox"][0];
    assert_eq!(sandbox["id"], "sandbox", "the sandbox handler and its test tokens are discoverable");
    assert!(sandbox["config"]["test_tokens"]["tok_sandbox_3ds"].is_string());
    assert!(!profile.to_string().contains("\"draft\""));
    schema::assert_valid_profile(&profile);

    let etag = headers["etag"].to_str().unwrap().to_owned();
    let revalidated =
        app.http.get(format!("{}/.well-known/ucp", app.base_url)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(revalidated.status(), 304);
    assert_eq!(revalidated.headers()["etag"].to_str().unwrap(), etag);
    // Checklist 3: weak comparison, as RFC 9110 asks of If-None-Match: the tag weakened by a
    // compressing proxy, in a list, matches; another tag does not.
    let url = format!("{}/.well-known/ucp", app.base_url);
    for (sent, status) in
        [(format!("W/{etag}"), 304), (format!("\"other\", W/{etag}"), 304), ("W/\"other\"".into(), 200)]
    {
        let answer = app.http.get(&url).header("if-none-match", &sent).send().await.unwrap();
        assert_eq!(answer.status(), status, "{sent}");
    }
}

// Checklist 7, 8, 9, 10, 12: the mcp service entry and capability entries.
#[tokio::test]
async fn profile_advertises_the_mcp_endpoint_and_catalog_capabilities_from_configuration() {
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.public_url = Some("https://shop.example".parse().unwrap());
    })
    .await;
    let (_, _, profile) = get_profile(&app).await;
    let services = profile["ucp"]["services"]["dev.ucp.shopping"].as_array().unwrap();
    assert_eq!(services[0]["transport"], "mcp", "mcp first");
    assert_eq!(services[0]["endpoint"], "https://shop.example/ucp/mcp");
    assert_eq!(services[0]["version"], VERSION);
    let capabilities = profile["ucp"]["capabilities"].as_object().unwrap();
    for name in ["dev.ucp.shopping.catalog.search", "dev.ucp.shopping.catalog.lookup"] {
        let entry = &capabilities[name][0];
        assert_eq!(entry["version"], VERSION);
        assert!(entry["spec"].as_str().unwrap().starts_with("https://ucp.dev/"));
        assert!(entry["schema"].as_str().unwrap().starts_with("https://ucp.dev/"));
    }
    schema::assert_valid_profile(&profile);
}

// Checklist 11: every `extends` names a capability the profile offers, and the extension's own
// schema (the local copy of its `schema` URL) has a `$defs` entry for that parent.
#[tokio::test]
async fn every_extension_extends_an_offered_capability_its_schema_defines() {
    let app = spawn_app().await;
    let (_, _, profile) = get_profile(&app).await;
    let capabilities = profile["ucp"]["capabilities"].as_object().unwrap();
    let mut extensions = Vec::new();
    for (name, entries) in capabilities {
        for entry in entries.as_array().unwrap() {
            let parents: Vec<&str> = match &entry["extends"] {
                Value::Null => continue,
                Value::String(parent) => vec![parent.as_str()],
                Value::Array(parents) => parents.iter().map(|parent| parent.as_str().unwrap()).collect(),
                other => panic!("{name}: extends is {other}"),
            };
            extensions.push(name.as_str());
            for parent in &parents {
                assert!(
                    capabilities.contains_key(*parent),
                    "{name} extends {parent}, which the profile does not offer"
                );
            }
            let Some(schema) = schema::load(entry["schema"].as_str().unwrap()) else { continue };
            for parent in parents {
                assert!(schema["$defs"].get(parent).is_some(), "{name}'s schema has no $defs entry for {parent}");
            }
        }
    }
    for expected in ["dev.ucp.shopping.fulfillment", "dev.ucp.shopping.discount"] {
        assert!(extensions.contains(&expected), "{expected} in {extensions:?}");
    }
}

// Checklist 14: public keys only, under both names.
#[tokio::test]
async fn profile_publishes_a_public_signing_key_that_survives_restarts() {
    let app = spawn_app().await;
    let (_, _, profile) = get_profile(&app).await;
    let key = &profile["signing_keys"][0];
    assert_eq!(profile["keys"][0], *key);
    assert_eq!(key["kty"], "EC");
    assert_eq!(key["crv"], "P-256");
    assert_eq!(key["alg"], "ES256");
    assert!(key["x"].is_string() && key["y"].is_string() && key["kid"].is_string());
    assert!(key.get("d").is_none(), "no private member");
    let pem = std::fs::read_to_string(app.data_dir.path().join("signing-key.pem")).unwrap();
    assert!(pem.contains("PRIVATE KEY"));
    assert!(!profile.to_string().contains(pem.lines().nth(1).unwrap()));
}

// The seed's namespace alias: same capabilities under br.dev.bcp at 2026-07-14.
#[tokio::test]
async fn capabilities_can_be_advertised_under_an_alias_namespace() {
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.capabilities.aliases.push(ucp_server::config::NamespaceAlias {
            namespace: "br.dev.bcp".into(),
            version: "2026-07-14".into(),
            spec_base: "https://bcp.dev.br".into(),
            schema_base: "https://bcp.dev.br".into(),
        });
    })
    .await;
    let (_, _, profile) = get_profile(&app).await;
    let entry = &profile["ucp"]["capabilities"]["br.dev.bcp.shopping.catalog.search"][0];
    assert_eq!(entry["version"], "2026-07-14");
    assert_eq!(entry["schema"], "https://bcp.dev.br/2026-07-14/schemas/shopping/catalog_search.json");
    assert_eq!(profile["ucp"]["capabilities"]["dev.ucp.shopping.catalog.search"][0]["version"], VERSION);
    schema::assert_valid_profile(&profile);
    // overview.md §3: platforms leave out entries whose spec or schema another authority
    // publishes, so every entry we advertise, ours and the alias's, binds to its name.
    let mut entries = 0;
    for member in ["capabilities", "services"] {
        for (name, list) in profile["ucp"][member].as_object().unwrap() {
            for entry in list.as_array().unwrap() {
                for url in ["spec", "schema"] {
                    let url = entry[url].as_str().unwrap();
                    assert!(ucp_protocol::profile::authority::binds(name, url), "{name}: {url}");
                    entries += 1;
                }
            }
        }
    }
    assert!(entries > 20, "{entries}");

    // A BCP platform negotiates the alias names and version.
    let platform = crate::helpers::PlatformServer::start(serde_json::json!({
        "ucp": { "version": "2026-07-14", "capabilities": { "br.dev.bcp.shopping.catalog.search": [{ "version": "2026-07-14" }] } }
    }))
    .await;
    let body = app
        .tool(
            "search_catalog",
            serde_json::json!({ "meta": app.meta_for(&platform.profile_url()), "catalog": { "query": "wool" } }),
        )
        .await;
    assert_eq!(body["ucp"]["version"], "2026-07-14");
    assert_eq!(body["ucp"]["capabilities"]["br.dev.bcp.shopping.catalog.search"][0]["version"], "2026-07-14");
}

#[tokio::test]
async fn unknown_routes_get_a_json_404_and_foreign_hosts_a_403() {
    let app = spawn_app().await;
    let response = app.http.get(format!("{}/nope", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "not_found");
    let response =
        app.http.get(format!("{}/.well-known/ucp", app.base_url)).header("host", "evil.example").send().await.unwrap();
    assert_eq!(response.status(), 403);
}
