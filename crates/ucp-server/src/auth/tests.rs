use axum::http::{Extensions, HeaderMap, HeaderValue};
use sha2::{Digest, Sha256};

use super::*;
use crate::config::{MtlsSettings, Settings};
use crate::trust::profile_covers;

const PROFILE: &str = "https://platform.example/profile.json";

fn settings() -> Settings {
    let mut settings = Settings::for_tests(std::path::Path::new("unused"));
    settings.platforms = vec![PlatformSettings {
        id: "google".into(),
        profiles: vec!["https://www.google.com".into(), "https://ucp.goog/*".into()],
        api_keys: vec![hash_key_hex("google-key")],
        oauth: None,
        mtls: Some(MtlsSettings {
            fingerprints: vec![hex::encode(Sha256::digest(b"leaf certificate DER"))],
            ..MtlsSettings::default()
        }),
    }];
    settings
}

fn authenticator() -> Authenticator {
    Authenticator::new(&settings(), "https://shop.example").expect("builds")
}

// The signature layer's principal is taken as it is: authenticated for the profile its key
// came from, and only that one.
#[tokio::test]
async fn a_signature_principal_is_accepted() {
    let auth = authenticator();
    let mut extensions = Extensions::new();
    let signed =
        Principal { platform: PROFILE.into(), credential: Credential::Signature, profiles: vec![PROFILE.into()] };
    extensions.insert(signed.clone());
    let principal = auth.establish(&HeaderMap::new(), &extensions).await.expect("accepted").expect("a principal");
    assert_eq!(principal, signed);
    assert!(principal.may_claim(PROFILE));
    assert!(!principal.may_claim("https://www.google.com"));
}

// A client certificate maps to its platform by the leaf's fingerprint; an unmapped one is no
// credential at all.
#[tokio::test]
async fn client_certificates_map_by_fingerprint() {
    let auth = authenticator();
    let mut extensions = Extensions::new();
    extensions.insert(ClientCertificate { chain: vec![b"leaf certificate DER".to_vec(), b"ca".to_vec()] });
    let principal = auth.establish(&HeaderMap::new(), &extensions).await.unwrap().expect("mapped");
    assert_eq!((principal.platform.as_str(), principal.credential), ("google", Credential::ClientCertificate));
    let mut extensions = Extensions::new();
    extensions.insert(ClientCertificate { chain: vec![b"another leaf".to_vec()] });
    assert_eq!(auth.establish(&HeaderMap::new(), &extensions).await.unwrap(), None);
}

// Google's aliases: `https://www.google.com`, any versioned `https://ucp.goog/…` profile, and
// the alias target configured under [profiles.aliases].
#[tokio::test]
async fn configured_profiles_cover_aliases_and_wildcards() {
    let auth = authenticator();
    let mut headers = HeaderMap::new();
    headers.insert("x-api-key", HeaderValue::from_static(" google-key "));
    let principal = auth.establish(&headers, &Extensions::new()).await.unwrap().expect("the key is known");
    for claimed in [
        "https://www.google.com",
        "https://ucp.goog/profiles/2026-04-08/ucp.json",
        "https://ucp.goog/profiles/next.json",
    ] {
        assert!(principal.may_claim(claimed), "{claimed}");
    }
    for stranger in
        ["https://ucp.goog.evil.example/p.json", "https://ucp.goog", "https://www.google.com.evil/", PROFILE]
    {
        assert!(!principal.may_claim(stranger), "{stranger}");
    }
    assert!(!profile_covers("https://*", "https://anything.example/"), "a wildcard needs a host");
}

#[test]
fn operations_need_credentials_only_once_platforms_exist() {
    let auth = authenticator();
    assert!(auth.requires(Operation::SearchCatalog) && auth.requires(Operation::CompleteCheckout));
    let mut open = settings();
    open.auth.public_operations = vec!["search_catalog".into()];
    let auth = Authenticator::new(&open, "https://shop.example").unwrap();
    assert!(!auth.requires(Operation::SearchCatalog) && auth.requires(Operation::GetProduct));
    let demo = Authenticator::new(&Settings::for_tests(std::path::Path::new("unused")), "http://x").unwrap();
    assert!(Operation::ALL.iter().all(|operation| !demo.requires(*operation)));
    open.auth.public_operations = vec!["steal_everything".into()];
    assert!(Authenticator::new(&open, "https://shop.example").is_err());
}

#[test]
fn stored_keys_must_be_hashes() {
    let mut settings = settings();
    settings.platforms[0].api_keys = vec!["google-key".into()];
    let error = settings.validate().unwrap_err().0;
    assert!(error.contains("not a SHA-256 hash"), "{error}");
    assert_eq!(
        hash_key_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "the hash `printf %s abc | sha256sum` prints"
    );
}
