//! The console in headless Chromium (issue 9 item 4): a real browser logs in through the form
//! (Origin, SameSite=Strict cookie, redirect), then the orders, traffic and funnel pages are
//! screenshotted into `target/test-artifacts/` and their text checked. Chromium is driven over
//! the DevTools protocol on `--remote-debugging-pipe` (fds 3 and 4, here two FIFOs), so the
//! test needs no WebSocket client.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::console::{KEY, console_app, scripted_run};
use crate::handoff_browser::{CHROMIUM, artifacts_dir};

/// A Chromium on the DevTools pipe, with one page attached.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: BufReader<std::fs::File>,
    next_id: u64,
    session: Option<String>,
    deadline: Instant,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn start(work: &Path) -> Browser {
        let (to_path, from_path) = (work.join("cdp-in"), work.join("cdp-out"));
        for path in [&to_path, &from_path] {
            assert!(Command::new("mkfifo").arg(path).status().unwrap().success(), "mkfifo");
        }
        let script = format!(
            "exec {CHROMIUM} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
             --hide-scrollbars --user-data-dir={} --remote-debugging-pipe about:blank 3<{} 4>{}",
            work.join("profile").display(),
            to_path.display(),
            from_path.display()
        );
        let child = Command::new("bash")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        // The shell opens fd 3 first, then fd 4: open ours in the same order.
        let to = std::fs::OpenOptions::new().write(true).open(&to_path).unwrap();
        let from = BufReader::new(std::fs::File::open(&from_path).unwrap());
        Browser { child, to, from, next_id: 0, session: None, deadline: Instant::now() + Duration::from_secs(120) }
    }

    /// Sends one command (to the page's session once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, params) {
            Ok(result) => result,
            Err(error) => panic!("{method}: {error}"),
        }
    }

    /// Like [`Browser::call`], but hands back Chromium's error instead of failing on it.
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        assert!(Instant::now() < self.deadline, "chromium took too long");
        self.next_id += 1;
        let mut message = json!({ "id": self.next_id, "method": method, "params": params });
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        self.to.write_all(message.to_string().as_bytes()).unwrap();
        self.to.write_all(b"\0").unwrap();
        self.to.flush().unwrap();
        loop {
            let mut buffer = Vec::new();
            let read = self.from.read_until(0, &mut buffer).unwrap();
            assert!(read > 0, "chromium closed the pipe during {method}");
            buffer.pop();
            let answer: Value = serde_json::from_slice(&buffer).unwrap();
            if answer["id"] == self.next_id {
                return match answer.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(answer["result"].clone()),
                };
            }
        }
    }

    fn eval(&mut self, expression: &str) -> Value {
        self.call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true }))["result"]["value"]
            .clone()
    }

    /// Runs a script that navigates (submits a form). Chromium may answer with the navigation
    /// error instead of the script's value, since the page it ran in is already gone; what
    /// counts is where the page lands, which the caller waits for.
    fn eval_navigating(&mut self, expression: &str) {
        let _ = self.try_call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true }));
    }

    /// Waits until the page at `path` has loaded. A page that is navigating away (a form just
    /// submitted) can refuse the evaluation ("Inspected target navigated or closed", "Execution
    /// context was destroyed"): that is one more reason to ask again, not a failure.
    fn wait_for(&mut self, path: &str) {
        loop {
            let state = match self.try_call(
                "Runtime.evaluate",
                json!({ "expression": "location.pathname + ' ' + document.readyState", "returnByValue": true }),
            ) {
                Ok(result) => result["result"]["value"].clone(),
                Err(error) => error,
            };
            if state == format!("{path} complete") {
                return;
            }
            assert!(Instant::now() < self.deadline, "never reached {path}: {state}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn open(&mut self, url: &str, path: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for(path);
    }

    fn screenshot(&mut self, file: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png", "captureBeyondViewport": true }));
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
        assert!(png.len() > 10 * 1024, "a non-trivial screenshot ({} bytes)", png.len());
        std::fs::write(file, png).unwrap();
        eprintln!("screenshot: {}", file.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        if std::env::var_os("CI").is_some() {
            panic!("{CHROMIUM} is missing; .ci/run installs the Debian `chromium` package");
        }
        eprintln!("SKIPPED the_console_renders_in_headless_chromium: {CHROMIUM} is not installed");
        return;
    }
    let app = console_app().await;
    let other = scripted_run(&app).await;
    let (base, platform) = (app.base_url.clone(), app.platform.profile_url());
    let other_platform = other.profile_url();
    let artifacts = artifacts_dir();
    std::fs::create_dir_all(&artifacts).unwrap();
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().to_owned();
    let texts = tokio::task::spawn_blocking(move || {
        let mut browser = Browser::start(&work_path);
        let target = browser.call("Target.createTarget", json!({ "url": "about:blank" }));
        let attached =
            browser.call("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }));
        browser.session = attached["sessionId"].as_str().map(str::to_owned);
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
        );
        // Not logged in: the console sends the browser to the login form.
        browser.open(&format!("{base}/admin/orders"), "/admin/login");
        browser.screenshot(&artifacts.join("console-login.png"));
        browser.eval_navigating(&format!(
            "document.getElementById('key').value = {}; document.querySelector('form[action=\"/admin/login\"]').submit(); true",
            json!(KEY)
        ));
        browser.wait_for("/admin/orders");
        let mut texts = Vec::new();
        let pages = [
            ("orders", "console-orders.png"),
            ("traffic", "console-traffic.png"),
            ("funnel", "console-funnel.png"),
            ("refunds", "console-refunds.png"),
        ];
        for (page, file) in pages {
            let path = format!("/admin/{page}");
            browser.open(&format!("{base}{path}"), &path);
            browser.screenshot(&artifacts.join(file));
            texts.push(browser.eval("document.body.innerText").as_str().unwrap_or_default().to_owned());
        }
        // Logging out through the button ends the session in the browser too.
        browser.eval_navigating("document.querySelector('form[action=\"/admin/logout\"]').submit(); true");
        browser.wait_for("/admin/login");
        browser.open(&format!("{base}/admin/funnel"), "/admin/login");
        texts
    })
    .await
    .unwrap();
    let [orders, traffic, funnel, refunds] = &texts[..] else { panic!("four pages") };
    assert!(refunds.contains("Each refund is kept") && refunds.contains("No refunds yet"), "{refunds}");
    assert!(orders.contains("Orders, newest first") && orders.contains(&platform), "{orders}");
    assert!(orders.contains("ord_"), "the order placed in the run: {orders}");
    assert!(traffic.contains("search_catalog") && traffic.contains(&other_platform), "{traffic}");
    // innerText separates table cells with tabs.
    assert!(funnel.contains(&format!("{platform}\t3\t2\t1\t1")), "{funnel}");
    assert!(funnel.contains(&format!("{other_platform}\t1\t1\t2\t0")), "{funnel}");
}
