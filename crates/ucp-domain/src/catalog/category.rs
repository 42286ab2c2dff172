//! Category paths and matching: one matcher for search filters, lookup and discount scope.

/// A category value and each of its ancestors in an `A > B > C` path, lower-cased, so a
/// filter on `Apparel & Accessories` matches `Apparel & Accessories > Shoes`.
pub fn category_paths(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('>').map(str::trim).filter(|part| !part.is_empty()).collect();
    let mut paths = Vec::with_capacity(parts.len() + 1);
    for end in 1..=parts.len() {
        paths.push(parts[..end].join(" > ").to_lowercase());
    }
    let whole = value.trim().to_lowercase();
    if !paths.contains(&whole) {
        paths.push(whole);
    }
    paths
}

/// A category filter value in the form [`category_paths`] produces.
pub fn category_key(wanted: &str) -> String {
    let parts: Vec<&str> = wanted.split('>').map(str::trim).filter(|part| !part.is_empty()).collect();
    if parts.is_empty() { wanted.trim().to_lowercase() } else { parts.join(" > ").to_lowercase() }
}

/// Whether category `value` is `wanted` or lies below it (case-insensitive).
pub fn category_matches(value: &str, wanted: &str) -> bool {
    category_paths(value).contains(&category_key(wanted))
}
