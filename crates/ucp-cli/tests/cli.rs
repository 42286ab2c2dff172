//! The command-line contract, run as a user would: the real `ucpd` binary.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::process::Stdio;

use common::ucpd;

const FEED: &str = "id\titem_group_id\ttitle\tdescription\tlink\timage_link\tprice\tsale_price\tavailability\tbrand\tcolor\tsize\tgoogle_product_category\n\
tee-b-s\ttee\tBasic Tee\tSoft cotton tee\thttps://shop.example/tee\thttps://shop.example/tee.jpg\t20.00 USD\t15.00 USD\tin_stock\tAcme\tBlue\tS\tApparel & Accessories > Clothing\n\
tee-b-m\ttee\tBasic Tee\tSoft cotton tee\thttps://shop.example/tee\thttps://shop.example/tee.jpg\t20.00 USD\t\tout_of_stock\tAcme\tBlue\tM\tApparel & Accessories > Clothing\n\
mug-1\t\tCoffee Mug\tCeramic\thttps://shop.example/mug\thttps://shop.example/mug.jpg\tnot-a-price\t\tin_stock\tAcme\t\t\tHome & Garden\n\
cap-1\t\tBaseball Cap\tCotton cap\thttps://shop.example/cap\thttps://shop.example/cap.jpg\t12.50 USD\t\tin_stock\tAcme\tRed\t\tApparel & Accessories\n";

#[test]
fn import_loads_a_feed_reports_skipped_rows_and_upserts() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, FEED).unwrap();
    let data = directory.path().join("data");
    let output = ucpd().arg("import").arg(&feed).arg("--data-dir").arg(&data).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 products (2 new, 0 updated), 3 variants, 1 rows skipped"), "{stdout}");
    assert!(stderr.contains("feed.tsv: skipped line 4: price"), "the bad row names file, line and field: {stderr}");

    // Re-import updates in place.
    let output = ucpd().arg("import").arg(&feed).arg("--data-dir").arg(&data).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("(0 new, 2 updated)"), "{stdout}");

    // --strict refuses a feed with a bad row and leaves the catalog as it was.
    let changed = FEED.replace("Basic Tee", "Changed Tee");
    std::fs::write(&feed, changed).unwrap();
    let output = ucpd().arg("import").arg(&feed).arg("--data-dir").arg(&data).arg("--strict").output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not changed"));

    // A feed that is broken as a whole fails without touching the store.
    let broken = directory.path().join("broken.xml");
    std::fs::write(&broken, "<rss><channel><item><g:id>x</g:id>").unwrap();
    let output = ucpd().arg("import").arg(&broken).arg("--data-dir").arg(&data).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("broken.xml"), "{stderr}");
}

#[test]
fn demo_catalog_is_deterministic_json_lines() {
    let directory = tempfile::tempdir().unwrap();
    let first = directory.path().join("a.jsonl");
    let second = directory.path().join("b.jsonl");
    for path in [&first, &second] {
        let status = ucpd().args(["demo-catalog", "--products", "50", "--output"]).arg(path).status().unwrap();
        assert!(status.success());
    }
    let text = std::fs::read_to_string(&first).unwrap();
    assert_eq!(text, std::fs::read_to_string(&second).unwrap());
    assert_eq!(text.lines().count(), 50);
    let product: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(product["variants"][0]["price"]["amount"].is_i64());

    // The generated catalog imports as our JSON-lines format.
    let data = directory.path().join("data");
    let output = ucpd().arg("import").arg(&first).arg("--data-dir").arg(&data).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("50 products"));
}

#[test]
fn serve_seeds_the_demo_catalog_and_logs_a_ready_line() {
    let directory = tempfile::tempdir().unwrap();
    let child = ucpd()
        .args(["serve", "--listen", "127.0.0.1:0", "--demo-products", "30", "--data-dir"])
        .arg(directory.path())
        .env("UCPD_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (ready, seen) = common::until_ready(child);
    assert!(ready.contains("/.well-known/ucp"), "{ready}");
    assert!(seen.contains("seeded the empty store with the demo catalog"), "{seen}");
    assert!(directory.path().join("ucpd.db").exists());
    assert!(directory.path().join("signing-key.pem").exists());
}

#[test]
fn help_documents_flags_and_environment() {
    let output = ucpd().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for flag in [
        "--listen",
        "--data-dir",
        "--config",
        "--public-url",
        "--no-demo",
        "--dev-insecure-profiles",
        "UCPD_LISTEN",
        "UCPD_DATA_DIR",
    ] {
        assert!(help.contains(flag), "serve --help lacks {flag}");
    }
}

// Settings are typed at load: a bad value stops `serve` before it binds, named by its key.
#[test]
fn serve_refuses_bad_settings_naming_the_key() {
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("ucpd.toml");
    std::fs::write(&config, "[[taxes]]\ncountry = \"US\"\nrate = \"7.25501\"\n").unwrap();
    let data = directory.path().join("data");
    let output = ucpd().arg("serve").arg("--config").arg(&config).arg("--data-dir").arg(&data).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("ucpd.toml: taxes.0.rate") && stderr.contains("7.25501"), "{stderr}");

    for (variable, value, expected) in [
        ("UCPD_CAPABILITIES__ENABLED", "cart,nope", "unknown capability \"nope\""),
        ("UCPD_CATALOG__EXCHANGE_RATES__EUR", "0", "UCPD_CATALOG__EXCHANGE_RATES__EUR"),
        ("UCPD_PUBLIC_URL", "http://shop.example", "must be https"),
    ] {
        let output = ucpd().arg("serve").arg("--data-dir").arg(&data).env(variable, value).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{variable}: {stderr}");
        assert!(stderr.contains(expected), "{variable}: {stderr}");
    }
    let output =
        ucpd().args(["serve", "--public-url", "ftp://shop.example"]).arg("--data-dir").arg(&data).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("public_url"), "{stderr}");
}

// Issue 8 item 3: `ucpd keys generate|rotate|list`; the old key stays listed as published.
#[test]
fn keys_generate_rotate_and_list() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().to_str().unwrap();
    let run = |arguments: &[&str]| {
        let output = ucpd().args(arguments).args(["--data-dir", data]).output().unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr),
        )
    };
    let (ok, generated) = run(&["keys", "generate"]);
    assert!(ok && generated.contains("generated signing key"), "{generated}");
    let (ok, again) = run(&["keys", "generate"]);
    assert!(!ok && again.contains("exists already"), "{again}");
    let (ok, rotated) = run(&["keys", "rotate", "--grace-days", "3"]);
    assert!(ok && rotated.contains("stays published for 3 days"), "{rotated}");
    let (ok, listed) = run(&["keys", "list", "--grace-days", "3"]);
    assert!(ok, "{listed}");
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(lines[0].contains("current") && lines[1].contains("retired, published until"), "{listed}");
}

// Issue 8 item 6: an https public URL is not a demo start. `serve` refuses
// --dev-insecure-profiles there, and a sandbox the configuration did not ask for.
#[test]
fn serve_with_an_https_public_url_refuses_demo_leftovers() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("data");
    let serve = || {
        let mut command = ucpd();
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--public-url", "https://shop.example"])
            .arg("--data-dir")
            .arg(&data);
        command
    };
    let output = serve().arg("--dev-insecure-profiles").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("--dev-insecure-profiles"), "{stderr}");
    let output = serve().env("UCPD_DEMO", "true").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("payments.sandbox"), "{stderr}");
    assert!(!data.join("ucpd.db").exists(), "refused before the store was opened");
}

// Merchants store the hash of an API key, never the key: the same hash as sha256sum.
#[test]
fn platforms_hash_key_prints_the_sha256_of_the_key() {
    let output = ucpd().args(["platforms", "hash-key", "abc"]).output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("can be guessed"), "a short key is warned about");
    let mut child =
        ucpd().args(["platforms", "hash-key"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"abc\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // --generate: a random key and its hash, which hash-key then agrees with.
    let output = ucpd().args(["platforms", "hash-key", "--generate"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = |label: &str| text.lines().find_map(|line| line.strip_prefix(label)).unwrap().to_owned();
    let (key, hash) = (line("key: "), line("hash: "));
    assert!(key.starts_with("ucpd_") && key.len() == 5 + 48, "{key}");
    let again = ucpd().args(["platforms", "hash-key", &key]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), hash);
    assert!(again.stderr.is_empty(), "a generated key is long enough");
    let other = ucpd().args(["platforms", "hash-key", "--generate"]).output().unwrap();
    assert_ne!(other.stdout, output.stdout, "each key is new");
}

// A reader that goes away (`ucpd routes | head -1`) ends the command quietly: no panic with a
// backtrace on stderr, and success (it had what it wanted).
#[test]
fn a_closed_output_pipe_ends_a_command_quietly() {
    let demo = ["demo-catalog", "--products", "2000", "-o", "-"];
    for args in [&["routes"][..], &["platforms", "hash-key", "--generate"][..], &demo[..]] {
        let mut child = ucpd().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(output.status.success(), "{args:?}: {stderr}");
    }
}

// Standard output that cannot be written (a full disk: /dev/full) fails the command with the
// OS error said once; standard error that is gone (`2>&-`, a closed pipe) loses the notes
// but does not panic the command halfway.
#[test]
fn a_full_output_fails_once_and_a_closed_error_stream_is_not_a_panic() {
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let output = ucpd().args(["routes"]).stdout(full).stderr(Stdio::piped()).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{stderr}");
        assert_eq!(stderr.matches("No space left on device").count(), 1, "{stderr}");
        assert!(stderr.starts_with("ucpd: writing to standard output: "), "{stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    let feed = dir.path().join("feed.jsonl");
    let mut child = ucpd()
        .args(["demo-catalog", "--products", "5", "-o"])
        .arg(&feed)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(std::fs::metadata(&feed).unwrap().len() > 0);
}
