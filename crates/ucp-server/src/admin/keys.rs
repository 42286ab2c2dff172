//! The admin credential: keys compared by SHA-256 hash in constant time, as platform API keys
//! are (`auth::credentials`).

use std::path::Path;

use subtle::ConstantTimeEq;

use crate::auth::hash_key;

/// The accepted admin keys, by hash. Empty: the admin surface is off (404).
#[derive(Debug, Clone, Default)]
pub struct AdminKeys {
    hashes: Vec<[u8; 32]>,
}

/// Where a demo start keeps the admin key it generated.
pub const DEMO_KEY_FILE: &str = "admin-key";

impl AdminKeys {
    /// From the configured hex hashes (validated when the settings loaded).
    pub fn from_hex(hashes: &[String]) -> AdminKeys {
        let hashes = hashes
            .iter()
            .filter_map(|hex| hex::decode(hex).ok())
            .filter_map(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
            .collect();
        AdminKeys { hashes }
    }

    /// The accepted keys' hashes, sorted: what a console session is bound to, so a change of
    /// the keys (a leaked one replaced) ends every session opened with the old ones.
    pub fn fingerprint(&self) -> Vec<u8> {
        let mut hashes = self.hashes.clone();
        hashes.sort_unstable();
        hashes.concat()
    }

    /// Whether any key is configured (the admin API and console exist at all).
    pub fn enabled(&self) -> bool {
        !self.hashes.is_empty()
    }

    /// Whether `key` is one of the admin keys. Every stored hash is compared, each in
    /// constant time.
    pub fn accepts(&self, key: &str) -> bool {
        let hash = hash_key(key.as_bytes());
        let mut matched = subtle::Choice::from(0);
        for stored in &self.hashes {
            matched |= stored.ct_eq(&hash);
        }
        bool::from(matched)
    }

    /// The key of a demo start: read from `<data>/admin-key`, or generated there (mode 0600)
    /// the first time. Returns the keys and the key itself.
    pub fn demo(data_dir: &Path) -> std::io::Result<(AdminKeys, String)> {
        let path = data_dir.join(DEMO_KEY_FILE);
        let key = match std::fs::read_to_string(&path) {
            Ok(key) if !key.trim().is_empty() => key.trim().to_owned(),
            _ => {
                let key = format!("ucpd_admin_{}", hex::encode(rand::random::<[u8; 24]>()));
                write_private(&path, &key)?;
                key
            }
        };
        Ok((AdminKeys { hashes: vec![hash_key(key.as_bytes())] }, key))
    }
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(crate::hardening::FILE_MODE);
    }
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_configured_keys() {
        let keys = AdminKeys::from_hex(&[crate::auth::hash_key_hex("secret-one")]);
        assert!(keys.enabled());
        assert!(keys.accepts("secret-one"));
        assert!(!keys.accepts("secret-two"));
        assert!(!AdminKeys::default().enabled());
        assert!(!AdminKeys::default().accepts(""));
    }

    #[test]
    fn a_demo_key_is_kept_between_starts() {
        let dir = tempfile::tempdir().unwrap();
        let (keys, key) = AdminKeys::demo(dir.path()).unwrap();
        assert!(keys.accepts(&key));
        let (again, same) = AdminKeys::demo(dir.path()).unwrap();
        assert_eq!(key, same);
        assert!(again.accepts(&key));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(DEMO_KEY_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
