//! Validates what the server emits against the official UCP schemas found under
//! `UCP_SPEC_DIR` (version 2026-04-08). Without the variable these checks say so and skip.

use std::path::PathBuf;
use std::sync::OnceLock;

use jsonschema::{Retrieve, Uri};
use serde_json::{Value, json};

const SCHEMA_PREFIXES: &[&str] =
    &["https://ucp.dev/schemas/schemas/", "https://ucp.dev/schemas/", "https://ucp.dev/2026-04-08/schemas/"];

/// Maps `https://ucp.dev/schemas/...` to files of the released version under UCP_SPEC_DIR.
struct SpecDirRetriever {
    root: PathBuf,
}

impl Retrieve for SpecDirRetriever {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let text = uri.as_str();
        let relative = SCHEMA_PREFIXES
            .iter()
            .find_map(|prefix| text.strip_prefix(prefix))
            .ok_or_else(|| format!("no local copy for {text}"))?;
        let relative = relative.split('#').next().unwrap_or(relative);
        let path = self.root.join(relative);
        let contents = std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(serde_json::from_str(&contents)?)
    }
}

fn spec_root() -> Option<PathBuf> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let Some(dir) = std::env::var_os("UCP_SPEC_DIR") else {
            eprintln!("UCP_SPEC_DIR is not set: skipping validation against the official UCP schemas");
            return None;
        };
        let root = PathBuf::from(dir).join("2026-04-08/source/schemas");
        assert!(root.is_dir(), "UCP_SPEC_DIR is set but {} does not exist", root.display());
        Some(root)
    })
    .clone()
}

/// The local copy of the schema at a `https://ucp.dev/schemas/...` URL, or `None` when
/// UCP_SPEC_DIR is not set (the caller skips).
pub fn load(url: &str) -> Option<Value> {
    let root = spec_root()?;
    let uri = url.parse::<Uri<String>>().unwrap_or_else(|error| panic!("{url}: {error}"));
    Some(SpecDirRetriever { root }.retrieve(&uri).unwrap_or_else(|error| panic!("{url}: {error}")))
}

/// Asserts `instance` is valid against `reference` (e.g. `shopping/catalog_search.json#/$defs/search_response`).
/// Skips (returns) when UCP_SPEC_DIR is not set.
pub fn assert_valid(reference: &str, instance: &Value) {
    let Some(root) = spec_root() else { return };
    let schema = json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": format!("https://ucp.dev/schemas/{reference}") });
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_retriever(SpecDirRetriever { root })
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|error| panic!("cannot build a validator for {reference}: {error}"));
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|error| format!("{} at {}", error, error.instance_path())).collect();
    assert!(errors.is_empty(), "{reference} rejects the response:\n{}\n{instance:#}", errors.join("\n"));
}

/// The business profile schema lives in discovery/, one level above schemas/.
pub fn assert_valid_profile(instance: &Value) {
    let Some(root) = spec_root() else { return };
    let discovery = root.parent().unwrap().join("discovery/profile_schema.json");
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(&discovery).unwrap()).unwrap();
    schema["$ref"] = json!("#/$defs/business_profile");
    schema.as_object_mut().unwrap().remove("anyOf");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_retriever(SpecDirRetriever { root })
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|error| panic!("cannot build the profile validator: {error}"));
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|error| format!("{} at {}", error, error.instance_path())).collect();
    assert!(errors.is_empty(), "business_profile rejects the profile:\n{}\n{instance:#}", errors.join("\n"));
}

pub fn search_response(instance: &Value) {
    assert_valid("shopping/catalog_search.json#/$defs/search_response", instance);
}

pub fn lookup_response(instance: &Value) {
    assert_valid("shopping/catalog_lookup.json#/$defs/lookup_response", instance);
}

pub fn get_product_response(instance: &Value) {
    assert_valid("shopping/catalog_lookup.json#/$defs/get_product_response", instance);
}

pub fn error_response(instance: &Value) {
    assert_valid("shopping/types/error_response.json", instance);
}

/// A self-check: the validator does reject what the schema forbids, so a green run means something.
#[test]
fn validator_rejects_an_invalid_response() {
    if spec_root().is_none() {
        return;
    }
    let bad = json!({ "ucp": { "version": "2026-04-08" }, "products": [{ "id": "x" }] });
    let result = std::panic::catch_unwind(|| search_response(&bad));
    assert!(result.is_err(), "a product without title/variants must fail validation");
}
