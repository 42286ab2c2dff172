//! Hardened defaults (issue 8 item 6): what a public start may not inherit from the demo, and
//! the file modes of the data directory.
//!
//! A *demo start* is one without a configuration file whose public URL is not https (none, so
//! the listen address, or plain http). Only a demo start gets the demo catalog and the sandbox
//! payment handler by default. `ucpd serve` with an https public URL refuses to start with
//! the sandbox on unless `payments.sandbox = true` says so, and refuses
//! `--dev-insecure-profiles` outright.

use std::path::Path;

use crate::config::{Settings, SignaturePolicy};

/// Whether `settings` describe a demo start.
pub fn is_demo_start(settings: &Settings) -> bool {
    !settings.origin.config_file && !serves_https(settings)
}

fn serves_https(settings: &Settings) -> bool {
    settings.public_url.as_ref().is_some_and(|url| url.as_str().starts_with("https://"))
}

/// Applies the hardened defaults to the settings of `ucpd serve`, or says why it must not start.
pub fn harden(settings: &mut Settings) -> Result<(), String> {
    let https = serves_https(settings);
    if !settings.origin.demo_set && settings.demo && !is_demo_start(settings) {
        settings.demo = false;
        tracing::info!(
            "not a demo start (a configuration file or an https public URL): no demo catalog, no sandbox payments unless configured"
        );
    }
    if https && settings.dev_insecure_profiles {
        return Err(
            "--dev-insecure-profiles (dev_insecure_profiles) is for local development and cannot be used with an https public URL"
                .into(),
        );
    }
    if https {
        match settings.payments.sandbox {
            None if settings.demo => {
                return Err("the sandbox payment handler (which accepts free test tokens) would be on with an https public URL because demo = true; set payments.sandbox = false, or payments.sandbox = true if this is a test shop".into());
            }
            Some(true) => tracing::warn!(
                "payments.sandbox = true with an https public URL: anyone can place orders with test tokens"
            ),
            None | Some(false) => {}
        }
        if is_open_to_anyone(settings) {
            tracing::warn!(
                "no caller has to authenticate with an https public URL: without [[platforms]] (or with auth.required = false) and with signatures.policy other than \"enforce\", anyone can create and complete checkouts; list the platforms you trust in [[platforms]] (API keys, OAuth, mTLS) or set signatures.policy = \"enforce\" (checklist 63)"
            );
        }
    }
    Ok(())
}

/// Whether `settings` let a call through without any credential: no platform configured to
/// authenticate (or authentication turned off), and signatures not enforced.
fn is_open_to_anyone(settings: &Settings) -> bool {
    let required = settings.auth.required.unwrap_or(!settings.platforms.is_empty());
    !required && settings.signatures.policy != SignaturePolicy::Enforce
}

/// Mode of the data directory: owner only.
pub const DIR_MODE: u32 = 0o700;
/// Mode of the database, its WAL and shared-memory files, and the outbox messages.
pub const FILE_MODE: u32 = 0o600;

/// Makes the data directory `0700`; creates the database file `0600` before SQLite opens it
/// (SQLite gives its `-wal` and `-shm` files the database file's mode).
pub fn secure_data_dir(data_dir: &Path, database: &Path) -> std::io::Result<()> {
    set_mode(data_dir, DIR_MODE)?;
    if !database.exists() {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(FILE_MODE);
        }
        options.open(database)?;
    }
    secure_database_files(database)
}

/// `0600` on the database and its `-wal` / `-shm` files, when they exist (a data directory
/// from an older version, or files another tool created).
pub fn secure_database_files(database: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        let path = Path::new(&name);
        if path.exists() {
            set_mode(path, FILE_MODE)?;
        }
    }
    Ok(())
}

/// Writes `contents` to a new file (or replaces one) readable by the owner only.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    set_mode(path, FILE_MODE)
}

/// Creates `path` (and parents) as a directory, owner only.
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    set_mode(path, DIR_MODE)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Origin, PublicUrl};

    fn serve_settings(public_url: Option<&str>, origin: Origin) -> Settings {
        let mut settings = Settings { origin, ..Settings::default() };
        settings.public_url = public_url.map(|url| url.parse::<PublicUrl>().unwrap());
        settings
    }

    #[test]
    fn a_demo_start_keeps_the_demo() {
        for url in [None, Some("http://127.0.0.1:8080")] {
            let mut settings = serve_settings(url, Origin::default());
            harden(&mut settings).unwrap();
            assert!(settings.demo, "{url:?}");
            assert!(settings.payments.sandbox.unwrap_or(settings.demo));
        }
    }

    #[test]
    fn a_public_start_drops_the_demo_and_the_sandbox() {
        let mut settings = serve_settings(Some("https://shop.test"), Origin::default());
        harden(&mut settings).unwrap();
        assert!(!settings.demo && !settings.payments.sandbox.unwrap_or(settings.demo));
        let mut settings = serve_settings(None, Origin { config_file: true, demo_set: false });
        harden(&mut settings).unwrap();
        assert!(!settings.demo, "a configuration file is not a demo start");
    }

    #[test]
    fn a_public_start_refuses_an_implicit_sandbox_and_insecure_profiles() {
        let mut settings = serve_settings(Some("https://shop.test"), Origin { config_file: false, demo_set: true });
        let error = harden(&mut settings).unwrap_err();
        assert!(error.contains("payments.sandbox"), "{error}");
        settings.payments.sandbox = Some(true);
        harden(&mut settings).expect("an explicit sandbox is allowed");
        settings.dev_insecure_profiles = true;
        let error = harden(&mut settings).unwrap_err();
        assert!(error.contains("dev-insecure-profiles"), "{error}");
    }

    // Checklist 63: a public start that authenticates nobody is warned about (the demo start
    // stays open on purpose, and is not).
    #[test]
    fn a_public_start_without_authentication_is_open_to_anyone() {
        let mut settings = serve_settings(Some("https://shop.test"), Origin::default());
        assert!(is_open_to_anyone(&settings), "no platforms, no signatures");
        settings.auth.required = Some(true);
        assert!(!is_open_to_anyone(&settings), "credentials required");
        settings.auth.required = None;
        settings.platforms.push(crate::config::PlatformSettings {
            id: "agent".into(),
            profiles: vec!["https://agent.test/profile".into()],
            api_keys: Vec::new(),
            oauth: None,
            mtls: None,
        });
        assert!(!is_open_to_anyone(&settings), "platforms configured: credentials required by default");
        settings.auth.required = Some(false);
        assert!(is_open_to_anyone(&settings), "turned off");
        settings.signatures.policy = SignaturePolicy::Enforce;
        assert!(!is_open_to_anyone(&settings), "every call signed");
    }

    #[cfg(unix)]
    #[test]
    fn the_data_directory_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        let database = data.join("ucpd.db");
        secure_data_dir(&data, &database).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&data), DIR_MODE);
        assert_eq!(mode(&database), FILE_MODE);
    }
}
