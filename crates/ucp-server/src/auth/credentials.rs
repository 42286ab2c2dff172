//! API keys (compared by SHA-256 hash, in constant time) and client certificates (by the
//! leaf's fingerprint, subject or subjectAltName).

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::Platform;
use crate::trust::ClientCertificate;

/// SHA-256 of an API key as sent (surrounding whitespace trimmed), as stored in `api_keys`.
pub fn hash_key(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key.trim_ascii()).into()
}

/// A new random key (192 bits of the thread's CSPRNG, as hex after a `ucpd_` prefix), for an
/// admin or a platform.
pub fn new_key() -> String {
    format!("ucpd_{}", hex::encode(rand::random::<[u8; 24]>()))
}

/// [`hash_key`] as the 64 lower-case hex digits the configuration holds.
pub fn hash_key_hex(key: &str) -> String {
    hex::encode(hash_key(key.as_bytes()))
}

/// The platform one of whose `hashes` equals `hash`. Every stored hash is compared, each in
/// constant time, so the answer's timing tells nothing about which key (or how much of one)
/// matched.
pub(super) fn find<'a>(
    platforms: &'a [Platform],
    hashes: impl Fn(&Platform) -> &Vec<[u8; 32]>,
    hash: &[u8; 32],
) -> Option<&'a Platform> {
    let mut found = None;
    for platform in platforms {
        let mut matched = subtle::Choice::from(0);
        for stored in hashes(platform) {
            matched |= stored.ct_eq(hash);
        }
        if bool::from(matched) && found.is_none() {
            found = Some(platform);
        }
    }
    found
}

/// The platform a verified client certificate identifies: by the SHA-256 fingerprint of the
/// leaf, else by its subject DN or a subjectAltName (DNS name or URI).
pub(super) fn certificate_platform<'a>(
    platforms: &'a [Platform],
    certificate: &ClientCertificate,
) -> Option<&'a Platform> {
    let leaf = certificate.chain.first()?;
    let fingerprint: [u8; 32] = Sha256::digest(leaf).into();
    if let Some(platform) = find(platforms, |platform| &platform.fingerprints, &fingerprint) {
        return Some(platform);
    }
    let (_, parsed) = X509Certificate::from_der(leaf).ok()?;
    let subject = parsed.subject().to_string();
    let sans: Vec<String> = parsed
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|extension| {
            extension
                .value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    GeneralName::DNSName(name) => Some(name.to_ascii_lowercase()),
                    GeneralName::URI(uri) => Some((*uri).to_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    platforms.iter().find(|platform| {
        platform.subjects.iter().any(|wanted| same_dn(wanted, &subject))
            || platform.sans.iter().any(|wanted| sans.iter().any(|san| san.eq_ignore_ascii_case(wanted)))
    })
}

/// Distinguished names compared without the spaces around separators.
fn same_dn(left: &str, right: &str) -> bool {
    let normalize = |text: &str| -> String {
        text.split(',').map(|part| part.trim().replace(" = ", "=")).collect::<Vec<_>>().join(",")
    };
    normalize(left) == normalize(right)
}
