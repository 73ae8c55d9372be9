//! A real browser for the office pages: headless Chromium driven by `chromedriver` over the W3C
//! WebDriver protocol, with a small blocking JSON client on reqwest (no WebDriver crate: the
//! protocol is a dozen JSON endpoints, and a blocking client fits the rest of this harness).
//!
//! Flow: [`Browser::start`] runs `chromedriver --port=0` in its own process group, reads the
//! port it prints (bounded wait), and opens a session of `chromium --headless …` on a fresh
//! profile directory at 1366×900. Tests then open pages, find elements by CSS selector (ids are
//! the stable hooks the pages document), type, choose, click and read. Every wait polls with a
//! deadline ([`WAIT`]); nothing sleeps to synchronise. A form submission is followed with
//! [`Browser::click_and_wait`], which waits until the old page is gone (its `<html>` element
//! goes stale) before the next lookup, so a lookup never hits the page that was just left.
//! Dropping the browser ends the session (Chromium quits), then kills chromedriver's process
//! group, so no browser outlives the test.
//!
//! Binaries: `$CHROMEDRIVER` or `chromedriver` on `PATH`; `$CHROMIUM` or `/usr/bin/chromium`.
//! `./scripts/test` installs Debian's `chromium` and `chromium-driver` when missing.
//!
//! Accessibility: [`Browser::axe`] runs axe-core (npm's `axe-core`, version
//! [`AXE_CORE_VERSION`], which `./scripts/test` installs under the target directory) in the
//! page: the script is injected through WebDriver's `execute/sync` (WebDriver scripts are not
//! bound by the page's Content-Security-Policy, so the pages need no exception for it), then
//! `axe.run` goes through `execute/async`. [`assert_accessible`] fails on any violation of
//! impact serious or critical, listing each rule, its help text and the elements.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// How long any element, page or condition may take to appear (debug server, two busy cores).
pub const WAIT: Duration = Duration::from_secs(20);
/// How long chromedriver may take to print its port and Chromium to start.
const START: Duration = Duration::from_secs(60);
/// The key W3C WebDriver uses for element references.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// The Enter key, for `send_keys` (WebDriver's key code point).
pub const ENTER: &str = "\u{E007}";
/// The Tab key (WebDriver's key code point).
pub const TAB: &str = "\u{E004}";
/// How many Tab presses [`Browser::tab_to`] tries before failing: more than any office page
/// has focusable elements before its last form.
pub const MAX_TABS: usize = 400;

/// The axe-core release the tests use (`./scripts/test` installs this one; keep them equal).
pub const AXE_CORE_VERSION: &str = "4.11.0";

/// One rule axe-core found broken on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxeViolation {
    /// axe's rule id, e.g. `color-contrast`.
    pub id: String,
    /// `minor`, `moderate`, `serious` or `critical`.
    pub impact: String,
    pub help: String,
    /// CSS selectors of the offending elements.
    pub nodes: Vec<String>,
}

impl AxeViolation {
    /// Serious or critical: what the project refuses on any page.
    pub fn is_blocking(&self) -> bool {
        matches!(self.impact.as_str(), "serious" | "critical")
    }
}

/// `axe.min.js`: `$AXE_CORE_JS`, else `<target>/axe-core/node_modules/axe-core/axe.min.js`
/// (where `./scripts/test` installs it).
pub fn axe_script_path() -> PathBuf {
    if let Some(p) = std::env::var_os("AXE_CORE_JS") {
        return PathBuf::from(p);
    }
    let target = artifacts_dir()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("axe-core/node_modules/axe-core/axe.min.js")
}

/// The serious or critical violations on the page open in `browser`, as one report naming
/// `page`; `None` when there are none.
pub fn accessibility_report(browser: &Browser, page: &str) -> Option<String> {
    let blocking: Vec<String> = browser
        .axe()
        .into_iter()
        .filter(AxeViolation::is_blocking)
        .map(|v| {
            format!(
                "  [{}] {}: {} — {}",
                v.impact,
                v.id,
                v.help,
                v.nodes.join(", ")
            )
        })
        .collect();
    (!blocking.is_empty()).then(|| {
        format!(
            "axe-core found serious or critical violations on {page} ({}):\n{}",
            browser.current_url(),
            blocking.join("\n")
        )
    })
}

/// Fails the test when axe-core finds a serious or critical violation on the page open in
/// `browser`, naming `page` and listing every such violation.
pub fn assert_accessible(browser: &Browser, page: &str) {
    if let Some(report) = accessibility_report(browser, page) {
        panic!("{report}");
    }
}

/// A reference to an element of the current page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element(String);

/// Why a WebDriver command failed (the protocol's `error` code and message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WdError {
    pub error: String,
    pub message: String,
}

/// A headless Chromium session. Ended and killed on drop.
#[derive(Debug)]
pub struct Browser {
    http: reqwest::blocking::Client,
    base: String,
    session: Option<String>,
    driver: Option<Child>,
    _profile: tempfile::TempDir,
}

fn chromedriver_bin() -> PathBuf {
    std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromedriver"))
}

fn chromium_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("chromium"))
}

/// Where test artifacts (screenshots) go: `$CARGO_TARGET_DIR/artifacts`, else `artifacts/` in
/// the target directory of the running test (`target/debug/deps/x` → `target/artifacts`).
pub fn artifacts_dir() -> PathBuf {
    let dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t).join("artifacts"),
        None => {
            let exe = std::env::current_exe().expect("current exe");
            exe.ancestors()
                .nth(3)
                .map(|t| t.join("artifacts"))
                .unwrap_or_else(|| PathBuf::from("target/artifacts"))
        }
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub fn start() -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(chromedriver_bin());
        cmd.arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            // Its own process group, so that Chromium and its helpers can be killed with it.
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        // A driver that exits before it says its port (seen when many tests start Chromium at
        // once on two cores) is started again, a bounded number of times; one that stays
        // silent past `START` fails the test.
        let mut attempt = 0;
        let (driver, port) = loop {
            attempt += 1;
            let mut driver = cmd.spawn().unwrap_or_else(|e| {
                panic!(
                    "cannot run {} ({e}): install Debian's chromium and chromium-driver \
                     (./scripts/test does) or set CHROMEDRIVER",
                    chromedriver_bin().display()
                )
            });
            match read_port(&mut driver) {
                Some(port) => break (driver, port),
                None if attempt < DRIVER_STARTS => {
                    kill_group(driver.id());
                    let _ = driver.kill();
                    let _ = driver.wait();
                    std::thread::sleep(Duration::from_millis(500));
                }
                None => panic!("chromedriver exited {DRIVER_STARTS} times before saying its port"),
            }
        };
        let http = crate::tls::http(None).timeout(START).build().unwrap();
        let mut browser = Self {
            http,
            base: format!("http://127.0.0.1:{port}"),
            session: None,
            driver: Some(driver),
            _profile: profile,
        };
        let chromium = chromium_bin();
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--lang=pt-BR".to_owned(),
            format!("--user-data-dir={}", browser._profile.path().display()),
            "--window-size=1366,900".to_owned(),
        ];
        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "pageLoadStrategy": "normal",
                    "timeouts": {"pageLoad": WAIT.as_millis() as u64, "script": 10_000, "implicit": 0},
                    "goog:chromeOptions": {
                        "binary": chromium.to_string_lossy(),
                        "args": args,
                    }
                }
            }
        });
        let v = browser
            .call("POST", "/session", Some(caps))
            .unwrap_or_else(|e| panic!("no Chromium session ({}): {e:?}", chromium.display()));
        let id = v["sessionId"].as_str().expect("sessionId").to_owned();
        browser.session = Some(id);
        browser
    }

    fn session_path(&self, rest: &str) -> String {
        format!(
            "/session/{}{rest}",
            self.session.as_deref().expect("session")
        )
    }

    /// One WebDriver command: its `value`, or the protocol error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, WdError> {
        let url = format!("{}{path}", self.base);
        let req = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body.unwrap_or_else(|| json!({}))),
        };
        let res = req.send().map_err(|e| WdError {
            error: "transport".into(),
            message: e.to_string(),
        })?;
        let status = res.status();
        let v: Value = res.json().map_err(|e| WdError {
            error: "bad response".into(),
            message: e.to_string(),
        })?;
        let value = v.get("value").cloned().unwrap_or(Value::Null);
        if status.is_success() {
            Ok(value)
        } else {
            Err(WdError {
                error: value["error"].as_str().unwrap_or("unknown").to_owned(),
                message: value["message"]
                    .as_str()
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            })
        }
    }

    fn cmd(&self, method: &str, rest: &str, body: Option<Value>) -> Result<Value, WdError> {
        self.call(method, &self.session_path(rest), body)
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })))
            .unwrap_or_else(|e| panic!("open {url}: {e:?}"));
    }

    pub fn current_url(&self) -> String {
        self.cmd("GET", "/url", None)
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn title(&self) -> String {
        self.cmd("GET", "/title", None)
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The page's HTML as the browser holds it now.
    pub fn source(&self) -> String {
        self.cmd("GET", "/source", None)
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The first element matching `css` now, if any.
    pub fn find(&self, css: &str) -> Option<Element> {
        match self.cmd(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        ) {
            Ok(v) => v[ELEMENT_KEY].as_str().map(|id| Element(id.to_owned())),
            Err(e) if e.error == "no such element" => None,
            Err(e) => panic!("find {css}: {e:?}"),
        }
    }

    /// Every element matching `css` now.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        self.cmd(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )
        .unwrap_or_else(|e| panic!("find all {css}: {e:?}"))
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v[ELEMENT_KEY].as_str().map(|id| Element(id.to_owned())))
        .collect()
    }

    /// Polls `f` until it gives a value, at most [`WAIT`]; panics naming `what` and the page.
    pub fn wait_until<T>(&self, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(v) = f() {
                return v;
            }
            if Instant::now() >= deadline {
                let src = self.source();
                let tail: String = src.chars().take(4000).collect();
                panic!(
                    "timed out waiting for {what} on {} ({}):\n{tail}",
                    self.current_url(),
                    self.title()
                );
            }
            // A short pause between polls of a real browser; the deadline bounds the wait.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The element matching `css`, waiting for it to appear.
    pub fn wait_for(&self, css: &str) -> Element {
        self.wait_until(&format!("element {css}"), || self.find(css))
    }

    /// Waits for an element matching `css` whose text contains `needle`.
    pub fn wait_text(&self, css: &str, needle: &str) -> Element {
        self.wait_until(&format!("{css} containing {needle:?}"), || {
            self.find_all(css)
                .into_iter()
                .find(|e| self.try_text(e).is_some_and(|t| t.contains(needle)))
        })
    }

    fn try_text(&self, el: &Element) -> Option<String> {
        self.cmd("GET", &format!("/element/{}/text", el.0), None)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// The rendered text of an element.
    pub fn text(&self, el: &Element) -> String {
        self.try_text(el)
            .unwrap_or_else(|| panic!("text of element {el:?}"))
    }

    /// The text of the element matching `css` (waiting for it).
    pub fn text_of(&self, css: &str) -> String {
        let el = self.wait_for(css);
        self.text(&el)
    }

    /// An attribute (`None` when absent).
    pub fn attr(&self, el: &Element, name: &str) -> Option<String> {
        self.cmd("GET", &format!("/element/{}/attribute/{name}", el.0), None)
            .unwrap_or_else(|e| panic!("attribute {name}: {e:?}"))
            .as_str()
            .map(str::to_owned)
    }

    /// A DOM property (e.g. `value`, `checked`).
    pub fn property(&self, el: &Element, name: &str) -> Value {
        self.cmd("GET", &format!("/element/{}/property/{name}", el.0), None)
            .unwrap_or_else(|e| panic!("property {name}: {e:?}"))
    }

    pub fn click(&self, el: &Element) {
        self.cmd("POST", &format!("/element/{}/click", el.0), None)
            .unwrap_or_else(|e| panic!("click {el:?}: {e:?}"));
    }

    /// Types `keys` into an element (after what it holds).
    pub fn send_keys(&self, el: &Element, keys: &str) {
        self.cmd(
            "POST",
            &format!("/element/{}/value", el.0),
            Some(json!({ "text": keys })),
        )
        .unwrap_or_else(|e| panic!("type into {el:?}: {e:?}"));
    }

    /// Replaces the value of the field matching `css` with `text`.
    pub fn fill(&self, css: &str, text: &str) {
        let el = self.wait_for(css);
        self.cmd("POST", &format!("/element/{}/clear", el.0), None)
            .unwrap_or_else(|e| panic!("clear {css}: {e:?}"));
        self.send_keys(&el, text);
    }

    /// Chooses the option with `value` in the `<select>` matching `css`.
    pub fn select(&self, css: &str, value: &str) {
        self.wait_for(css);
        let opt = self.wait_for(&format!("{css} option[value=\"{value}\"]"));
        self.click(&opt);
        let chosen = self.property(&self.wait_for(css), "value");
        assert_eq!(chosen, json!(value), "select {css}");
    }

    /// Whether an element is the page's focused element.
    pub fn is_focused(&self, el: &Element) -> bool {
        let active = self
            .cmd("GET", "/element/active", None)
            .unwrap_or(Value::Null);
        active[ELEMENT_KEY].as_str() == Some(el.0.as_str())
    }

    /// Runs a script in the page (`arguments` as given) and returns its result.
    pub fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .unwrap_or_else(|e| panic!("script: {e:?}"))
    }

    /// Presses Tab from where the focus is until `css` has it, as a keyboard-only user
    /// reaches a control; fails when it is not reachable within [`MAX_TABS`] presses.
    pub fn tab_to(&self, css: &str) -> Element {
        let target = self.wait_for(css);
        for _ in 0..MAX_TABS {
            if self.is_focused(&target) {
                return target;
            }
            self.press(TAB);
        }
        panic!("{css} is not reachable with Tab");
    }

    /// Presses Enter on the focused control and waits for the page that answers.
    pub fn enter_and_wait(&self) {
        let old = self.find("html").expect("a page is open");
        self.press(ENTER);
        self.wait_for_navigation(&old);
    }

    /// Runs a script asynchronously: it ends by calling its last argument with the result.
    pub fn execute_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.cmd(
            "POST",
            "/execute/async",
            Some(json!({ "script": script, "args": args })),
        )
        .unwrap_or_else(|e| panic!("async script: {e:?}"))
    }

    /// Every axe-core violation on the page now (WCAG 2.0/2.1 A and AA rules and axe's best
    /// practices), with its impact. Injects axe-core when the page does not hold it yet.
    pub fn axe(&self) -> Vec<AxeViolation> {
        let loaded = self.execute("return typeof window.axe === 'object'", vec![]);
        if loaded != json!(true) {
            let path = axe_script_path();
            let source = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "cannot read axe-core at {} ({e}): run ./scripts/test, or \
                     npm install --prefix target/axe-core axe-core@{AXE_CORE_VERSION}, \
                     or set AXE_CORE_JS",
                    path.display()
                )
            });
            self.execute(&format!("{source}\n;return typeof window.axe;"), vec![]);
        }
        let out = self.execute_async(
            "const done = arguments[arguments.length - 1];
             window.axe.run(document, { resultTypes: ['violations'] })
               .then(r => done({ ok: r.violations.map(v => ({
                   id: v.id, impact: v.impact || '', help: v.help,
                   nodes: v.nodes.map(n => n.target.join(' ')) })) }))
               .catch(e => done({ error: String(e) }));",
            vec![],
        );
        if let Some(e) = out.get("error") {
            panic!("axe.run failed on {}: {e}", self.current_url());
        }
        out["ok"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|v| AxeViolation {
                id: v["id"].as_str().unwrap_or_default().to_owned(),
                impact: v["impact"].as_str().unwrap_or_default().to_owned(),
                help: v["help"].as_str().unwrap_or_default().to_owned(),
                nodes: v["nodes"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect(),
            })
            .collect()
    }

    /// Presses `keys` on the keyboard (WebDriver actions: no element is clicked or targeted),
    /// one key down and up per character; WebDriver key code points such as [`TAB`] and
    /// [`ENTER`] are keys.
    pub fn press(&self, keys: &str) {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|c| {
                let k = c.to_string();
                [
                    json!({"type": "keyDown", "value": k}),
                    json!({"type": "keyUp", "value": k}),
                ]
            })
            .collect();
        self.cmd(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "teclado", "actions": actions}]})),
        )
        .unwrap_or_else(|e| panic!("press {keys:?}: {e:?}"));
    }

    /// Presses `keys` (ending with [`ENTER`]) and waits for the page that answers.
    pub fn press_and_wait(&self, keys: &str) {
        let old = self.find("html").expect("a page is open");
        self.press(keys);
        self.wait_for_navigation(&old);
    }

    /// The id of the focused element (empty when it has none).
    pub fn focused_id(&self) -> String {
        self.execute(
            "return (document.activeElement && document.activeElement.id) || ''",
            vec![],
        )
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Form controls whose border is under 3:1 against the white page (WCAG 1.4.11, non-text
    /// contrast, which axe-core does not check): `id: ratio` of each. Checkboxes, radios and
    /// file inputs are drawn by the browser and left out.
    pub fn weak_control_borders(&self) -> Vec<String> {
        self.execute(
            "const lum = c => {
               const m = c.match(/rgba?\\(([^)]+)\\)/);
               if (!m) return 1;
               const [r, g, b] = m[1].split(',').map(x => parseFloat(x) / 255)
                 .map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
               return 0.2126 * r + 0.7152 * g + 0.0722 * b;
             };
             const out = [];
             for (const el of document.querySelectorAll('input, select, textarea')) {
               if (['hidden', 'checkbox', 'radio', 'file', 'submit'].includes(el.type)) continue;
               if (el.offsetParent === null) continue;
               const cs = getComputedStyle(el);
               const ratio = 1.05 / (lum(cs.borderTopColor) + 0.05);
               if (cs.borderTopStyle === 'none' || parseFloat(cs.borderTopWidth) === 0 || ratio < 3)
                 out.push((el.id || el.name) + ': ' + ratio.toFixed(2) + ':1');
             }
             return out;",
            vec![],
        )
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
    }

    /// The width in CSS pixels of the focused element's outline (0 when it has none).
    pub fn focus_outline_px(&self) -> f64 {
        self.execute(
            "const cs = getComputedStyle(document.activeElement);
             return cs.outlineStyle === 'none' ? 0 : parseFloat(cs.outlineWidth) || 0;",
            vec![],
        )
        .as_f64()
        .unwrap_or(0.0)
    }

    /// Resizes the window (CSS pixels of the outer window).
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.cmd(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .unwrap_or_else(|e| panic!("resize to {width}×{height}: {e:?}"));
    }

    /// Clicks `el` (a submit button or a link) and waits until the browser has left the page
    /// it was on, then until the new page has loaded.
    pub fn click_and_wait(&self, el: &Element) {
        let old = self.find("html").expect("a page is open");
        self.click(el);
        self.wait_for_navigation(&old);
    }

    /// Types `keys` (ending with [`ENTER`]) into `el` and waits for the page that answers.
    pub fn type_and_wait(&self, el: &Element, keys: &str) {
        let old = self.find("html").expect("a page is open");
        self.send_keys(el, keys);
        self.wait_for_navigation(&old);
    }

    fn wait_for_navigation(&self, old: &Element) {
        self.wait_until("the next page", || {
            match self.cmd("GET", &format!("/element/{}/name", old.0), None) {
                Err(e) if e.error == "stale element reference" || e.error == "no such element" => {
                    Some(())
                }
                _ => None,
            }
        });
        self.wait_until("the page to load", || {
            (self.execute("return document.readyState", vec![]) == json!("complete")).then_some(())
        });
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.cmd("GET", "/screenshot", None).unwrap();
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap_or_default())
            .unwrap()
    }

    /// A PNG of the whole page (the window resized to the document's height for the shot).
    pub fn screenshot_full_page(&self) -> Vec<u8> {
        let height = self
            .execute(
                "return Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)",
                vec![],
            )
            .as_u64()
            .unwrap_or(900)
            .clamp(900, 8000);
        let _ = self.cmd(
            "POST",
            "/window/rect",
            Some(json!({"width": 1366, "height": height + 120})),
        );
        let png = self.screenshot();
        let _ = self.cmd(
            "POST",
            "/window/rect",
            Some(json!({"width": 1366, "height": 900})),
        );
        png
    }

    /// Saves a screenshot of the whole page as `artifacts/<name>` and returns its path.
    pub fn save_screenshot(&self, name: &str) -> PathBuf {
        let png = self.screenshot_full_page();
        let path = artifacts_dir().join(name);
        std::fs::write(&path, &png).unwrap();
        path
    }

    /// Ends the session (Chromium quits) and kills chromedriver's process group.
    pub fn quit(&mut self) {
        if self.session.is_some() {
            let path = self.session_path("");
            // Best effort and bounded by the client's timeout: killing the group follows.
            let _ = self.call("DELETE", &path, None);
            self.session = None;
        }
        if let Some(mut d) = self.driver.take() {
            kill_group(d.id());
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.quit();
    }
}

/// How many times [`Browser::start`] starts a chromedriver that exits before saying its port.
pub const DRIVER_STARTS: u32 = 3;

/// Reads `ChromeDriver was started successfully on port N` from the driver's stdout; `None`
/// when the output ends first (the driver exited).
fn read_port(driver: &mut Child) -> Option<u16> {
    let stdout = driver.stdout.take().expect("chromedriver stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let mut sent = false;
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if !sent
                && line.contains("started successfully")
                && let Some(port) = line
                    .rsplit("port ")
                    .next()
                    .and_then(|p| p.trim().trim_end_matches('.').parse::<u16>().ok())
            {
                let _ = tx.send(port);
                sent = true;
            }
            line.clear();
        }
    });
    match rx.recv_timeout(START) {
        Ok(p) => Some(p),
        // Its output ended without a port: the driver exited, and may be started again.
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            kill_group(driver.id());
            let _ = driver.kill();
            panic!("chromedriver printed no port within {START:?}");
        }
    }
}

/// SIGKILL to the process group `pgid` (chromedriver's, which Chromium inherits).
fn kill_group(pgid: u32) {
    if cfg!(unix) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
    }
}

/// Whether a path holds a PNG (signature) of non-trivial size.
pub fn is_png(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}
