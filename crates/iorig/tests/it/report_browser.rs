//! Protects the reports people open in a browser: `iorig report` and
//! `iorig compare` write pages that headless Chromium loads from file:// with
//! no console messages (no script errors, no blocked or missing resources), that
//! carry one chart SVG per chart file written beside them, and that render to a
//! screenshot; `iorig export` writes CSV, XLSX and JSON files. The browser
//! test is `#[ignore]`d with its reason; `.ci/run` installs Chromium and runs
//! it with `--ignored` as root, where a missing browser is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn iorig(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
        .env_remove("IORIG_DB")
        .args(args)
        .current_dir(dir)
        .env_remove("IORIG_DB")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iorig {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tmp() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Three runs made with the null engine: two single runs and a curve plan.
fn make_runs(dir: &Path) {
    for fw in ["1", "2"] {
        iorig(
            dir,
            &[
                "run",
                "--engine",
                "null",
                "--time",
                "1s",
                "--interval",
                "250ms",
                "--label",
                &format!("fw={fw}"),
                "-q",
            ],
        );
    }
    std::fs::write(
        dir.join("curve.toml"),
        "[defaults]\nengine = 'null'\ntime = '500ms'\ninterval = '100ms'\n\
         [[steps]]\nkind = 'curve'\nqd = 4\nrates_pct = [10, 50, 90]\n",
    )
    .unwrap();
    iorig(dir, &["plan", "run", "curve.toml", "-q"]);
}

fn svg_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count()
}

/// Loads `page` in headless Chromium: returns its DOM and the console lines.
fn load(chrome: &Path, page: &Path, screenshot: &Path, profile: &Path) -> (String, Vec<String>) {
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let url = format!("file://{}", page.display());
    let out = Command::new(chrome)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    let shot = Command::new(chrome)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg("--window-size=1280,2400")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let png = std::fs::read(screenshot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "screenshot is a PNG");
    (String::from_utf8(out.stdout).unwrap(), console)
}

#[test]
#[ignore = "needs chromium (apt-get install chromium chromium-driver); CI runs it as root"]
fn report_and_compare_pages_load_in_chromium() {
    let dir = tmp();
    make_runs(dir.path());
    iorig(dir.path(), &["report", "3", "--out", "rep"]);
    let out = iorig(dir.path(), &["compare", "1", "2", "--out", "cmp"]);
    assert!(out.contains('%'), "compare prints % changes: {out}");

    let chrome = chromium().expect("no chromium: apt-get install chromium chromium-driver");
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (sub, shot) in [("rep", "report.png"), ("cmp", "compare.png")] {
        let page_dir = dir.path().join(sub);
        let charts = svg_files(&page_dir);
        assert!(charts > 0, "{sub}: no charts written");
        let profile = tempfile::tempdir().unwrap();
        let (dom, console) = load(
            &chrome,
            &page_dir.join("index.html"),
            &shots.join(shot),
            profile.path(),
        );
        assert!(console.is_empty(), "{sub}: console messages: {console:?}");
        let in_dom = dom.matches("class=\"chart\"").count();
        assert_eq!(in_dom, charts, "{sub}: chart SVGs in the page vs files");
    }
}

#[test]
fn export_writes_csv_xlsx_and_json() {
    let dir = tmp();
    make_runs(dir.path());
    iorig(
        dir.path(),
        &["export", "3", "--format", "csv", "--out", "steps.csv"],
    );
    let steps = std::fs::read_to_string(dir.path().join("steps.csv")).unwrap();
    assert_eq!(
        steps.lines().count(),
        1 + 4,
        "header + max + 3 rates:\n{steps}"
    );
    let intervals = std::fs::read_to_string(dir.path().join("steps.intervals.csv")).unwrap();
    assert!(intervals.lines().count() > 4 * 3);
    iorig(
        dir.path(),
        &["export", "3", "--format", "xlsx", "--out", "run.xlsx"],
    );
    let xlsx = std::fs::read(dir.path().join("run.xlsx")).unwrap();
    assert_eq!(&xlsx[..2], b"PK", "XLSX is a zip");
    iorig(
        dir.path(),
        &["export", "3", "--format", "json", "--out", "run.json"],
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run.json")).unwrap())
            .unwrap();
    assert_eq!(v["steps"].as_array().unwrap().len(), 4);
}

/// What the page measures of itself in Chromium at `width` px: it is
/// loaded in a frame of that width by a page that reads its layout (file
/// pages may read each other with --allow-file-access-from-files).
fn layout_at(chrome: &Path, page: &Path, width: u32, shot: &Path) -> Value {
    let dir = page.parent().unwrap();
    let probe = dir.join(format!("probe-{width}.html"));
    std::fs::write(
        &probe,
        format!(
            r#"<!doctype html><html><body style="margin:0">
<iframe id="f" src="{}" style="width:{width}px;height:3000px;border:0"></iframe>
<pre id="out"></pre>
<script>
window.addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument;
  const w = d.documentElement;
  const res = {{ page_overflow: w.scrollWidth - w.clientWidth, tables: [] }};
  for (const box of d.querySelectorAll('.scroll')) {{
    const t = box.querySelector('table');
    const first = t.querySelector('tbody td');
    const rows = [...t.querySelectorAll('tbody tr:not(.notes)')].map(r => r.getBoundingClientRect().height);
    res.tables.push({{
      class: t.className,
      overflow: box.scrollWidth - box.clientWidth,
      overflow_x: getComputedStyle(box).overflowX,
      first_column: first ? getComputedStyle(first).position : 'none',
      tallest_row: Math.max(...rows),
      lowest_row: Math.min(...rows),
    }});
  }}
  document.getElementById('out').textContent = JSON.stringify(res);
}});
</script></body></html>"#,
            page.file_name().unwrap().to_string_lossy()
        ),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={},3100", width + 40))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"out\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement in {dom}"))
        .replace("&amp;", "&");
    // The page itself at that width, as a screenshot of that size.
    let png = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},1200"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(png.status.success());
    let png = std::fs::read(shot).unwrap();
    let png_width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(png_width, width, "screenshot width");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The report reads at a laptop's and a desktop's width: nothing sticks out
/// of the page, the step table fits whole (its notes under each step, not
/// in a column that makes rows tall), and any table wider than the page
/// scrolls in its box with its first column kept in view.
#[test]
#[ignore = "needs chromium (apt-get install chromium chromium-driver); CI runs it as root"]
fn the_report_fits_at_1280_and_1920_px() {
    let dir = tmp();
    // A precondition (its note is long), paced steps, and a file target
    // (the targets table), with the null engine's speed for the rest.
    std::fs::write(
        dir.path().join("p.toml"),
        "name = 'layout'\nsize = '8m'\n[defaults]\ntime = '400ms'\ninterval = '100ms'\n\
         [[steps]]\nkind = 'precondition'\nname = 'fill'\n\
         [[steps]]\nname = 'paced'\nrate = 200\nread = [0, 70, 100]\n",
    )
    .unwrap();
    iorig(
        dir.path(),
        &["plan", "run", "p.toml", "--target", "t.dat", "-q"],
    );
    iorig(dir.path(), &["report", "1", "-o", "rep"]);
    let chrome = chromium().expect("no chromium: apt-get install chromium chromium-driver");
    let page = dir.path().join("rep").join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The answer first, the facts about host and targets last.
    let at = |id: &str| html.find(&format!("id=\"{id}\"")).unwrap();
    assert!(
        at("findings") < at("steps") && at("steps") < at("run"),
        "section order"
    );
    for width in [1280, 1920] {
        let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("layout-{width}.png"));
        let m = layout_at(&chrome, &page, width, &shot);
        assert!(
            m["page_overflow"].as_f64().unwrap() <= 0.0,
            "{width} px: the page scrolls sideways: {m}"
        );
        let tables = m["tables"].as_array().unwrap();
        assert!(!tables.is_empty(), "{m}");
        for t in tables {
            assert_eq!(t["overflow_x"], "auto", "{width} px: {t}");
            assert_eq!(t["first_column"], "sticky", "{width} px: {t}");
        }
        let steps = tables
            .iter()
            .find(|t| t["class"].as_str().unwrap().contains("steps"))
            .unwrap();
        assert!(
            steps["overflow"].as_f64().unwrap() <= 0.0,
            "{width} px: the step table is cut: {steps}"
        );
        assert!(
            steps["tallest_row"].as_f64().unwrap() <= 1.6 * steps["lowest_row"].as_f64().unwrap(),
            "{width} px: a step row is oddly tall: {steps}"
        );
    }
}
