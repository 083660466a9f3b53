//! Real standard input and output: these run this test binary again as a child process
//! (selected by an environment variable).

use super::*;

const CHILD_ENV: &str = "NEARDUP_IO_TEST_CHILD";

/// The child's side; does nothing in a normal test run.
#[test]
fn child_process() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    match mode.as_str() {
        "read" => {
            let reader = open(Path::new("-"), &ReadOptions::default()).unwrap();
            println!("CHILD format {}", reader.format());
            for entry in reader {
                let e = entry.unwrap();
                let kind = match &e {
                    Entry::Record(_) => "record",
                    Entry::Skipped(s) => s.reason.code(),
                };
                println!(
                    "CHILD {} {} {:?} {kind}",
                    e.location().source,
                    e.location().line,
                    e.id()
                );
            }
        }
        "write" => {
            let record = Record {
                id: None,
                text: String::new(),
                raw: b"a line of output that is long enough to fill pipes quickly\n".to_vec(),
                location: neardup_io::Location {
                    source: "-".into(),
                    line: 1,
                    record: 1,
                },
                lossy: false,
                key: None,
                numeric_id: false,
                path: None,
            };
            let mut w = DedupWriter::create(None, Format::Lines, None).unwrap();
            for _ in 0..10_000_000 {
                if let Err(e) = w.write(&record) {
                    std::process::exit(if e.is_broken_pipe() { 42 } else { 1 });
                }
            }
            match w.finish() {
                Err(e) if e.is_broken_pipe() => std::process::exit(42),
                _ => std::process::exit(0),
            }
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn child(mode: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "stdio::child_process",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, mode);
    cmd
}

#[test]
fn stdin_is_sniffed_and_read() {
    use std::process::Stdio;
    let mut proc = child("read")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let data = fs::read(fixture("docs.jsonl.gz")).unwrap();
    let mut stdin = proc.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let out = proc.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text
        .lines()
        // libtest may print "test child_process ... " on the same line.
        .filter_map(|l| l.split_once("CHILD ").map(|(_, rest)| rest))
        .collect();
    assert_eq!(lines[0], "format jsonl");
    assert_eq!(lines.len(), 10, "{text}");
    assert_eq!(lines[1], "- 1 Some(\"1\") record");
    assert_eq!(lines[4], "- 4 None malformed_json");
    assert_eq!(lines[9], "- 9 Some(\"9\") record");
}

#[cfg(unix)]
#[test]
fn closed_stdout_is_a_broken_pipe() {
    use std::io::Read;
    use std::process::Stdio;
    let mut proc = child("write").stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = proc.stdout.take().unwrap();
    let mut first = [0u8; 4096];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = proc.wait().unwrap();
    assert_eq!(status.code(), Some(42), "the child saw a broken pipe");
}
