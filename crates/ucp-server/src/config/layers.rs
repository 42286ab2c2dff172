//! The layers under the settings: the TOML file and the `UCPD_*` environment, merged by
//! figment, and figment's errors told by the key (or variable) they came from.

use std::path::Path;

use figment::providers::{Format, Toml};
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};

use super::ConfigError;

/// Variables with the prefix that are not settings.
const NOT_SETTINGS: &[&str] = &["CONFIG", "LOG", "LOG_FORMAT"];

/// One `UCPD_*` variable as a layer: `UCPD_PROFILES__CACHE_TTL_SECS=600` is
/// `profiles.cache_ttl_secs = 600`. Figment reads the value as TOML-like text (numbers,
/// booleans, `[a, b]`); anything else stays a string, and list settings split it on commas.
struct Variable {
    name: String,
    key: String,
    value: String,
}

impl Provider for Variable {
    fn metadata(&self) -> Metadata {
        Metadata::named(format!("environment variable {}", self.name))
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let value: Value = self.value.parse().unwrap_or_else(|never: std::convert::Infallible| match never {});
        let dict = figment::util::nest(&self.key, value).into_dict().unwrap_or_default();
        Ok(Profile::Default.collect(dict))
    }
}

/// The file (if any) under the environment's `UCPD_*` variables.
pub(super) fn figment(
    file: Option<&Path>,
    environment: impl IntoIterator<Item = (String, String)>,
) -> Result<Figment, ConfigError> {
    let mut figment = Figment::new();
    if let Some(path) = file {
        std::fs::metadata(path).map_err(|error| ConfigError(format!("cannot read {}: {error}", path.display())))?;
        figment = figment.merge(Toml::file_exact(path));
    }
    let mut variables: Vec<Variable> = environment
        .into_iter()
        .filter_map(|(name, value)| {
            let setting = name.strip_prefix("UCPD_")?;
            if NOT_SETTINGS.contains(&setting) {
                return None;
            }
            let key = setting.split("__").map(str::to_ascii_lowercase).collect::<Vec<_>>().join(".");
            Some(Variable { name, key, value })
        })
        .collect();
    variables.sort_by(|left, right| left.name.cmp(&right.name));
    for variable in variables {
        if variable.key.split('.').any(str::is_empty) {
            return Err(ConfigError(format!("{}: not a setting name", variable.name)));
        }
        figment = figment.merge(variable);
    }
    Ok(figment)
}

/// Every error figment found, each named by where it came from: `UCPD_CATALOG__MAX_PAGE_SIZE: …`
/// or `ucpd.toml: taxes.0.rate: …`.
pub(super) fn describe(error: figment::Error) -> ConfigError {
    let lines: Vec<String> = error
        .into_iter()
        .map(|error| {
            let key = error.path.join(".");
            let place = match &error.metadata {
                Some(metadata) if metadata.name.starts_with("environment variable ") => {
                    metadata.name.trim_start_matches("environment variable ").to_owned()
                }
                Some(Metadata { source: Some(source), .. }) if key.is_empty() => source.to_string(),
                Some(Metadata { source: Some(source), .. }) => format!("{source}: {key}"),
                _ if key.is_empty() => "settings".to_owned(),
                _ => key,
            };
            format!("{place}: {}", error.kind)
        })
        .collect();
    ConfigError(lines.join("; "))
}
