//! Renders an HTML report in headless Chromium: the page's script must run to its end
//! without an error, injected markup must stay inert, and the screenshot must not be blank.
//!
//! Chromium comes from `tests/install-chromium.sh` (Debian's package). Without it the test
//! is skipped with a notice, unless the environment variable `CI` is set: then it fails.
//! `NEARDUP_CHROMIUM` names another browser binary; the screenshot is saved to
//! `$NEARDUP_SCREENSHOT` (default: `report-screenshot.png` in the temporary directory), the
//! page beside it (`.html`).

use neardup_report as report;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one browser run may take.
const TIMEOUT: Duration = Duration::from_secs(90);

/// The browser: `$NEARDUP_CHROMIUM` if set (only that), else Debian's; None if not a file.
fn chromium() -> Option<PathBuf> {
    match std::env::var_os("NEARDUP_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file()),
    }
}

/// Runs the browser headless on `page` with `extra` arguments, in a fresh profile.
fn run_chromium(browser: &Path, page: &Path, profile: &Path, extra: &[String]) -> Output {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    // Read both pipes on threads so a chatty browser cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).ok();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for chromium") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium took more than {TIMEOUT:?} on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Console errors and uncaught exceptions in the browser's log.
fn script_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("Uncaught")
                || (l.contains(":CONSOLE") && (l.contains("ERROR") || l.contains("Error")))
        })
        .collect()
}

/// What the browser made of a page: the serialized DOM after scripts ran, and the log.
struct Rendered {
    dom: String,
    log: String,
}

fn dump_dom(browser: &Path, page: &Path, scratch: &Path) -> Rendered {
    let profile = tempfile::tempdir_in(scratch).unwrap();
    let out = run_chromium(browser, page, profile.path(), &["--dump-dom".to_string()]);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium --dump-dom failed:\n{log}");
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        log,
    }
}

/// True if the page's script ran to its end without an error.
fn script_ran_cleanly(r: &Rendered) -> bool {
    r.dom.contains("data-report-ok=\"1\"") && script_errors(&r.log).is_empty()
}

/// Decodes an RGB(A) PNG: (width, height, pixels as RGB).
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a buffer size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG color type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "chromium is not installed (CI is set, so this is an error): \
                 run crates/neardup-report/tests/install-chromium.sh"
            );
        }
        eprintln!(
            "NOTICE: report_renders_in_headless_chromium skipped: no chromium \
             (install it with crates/neardup-report/tests/install-chromium.sh)"
        );
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let page = scratch.path().join("report.html");
    let html = report::render(&report::example::data(200_000, 50));
    std::fs::write(&page, &html).unwrap();

    // The script runs to its end, and the hostile document's markup stays text.
    let r = dump_dom(&browser, &page, scratch.path());
    assert!(
        script_ran_cleanly(&r),
        "the report's script did not run cleanly; errors: {:?}",
        script_errors(&r.log)
    );
    assert!(
        !r.dom.contains("data-injected=\"1\""),
        "injected script ran"
    );
    assert!(!r.dom.contains("<img"), "injected element was parsed");
    assert!(
        r.dom.contains("&lt;script&gt;"),
        "hostile text not shown as text"
    );
    assert_eq!(r.dom.matches("<script").count(), 1);
    // Identical copies are a bar of their own; unspaced text is diffed by character; a pair
    // without an estimate shows none.
    assert!(r.dom.contains("identical copies (J = 1)"));
    assert!(r.dom.contains("去<mark class=\"a\">公园</mark>散步"));
    assert!(r.dom.contains("<span class=\"sim\">Jaccard 0.810</span>"));

    // The screenshot shows a page with charts and colors, not a blank one.
    let shot = match std::env::var_os("NEARDUP_SCREENSHOT") {
        Some(p) => PathBuf::from(p),
        None => std::env::temp_dir().join("report-screenshot.png"),
    };
    let _ = std::fs::remove_file(&shot);
    // The page beside its screenshot, for a human to open.
    let _ = std::fs::write(shot.with_extension("html"), &html);
    let profile = tempfile::tempdir_in(scratch.path()).unwrap();
    let out = run_chromium(
        &browser,
        &page,
        profile.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400".to_string(),
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium --screenshot failed:\n{log}");
    assert!(script_errors(&log).is_empty(), "{:?}", script_errors(&log));
    let (w, h, pixels) = decode_png(&shot);
    println!("screenshot {}: {w} x {h}", shot.display());
    assert_eq!((w, h), (1280, 2400));
    let non_white = pixels.iter().filter(|p| p.iter().any(|&c| c < 235)).count();
    let colors: HashSet<[u8; 3]> = pixels.iter().copied().collect();
    // Strongly colored pixels: the header, bars, curves, highlights.
    let saturated = pixels
        .iter()
        .filter(|p| {
            let (max, min) = (*p.iter().max().unwrap(), *p.iter().min().unwrap());
            max - min > 60
        })
        .count();
    println!(
        "{non_white} non-white pixels, {saturated} saturated, {} distinct colors",
        colors.len()
    );
    let total = pixels.len();
    assert!(
        non_white > total / 20,
        "page looks blank: {non_white} of {total} pixels"
    );
    assert!(
        saturated > total / 100,
        "page has no charts: {saturated} colored pixels"
    );
    assert!(colors.len() > 50, "page has {} colors", colors.len());
}

/// The harness itself catches a script error (a page whose script throws before the marker).
#[test]
fn a_throwing_script_is_caught() {
    let Some(browser) = chromium() else {
        eprintln!("NOTICE: a_throwing_script_is_caught skipped: no chromium");
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let page = scratch.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><script>noSuchFunction();\
         document.documentElement.setAttribute('data-report-ok','1');</script></body></html>",
    )
    .unwrap();
    let r = dump_dom(&browser, &page, scratch.path());
    assert!(!script_ran_cleanly(&r));
    assert!(!r.dom.contains("data-report-ok=\"1\""));
}
