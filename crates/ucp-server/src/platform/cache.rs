//! The platform profile cache: weighed in bytes (`profiles.cache_max_bytes`), each entry with
//! its time to live.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quick_cache::sync::Cache;

use super::profile::PlatformProfile;
use crate::config::ProfileSettings;

/// What a parsed key is taken to cost: its JSON object, held twice (as published and in the
/// key set), and the key built from it. A 26-byte `{"kid":"k","kty":"EC"}` costs about 1 KB.
const KEY_WEIGHT: usize = 2048;

/// What a capability's version is taken to cost in the parsed profile (a 10-byte `String`
/// and its allocation; its body, `{"version":"2026-04-08"}`, is 24 bytes).
const VERSION_WEIGHT: usize = 128;

/// What a cached profile is taken to cost in memory: its parsed form is estimated at twice the
/// body it came from, plus a fixed overhead per entry and per key and version, whose parsed
/// forms cost many times their bytes in the body.
fn profile_weight(profile: &PlatformProfile) -> usize {
    let versions: usize = profile.capabilities.values().map(Vec::len).sum();
    profile
        .body_bytes
        .saturating_mul(2)
        .saturating_add(1024)
        .saturating_add(profile.keys.len().saturating_mul(KEY_WEIGHT))
        .saturating_add(versions.saturating_mul(VERSION_WEIGHT))
}

/// A cached profile and when it stops being used.
#[derive(Debug, Clone)]
pub(super) struct CachedProfile {
    pub(super) profile: Arc<PlatformProfile>,
    until: Instant,
}

impl CachedProfile {
    pub(super) fn new(profile: Arc<PlatformProfile>, ttl: Duration) -> CachedProfile {
        CachedProfile { profile, until: Instant::now() + ttl }
    }

    pub(super) fn fresh(&self) -> bool {
        Instant::now() < self.until
    }
}

/// Weighs a cached profile by its URL and [`profile_weight`], in bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct ProfileWeight;

impl quick_cache::Weighter<String, CachedProfile> for ProfileWeight {
    fn weight(&self, url: &String, cached: &CachedProfile) -> u64 {
        (url.len() + profile_weight(&cached.profile)) as u64
    }
}

/// The largest profile's weight: a body of `max_bytes`, its URL (at most 8 KiB by then) and
/// as many keys and versions as a profile may hold.
fn largest_weight(settings: &ProfileSettings) -> u64 {
    use ucp_protocol::profile::{MAX_CAPABILITIES, MAX_CAPABILITY_VERSIONS, MAX_KEYS};
    let most = MAX_KEYS * KEY_WEIGHT + MAX_CAPABILITIES * MAX_CAPABILITY_VERSIONS * VERSION_WEIGHT;
    (settings.max_bytes.saturating_mul(2).saturating_add(1024 + 8 * 1024 + most)) as u64
}

/// The profile cache, `cache_max_bytes` in all. quick_cache splits the budget between shards
/// and keeps nothing heavier than a shard, so there are as many shards as leave each room for
/// four of the largest profiles (at most 16, at least one).
pub(super) fn profile_cache(settings: &ProfileSettings) -> Cache<String, CachedProfile, ProfileWeight> {
    let largest = largest_weight(settings);
    let budget = settings.cache_max_bytes;
    let mut shards = 16u64;
    while shards > 1 && budget / shards < largest.saturating_mul(4) {
        shards /= 2;
    }
    let options = quick_cache::OptionsBuilder::new()
        .weight_capacity(budget)
        .estimated_items_capacity((budget / 4_096).clamp(16, 100_000) as usize)
        .shards(shards as usize)
        .build();
    match options {
        Ok(options) => Cache::with_options(options, ProfileWeight, Default::default(), Default::default()),
        // Every option is set above, in range.
        Err(_) => Cache::with_weighter(1_024, budget, ProfileWeight),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile of `body_bytes` at `url`, parsed from a minimal valid body.
    fn cached(url: &str, body_bytes: usize, ttl: Duration) -> CachedProfile {
        let body = br#"{"ucp":{"version":"2026-04-08","capabilities":{}}}"#;
        let mut profile = super::super::parse_profile(url, body).unwrap();
        profile.body_bytes = body_bytes;
        CachedProfile::new(Arc::new(profile), ttl)
    }

    #[test]
    fn the_profile_cache_keeps_room_for_the_largest_profile_in_every_shard() {
        let settings = |cache_max_bytes: u64| ProfileSettings { cache_max_bytes, ..ProfileSettings::default() };
        let largest = largest_weight(&ProfileSettings::default());
        for (budget, shards) in [(64 << 20, 16), (32 << 20, 8), (8 << 20, 2), (4 << 20, 1), (64 << 10, 1)] {
            let cache = profile_cache(&settings(budget));
            assert_eq!(cache.num_shards(), shards, "{budget}");
            assert_eq!(cache.capacity(), budget);
            if budget >= 4 * largest {
                assert!(budget / shards as u64 >= 4 * largest, "{budget}");
            }
        }
        // The largest profile the settings accept, cached under the default budget.
        let cache = profile_cache(&settings(8 << 20));
        let url = format!("https://agent.example/{}", "p".repeat(2_000));
        cache.insert(url.clone(), cached(&url, ProfileSettings::default().max_bytes, Duration::from_secs(60)));
        assert!(cache.get(&url).is_some());
        assert!(cache.weight() <= 8 << 20);
    }
}
