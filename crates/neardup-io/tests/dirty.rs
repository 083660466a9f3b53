//! Dirty inputs: every fixture of `testdata/dirty/` read against `expected.json` there
//! (records, lossy records, skips by reason with their file and line, texts, ids, hard
//! errors); a very long line generated here with the memory it takes measured; standard
//! input that is empty or closes in the middle of a line.
//!
//! This is its own test binary because it installs a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use neardup_io::{
    open, DedupWriter, Entry, Error, Format, ReadOptions, Reader, SkipReason,
    DEFAULT_MAX_RECORD_BYTES,
};
use serde_json::Value;

// ---------------------------------------------------------------- memory accounting

/// The system allocator, counting the bytes live on each thread and their peak, so a
/// test measures its own reads whatever other tests do at the same time.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    // `try_with`: the thread-local may be gone while a thread shuts down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as isize);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as isize);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Old and new blocks may both be live for a moment: count the peak as if so.
        track(new_size as isize);
        track(-(layout.size() as isize));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result, the peak of the bytes it had live at once on this
/// thread, and the bytes it left live.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, isize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get) - start;
    let left = LIVE.with(Cell::get) - start;
    (out, peak.max(0) as usize, left)
}

// ---------------------------------------------------------------- the fixtures

fn dirty_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/dirty")
}

fn expected() -> Value {
    let text = fs::read_to_string(dirty_dir().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The read options of a fixture: the defaults, changed by its `options` object.
fn options(fixture: &Value) -> ReadOptions {
    let mut opts = ReadOptions::default();
    let Some(o) = fixture.get("options") else {
        return opts;
    };
    for (key, value) in o.as_object().unwrap() {
        let s = || value.as_str().unwrap().to_string();
        match key.as_str() {
            "format" => opts.format = Some(s().parse().unwrap()),
            "text_field" => opts.text_field = s(),
            "id_field" => opts.id_field = s(),
            "id_column" => opts.id_column = Some(s()),
            "text_columns" => {
                opts.text_columns = value
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect()
            }
            "max_record_bytes" => opts.max_record_bytes = value.as_u64().unwrap() as usize,
            "quote" => opts.quote = Some(*s().as_bytes().first().unwrap()),
            "tsv_escapes" => opts.tsv_escapes = value.as_bool().unwrap(),
            other => panic!("unknown option {other}"),
        }
    }
    opts
}

/// What reading a fixture gave.
struct Outcome {
    entries: Vec<Entry>,
    error: Option<Error>,
}

fn read_fixture(path: &Path, opts: &ReadOptions) -> Outcome {
    let mut entries = Vec::new();
    let reader = match open(path, opts) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                entries,
                error: Some(e),
            }
        }
    };
    for entry in reader {
        match entry {
            Ok(e) => entries.push(e),
            Err(e) => {
                return Outcome {
                    entries,
                    error: Some(e),
                }
            }
        }
    }
    Outcome {
        entries,
        error: None,
    }
}

fn error_kind(e: &Error) -> &'static str {
    match e {
        Error::Gzip { .. } => "gzip",
        Error::MissingColumn { .. } => "missing_column",
        Error::BadHeader { .. } => "bad_header",
        Error::Read { .. } => "read",
        _ => "other",
    }
}

fn error_line(e: &Error) -> Option<u64> {
    match e {
        Error::Gzip { line, .. } | Error::Read { line, .. } => *line,
        Error::BadHeader { line, .. } => Some(*line),
        _ => None,
    }
}

/// Every difference between what a fixture gave and what `expected.json` says.
fn differences(fixture: &Value) -> Vec<String> {
    let name = fixture["file"].as_str().unwrap();
    let path = dirty_dir().join(name);
    let opts = options(fixture);
    let got = read_fixture(&path, &opts);
    let mut diffs = Vec::new();
    let mut check = |what: &str, got: Value, want: &Value| {
        if &got != want {
            diffs.push(format!("{name}: {what}: got {got}, expected {want}"));
        }
    };

    let records: Vec<_> = got.entries.iter().filter_map(Entry::record).collect();
    check("records", records.len().into(), &fixture["records"]);
    let lossy = records.iter().filter(|r| r.lossy).count();
    check("lossy", lossy.into(), &fixture["lossy"]);

    let mut counts = BTreeMap::new();
    let mut skips = Vec::new();
    for e in &got.entries {
        if let Entry::Skipped(s) = e {
            *counts.entry(s.reason.code()).or_insert(0u64) += 1;
            let mut skip = serde_json::json!({
                "line": s.location.line,
                "reason": s.reason.code(),
            });
            if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
                let file = Path::new(&*s.location.source)
                    .strip_prefix(dirty_dir())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                skip["file"] = file.into();
            } else {
                // A file's entries name it as it was given.
                assert_eq!(&*s.location.source, path.display().to_string());
            }
            skips.push(skip);
        }
    }
    check(
        "skipped",
        serde_json::to_value(&counts).unwrap(),
        &fixture["skipped"],
    );
    check("skips", Value::Array(skips), &fixture["skips"]);
    if let Some(texts) = fixture.get("texts") {
        let got: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
        check("texts", serde_json::to_value(got).unwrap(), texts);
    }
    if let Some(ids) = fixture.get("ids") {
        let got: Vec<Option<&str>> = records.iter().map(|r| r.id.as_deref()).collect();
        check("ids", serde_json::to_value(got).unwrap(), ids);
    }

    // Record numbers count every entry; lines increase.
    for (i, e) in got.entries.iter().enumerate() {
        assert_eq!(e.location().record, i as u64 + 1, "{name}: {e:?}");
    }
    if !fs::metadata(&path).unwrap().is_dir() {
        let lines: Vec<u64> = got.entries.iter().map(|e| e.location().line).collect();
        assert!(
            lines.windows(2).all(|w| w[0] < w[1]),
            "{name}: lines {lines:?}"
        );
    }

    match (&got.error, &fixture["error"]) {
        (None, Value::Null) => {}
        (Some(e), Value::Null) => diffs.push(format!("{name}: unexpected error {e}")),
        (None, want) => diffs.push(format!("{name}: no error, expected {want}")),
        (Some(e), want) => {
            check("error kind", error_kind(e).into(), &want["kind"]);
            let line = error_line(e);
            check("error line", line.into(), &want["line"]);
            let msg = e.to_string();
            for part in want["contains"].as_array().unwrap() {
                let part = part.as_str().unwrap();
                if !msg.contains(part) {
                    diffs.push(format!("{name}: error {msg:?} lacks {part:?}"));
                }
            }
        }
    }
    diffs
}

#[test]
fn every_fixture_reads_as_expected() {
    let all = expected();
    let fixtures = all["fixtures"].as_array().unwrap();
    let diffs: Vec<String> = fixtures.iter().flat_map(differences).collect();
    assert!(diffs.is_empty(), "\n{}", diffs.join("\n"));
}

#[test]
fn every_fixture_is_listed_once() {
    let all = expected();
    let listed: Vec<&str> = all["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    let mut on_disk: Vec<String> = fs::read_dir(dirty_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !matches!(
                n.as_str(),
                "expected.json" | "make_fixtures.py" | "README.md" | ".gitattributes"
            )
        })
        .collect();
    on_disk.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len(), "a fixture is listed twice");
    assert_eq!(sorted, on_disk);
}

/// A `Vec` that can be read after a writer took it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn fixtures_without_skips_round_trip() {
    let all = expected();
    let mut checked = 0;
    for fixture in all["fixtures"].as_array().unwrap() {
        let name = fixture["file"].as_str().unwrap();
        let path = dirty_dir().join(name);
        if fs::metadata(&path).unwrap().is_dir() || name.ends_with(".gz") {
            continue;
        }
        let opts = options(fixture);
        let Ok(reader) = open(&path, &opts) else {
            continue;
        };
        let format = reader.format();
        let header = reader.header_raw().map(<[u8]>::to_vec);
        let entries: Vec<Entry> = reader.map(|e| e.unwrap()).collect();
        if !entries.iter().all(|e| matches!(e, Entry::Record(_))) {
            continue;
        }
        let out = Shared::default();
        let mut w =
            DedupWriter::from_writer(out.clone(), "memory", format, header.as_deref()).unwrap();
        for e in &entries {
            w.write(e.record().unwrap()).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(*out.0.lock().unwrap(), fs::read(&path).unwrap(), "{name}");
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} fixtures round-tripped");
}

// ---------------------------------------------------------------- a very long line

/// A stream of `prefix`, then `len` copies of `fill`, then `suffix`, made as it is read:
/// the input itself takes no memory.
struct Generated {
    parts: Vec<(Vec<u8>, u64)>,
}

impl Generated {
    fn new(parts: Vec<(Vec<u8>, u64)>) -> Generated {
        let mut parts = parts;
        parts.reverse();
        Generated { parts }
    }

    /// `prefix`, `len` bytes `fill`, `suffix`.
    fn line(prefix: &[u8], fill: u8, len: u64, suffix: &[u8]) -> Vec<(Vec<u8>, u64)> {
        vec![
            (prefix.to_vec(), 1),
            (vec![fill], len),
            (suffix.to_vec(), 1),
        ]
    }
}

impl Read for Generated {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some((unit, times)) = self.parts.last_mut() else {
                return Ok(0);
            };
            if *times == 0 || unit.is_empty() {
                self.parts.pop();
                continue;
            }
            if unit.len() == 1 {
                let n = (out.len() as u64).min(*times) as usize;
                out[..n].fill(unit[0]);
                *times -= n as u64;
                return Ok(n);
            }
            let n = unit.len().min(out.len());
            out[..n].copy_from_slice(&unit[..n]);
            if n == unit.len() {
                *times -= 1;
            } else {
                unit.drain(..n);
            }
            return Ok(n);
        }
    }
}

const LONG: u64 = 50_000_000;

/// Reads a generated input of a 50 MB record between small ones; returns the entries'
/// (code, line, text length), the peak memory of reading, and what was left live.
fn read_long(
    format: Format,
    parts: Vec<(Vec<u8>, u64)>,
    opts: ReadOptions,
) -> (Vec<(String, u64, usize)>, usize) {
    let opts = opts.with_format(format);
    let (summary, peak, left) = measure(|| {
        let reader = Reader::from_reader(Generated::new(parts), "long", &opts).unwrap();
        let mut summary = Vec::new();
        for entry in reader {
            // Each record is dropped before the next is read, as a streaming caller would.
            let entry = entry.unwrap();
            let (code, len) = match &entry {
                Entry::Record(r) => ("record".to_string(), r.text.len()),
                Entry::Skipped(s) => (s.reason.code().to_string(), 0),
            };
            summary.push((code, entry.location().line, len));
        }
        summary
    });
    assert!(
        left < 1 << 20,
        "{format}: {left} bytes left live after reading"
    );
    (summary, peak)
}

fn small(line: &[u8], n: u64) -> (Vec<u8>, u64) {
    (line.to_vec(), n)
}

/// The peak memory of reading a 50 MB record is a small multiple of the record (its raw
/// bytes, its text, the buffers they are built in), not of the input.
const PEAK_FACTOR: f64 = 4.0;

fn check_peak(format: Format, peak: usize) {
    let bound = PEAK_FACTOR * LONG as f64 + (16 << 20) as f64;
    assert!(
        (peak as f64) < bound,
        "{format}: reading a {LONG}-byte record peaked at {peak} bytes (bound {bound})"
    );
    eprintln!(
        "{format}: a {LONG}-byte record peaks at {:.2}x its size",
        peak as f64 / LONG as f64
    );
}

#[test]
fn a_50_mb_jsonl_line_is_read_with_bounded_memory() {
    let mut parts = vec![small(b"{\"text\":\"before\"}\n", 1000)];
    parts.extend(Generated::line(
        b"{\"id\":\"long\",\"text\":\"",
        b'a',
        LONG,
        b"\"}\n",
    ));
    parts.push(small(b"{\"text\":\"after\"}\n", 1000));
    let (summary, peak) = read_long(Format::Jsonl, parts, ReadOptions::default());
    assert_eq!(summary.len(), 2001);
    assert_eq!(summary[1000], ("record".to_string(), 1001, LONG as usize));
    assert_eq!(summary[2000], ("record".to_string(), 2001, 5));
    check_peak(Format::Jsonl, peak);
}

#[test]
fn a_50_mb_line_is_read_with_bounded_memory() {
    let mut parts = vec![small(b"before\n", 10)];
    parts.extend(Generated::line(b"long\t", b'x', LONG, b"\r\n"));
    parts.push(small(b"after\n", 10));
    let (summary, peak) = read_long(Format::Lines, parts, ReadOptions::default());
    assert_eq!(summary.len(), 21);
    assert_eq!(summary[10], ("record".to_string(), 11, LONG as usize));
    check_peak(Format::Lines, peak);
}

#[test]
fn a_50_mb_csv_row_is_read_with_bounded_memory() {
    let mut parts = vec![small(b"id,text,more\n", 1), small(b"1,before,x\n", 10)];
    // A quoted field with line ends inside, and many fields after it that are not kept.
    parts.extend(Generated::line(b"2,\"", b'\n', LONG, b"\""));
    parts.push(small(b",", 1_000_000));
    parts.push(small(b"\n3,after,x\n", 1));
    let opts = ReadOptions::default().with_id_column("id");
    let (summary, peak) = read_long(Format::Csv, parts, opts);
    assert_eq!(summary.len(), 12);
    assert_eq!(summary[10], ("record".to_string(), 12, LONG as usize));
    assert_eq!(summary[11], ("record".to_string(), 12 + LONG + 1, 5));
    check_peak(Format::Csv, peak);
}

#[test]
fn records_over_the_limit_are_skipped_without_being_held() {
    let over = DEFAULT_MAX_RECORD_BYTES as u64 + 1;
    for format in [Format::Jsonl, Format::Lines, Format::Csv] {
        let mut parts = vec![small(b"text\n", 1), small(b"before\n", 1)];
        parts.extend(Generated::line(b"", b'y', over, b"\n"));
        parts.push(small(b"after\n", 1));
        let (summary, peak) = read_long(format, parts, ReadOptions::default());
        // (The small lines are not JSON: for JSONL they are malformed_json skips.)
        let codes: Vec<&str> = summary.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(codes.len(), if format == Format::Csv { 3 } else { 4 });
        assert_eq!(codes[codes.len() - 2], "too_large", "{format}: {codes:?}");
        // Held up to the limit before it is known to be too large (CSV: its raw bytes
        // and its text field), then let go.
        let bound = DEFAULT_MAX_RECORD_BYTES * 3 + (8 << 20);
        assert!(
            peak < bound,
            "{format}: skipping a huge record peaked at {peak} bytes"
        );
        eprintln!(
            "{format}: skipping a record over the limit peaks at {:.2}x the limit",
            peak as f64 / DEFAULT_MAX_RECORD_BYTES as f64
        );
    }
    // The reason says how large the record was.
    let mut parts = Generated::line(b"", b'z', 100, b"\n");
    parts.push(small(b"ok\n", 1));
    let reader = Reader::from_reader(
        Generated::new(parts),
        "small limit",
        &ReadOptions::default()
            .with_format(Format::Lines)
            .with_max_record_bytes(50),
    )
    .unwrap();
    let entries: Vec<Entry> = reader.map(Result::unwrap).collect();
    match &entries[0] {
        Entry::Skipped(s) => {
            assert_eq!(
                s.reason,
                SkipReason::TooLarge {
                    size: 101,
                    limit: 50
                }
            );
            assert_eq!(s.location.line, 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(entries[1].record().unwrap().text, "ok");
}

#[test]
fn a_zero_limit_is_refused() {
    let err = Reader::from_reader(
        std::io::empty(),
        "-",
        &ReadOptions::default().with_max_record_bytes(0),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidOptions(_)), "{err:?}");
}

// ---------------------------------------------------------------- standard input

const CHILD_ENV: &str = "NEARDUP_IO_DIRTY_CHILD";

/// The child's side: reads standard input and prints what it got.
#[test]
fn child_process() {
    if std::env::var(CHILD_ENV).is_err() {
        return;
    }
    let reader = open(Path::new("-"), &ReadOptions::default()).unwrap();
    let format = reader.format();
    let mut kinds = Vec::new();
    for entry in reader {
        match entry {
            Ok(Entry::Record(_)) => kinds.push("record".to_string()),
            Ok(Entry::Skipped(s)) => kinds.push(s.reason.code().to_string()),
            Err(e) => kinds.push(format!("error {e}")),
        }
    }
    println!("CHILD {format} [{}]", kinds.join(","));
}

/// Runs this test binary as a child reading `stdin` (`None`: no standard input at all).
fn child_reads(stdin: Option<&[u8]>) -> String {
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child_process",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, "1")
    .stdout(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut proc = cmd.spawn().unwrap();
    if let Some(data) = stdin {
        let mut pipe = proc.stdin.take().unwrap();
        pipe.write_all(data).unwrap();
        // Closing the pipe here is standard input closing, possibly mid-line.
    }
    let out = proc.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .find_map(|l| l.split_once("CHILD ").map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| panic!("no answer from the child: {text}"))
}

#[test]
fn empty_stdin_is_zero_records_and_no_error() {
    assert_eq!(child_reads(None), "lines []");
    assert_eq!(child_reads(Some(b"")), "lines []");
}

#[test]
fn stdin_that_closes_mid_line_ends_with_that_partial_line() {
    assert_eq!(
        child_reads(Some(b"{\"text\":\"a\"}\n{\"text\":\"cut")),
        "jsonl [record,malformed_json]"
    );
    assert_eq!(child_reads(Some(b"one\ntw")), "lines [record,record]");
    // A gzip stream cut short on standard input is a gzip error naming `-`.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&b"{\"text\":\"a long enough line\"}\n".repeat(200))
        .unwrap();
    let gz = enc.finish().unwrap();
    let got = child_reads(Some(&gz[..gz.len() / 2]));
    assert!(
        got.starts_with("lines [") || got.starts_with("jsonl ["),
        "{got}"
    );
    assert!(got.contains("error -:"), "{got}");
    assert!(got.contains("gzip"), "{got}");
}
