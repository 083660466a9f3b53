//! Helpers shared by the CLI tests: running the binary, reading its outputs, test data.

pub use std::path::{Path, PathBuf};
pub use std::process::Output;

pub use assert_cmd::Command;
pub use serde_json::Value;

/// The repository's `testdata/` folder.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The shipped listings, matched on two columns at t = 0.7.
pub const LISTINGS: &[&str] = &[
    "cli/listings.tsv",
    "--text-columns",
    "Title,Short Description",
    "--id-column",
    "id",
    "-t",
    "0.7",
];

/// Runs `neardup ARGS` with the test data folder as working directory.
pub fn neardup(args: &[&str]) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(testdata(""))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `neardup ARGS` with `input` on its standard input.
pub fn neardup_stdin(args: &[&str], input: impl Into<Vec<u8>>) -> Output {
    Command::cargo_bin("neardup")
        .unwrap()
        .args(args)
        .write_stdin(input.into())
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Runs and expects success, returning stdout.
pub fn ok(args: &[&str]) -> String {
    let o = neardup(args);
    assert!(
        o.status.success(),
        "neardup {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

pub fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The summary with timings replaced, so it can be compared as a golden file.
pub fn summary_without_times(s: &str) -> String {
    s.lines()
        .map(|line| {
            // The peak memory varies from run to run like the times do.
            if line.starts_with("peak ") {
                return "peak      <memory>".to_string();
            }
            line.split(' ')
                .map(|w| {
                    let t = w.trim_end_matches(',');
                    let is_time = t.ends_with('s')
                        && t.len() > 1
                        && t[..t.len() - 1]
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == '.');
                    if is_time {
                        "<time>"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses "read N = kept K + removed R + skipped S" from a summary.
pub fn accounting(summary: &str) -> (u64, u64, u64, u64) {
    let line = summary
        .lines()
        .find(|l| l.starts_with("result"))
        .expect("result line");
    let nums: Vec<u64> = line
        .split_once("read ")
        .unwrap()
        .1
        .split(|c: char| !c.is_ascii_digit() && c != ',')
        .filter(|w| !w.is_empty() && *w != ",")
        .map(|w| w.replace(',', "").parse().unwrap())
        .collect();
    (nums[0], nums[1], nums[2], nums[3])
}

pub fn summary_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes `content` to `name` in a new temporary folder; returns both.
pub fn temp_file(name: &str, content: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    (dir, path)
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The options `neardup COMMAND --help` lists, one per line (`-o, --output`), without
/// their help: a change to what a command offers shows in its golden file.
pub fn options_listed(command: &str) -> String {
    let help = ok(&[command, "--help"]);
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--") || (l.starts_with('-') && l.get(2..4) == Some(", ")))
        .map(|l| l.split("  ").next().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A FIFO nobody writes to: a command that opens it to read blocks for ever, so one that
/// returns has read nothing from it.
#[cfg(unix)]
pub fn silent_fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    path
}

/// Runs `neardup ARGS`, killed after a minute (a safety net: a refusal made before
/// reading returns at once, one made after reading a silent FIFO never does).
#[cfg(unix)]
pub fn neardup_or_hang(args: &[&str]) -> Output {
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(testdata(""))
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{args:?} read the FIFO: killed");
    o
}

/// Listings whose titles start with a quote: TSV has no quoting, so every row is a
/// listing (the CSV parser had merged 18 rows into one and dropped the rest of the file).
pub const QUOTED_TITLES_TSV: &str = "id\ttitle\tdescription\tprice\n\
    1\t\"Bilocale\" luminoso\tDue camere con balcone, cucina abitabile, vicino alla metro\t900\n\
    2\tTrilocale con \"vista\" mare\tTre camere, terrazzo sul mare, garage e cantina inclusi\t1200\n\
    3\t\"Monolocale arredato\tUn ambiente con angolo cottura, arredato, ideale per studenti\t500\n\
    4\tAttico \"panoramico\"\tUltimo piano con terrazza panoramica e ascensore privato\t2000\n\
    5\t\"Bilocale\" luminoso\tDue camere con balcone, cucina abitabile, vicino alla metro!\t910\n\
    6\tBox auto\tPosto auto coperto in garage condominiale, accesso con telecomando\t100\n";

/// `sim A B --json` with extra options: the exact Jaccard.
pub fn unicode_sim(a: &str, b: &str, extra: &[&str]) -> f64 {
    let out = ok(&[&["sim", a, b, "--json"][..], extra].concat());
    serde_json::from_str::<Value>(&out).unwrap()["jaccard"]
        .as_f64()
        .unwrap()
}

/// A small deterministic generator for the accounting corpora.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Two near-duplicate records and one other, as JSONL.
pub const OUT_JSONL: &str = concat!(
    "{\"id\": \"a\", \"text\": \"red bike for sale, barely used, with lights\"}\n",
    "{\"id\": \"b\", \"text\": \"red bike for sale, barely used, with lights!\"}\n",
    "{\"id\": \"c\", \"text\": \"a completely different story about the sea\"}\n",
);

/// The names in `dir` that start with `.neardup-`: temporary files or folders left over.
pub fn litter(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".neardup-"))
        .collect()
}

/// `bytes` compressed by the `gzip` command (the CLI's tests do not depend on flate2).
pub fn gzip_bytes(bytes: &[u8]) -> Vec<u8> {
    let o = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success());
    o.stdout
}

/// Starts `neardup pairs` on 2,000 identical documents (2 million pairs, ~70 MB of
/// output) into `out`, waits until its temporary file appears, sends `signal`, and
/// checks that it exits with `code`, leaves no temporary file, and `out` is unchanged.
#[cfg(unix)]
pub fn interrupted_write_leaves_nothing(signal: &str, expected: i32) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.txt");
    std::fs::write(
        &input,
        "the same sentence about a red bike, again and again\n".repeat(2000),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    std::fs::write(&out, "old\n").unwrap();
    let args = [
        "pairs",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let status = signal_once_it_writes(&args, dir.path(), signal);
    assert_eq!(status.code(), Some(expected), "{status}");
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
}

/// Runs `neardup ARGS -q`, waits until it has a temporary output in `dir`, sends it
/// `signal`, and returns how
/// it ended.
#[cfg(unix)]
pub fn signal_once_it_writes(args: &[&str], dir: &Path, signal: &str) -> std::process::ExitStatus {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neardup"))
        .args(args)
        .arg("-q")
        .spawn()
        .unwrap();
    let start = Instant::now();
    while litter(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary output"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("finished before the signal: {status}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let killed = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap()
}

/// Runs and expects exit code 2 with a message holding every one of `needles`.
pub fn refused(args: &[&str], needles: &[&str]) {
    let o = neardup(args);
    assert_eq!(o.status.code(), Some(2), "neardup {args:?}: {}", stderr(&o));
    let err = stderr(&o);
    for n in needles {
        assert!(err.contains(n), "neardup {args:?}: {n:?} not in {err}");
    }
}

/// Two documents sharing their first 20,000 bytes, then 100,000 different ones each
/// (distinct numbered words, so the shared part is about a sixth of each set).
pub fn long_pair_sharing_a_prefix() -> (tempfile::TempDir, PathBuf) {
    let words = |tag: char, bytes: usize| {
        let mut s = String::new();
        let mut i = 0u64;
        while s.len() < bytes {
            s.push_str(&format!("{tag}{i} "));
            i += 1;
        }
        s
    };
    let shared = words('s', 20_000);
    let a = format!("{shared}{}", words('a', 100_000));
    let b = format!("{shared}{}", words('b', 100_000));
    temp_file(
        "long.jsonl",
        &format!("{{\"text\":\"{a}\"}}\n{{\"text\":\"{b}\"}}\n"),
    )
}

/// A corpus of copies among distinct records, blank and malformed lines, CRLF endings and
/// a few user ids; and the output dedup must write: each distinct record's first copy.
pub fn copies_corpus() -> (String, String) {
    let mut input = String::new();
    let mut expected = String::new();
    let texts = [
        "a bright two bedroom apartment near the river",
        "an old bicycle with a new chain and two baskets",
        "fresh sourdough bread baked every single morning",
    ];
    let mut seen = [false; 3];
    for i in 0..3000 {
        let which = (i * 7 + i / 13) % 3;
        let line = match i % 50 {
            0 => "\n".to_string(),
            1 => "{not json\n".to_string(),
            2 => format!("{{\"id\": \"u{i}\", \"text\": \"{}\"}}\r\n", texts[which]),
            _ => format!("{{\"text\": \"{}\", \"n\": {i}}}\n", texts[which]),
        };
        input.push_str(&line);
        if !line.starts_with("{\"") || seen[which] {
            continue;
        }
        seen[which] = true;
        expected.push_str(&line);
    }
    (input, expected)
}

/// The exit code and peak resident memory of a run, as its summary states it (VmHWM of
/// its own address space: a child's `ru_maxrss` would also count the test process's
/// own peak, which the child inherits when it is spawned).
#[cfg(target_os = "linux")]
pub fn peak_memory(args: &[&str]) -> (i32, u64) {
    let o = neardup(
        &args
            .iter()
            .copied()
            .filter(|&a| a != "-q")
            .collect::<Vec<_>>(),
    );
    let err = stderr(&o);
    let peak = err
        .lines()
        .find_map(|l| l.strip_prefix("peak"))
        .unwrap_or_else(|| panic!("no peak in {err}"));
    let peak = peak.trim().trim_end_matches(" resident");
    let (number, unit) = peak.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => panic!("unit {unit}"),
    };
    let bytes = number.parse::<f64>().unwrap() * scale;
    (o.status.code().unwrap_or(-1), bytes as u64)
}

/// Bytes of peak memory per record beyond a fixed allowance, for junk inputs. Before the
/// fix a blank line cost ~490 bytes and an identical copy ~820; the targets (50M blank
/// lines in 100 MB, 10M copies in 400 MB) allow 2 and 40.
#[cfg(target_os = "linux")]
pub fn bytes_per_record(args: &[&str], records: u64) -> f64 {
    const ALLOWANCE: u64 = 48 << 20;
    let (code, peak) = peak_memory(args);
    assert_eq!(code, 0, "neardup {args:?}");
    peak.saturating_sub(ALLOWANCE) as f64 / records as f64
}

/// `n` near-copies of one 60-word text, each with two words replaced: all pairs similar.
pub fn mutual_near_copies(n: usize) -> String {
    let base: Vec<String> = (0..60)
        .map(|i| format!("word{}", (i * 7919) % 1000))
        .collect();
    let mut out = String::new();
    for d in 0..n {
        let mut words = base.clone();
        words[(d * 13) % 60] = format!("x{d}");
        words[(d * 29 + 5) % 60] = format!("y{d}");
        out.push_str(&words.join(" "));
        out.push('\n');
        if d % 10 == 0 {
            out.push_str(&words.join(" "));
            out.push('\n');
        }
    }
    out
}

/// Writes `batch` as a Parquet file (arrow-rs's defaults).
pub fn write_parquet(path: &Path, batch: &arrow_array::RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// The rows of a Parquet file, in one batch.
pub fn parquet_batch(path: &Path) -> arrow_array::RecordBatch {
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(path).unwrap(),
    )
    .unwrap();
    let schema = builder.schema().clone();
    let batches: Vec<_> = builder.build().unwrap().map(Result::unwrap).collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}
