//! Outputs: files, directories, special files, gzip, signals while writing, TSV, streamed pairs and closed pipes.

use crate::common::*;

/// A reader that stops early (like `head -1`) ends the run quietly and successfully.
#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("neardup"))
        .current_dir(testdata(""))
        .args(["pairs", "pypi-summaries.jsonl", "-t", "0.5", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take()); // the reader goes away after one line
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(first.starts_with(b"{\"a\":"));
}

#[test]
fn tsv_output_holds_the_same_pairs_and_clusters_as_jsonl() {
    let args = ["cli/stories.txt", "-q"];
    for mode in ["pairs", "clusters"] {
        let json = ok(&[&[mode][..], &args].concat());
        let tsv = ok(&[&[mode][..], &args, &["--output-format", "tsv"]].concat());
        let mut lines = tsv.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
        let objects = json_lines(&json);
        assert!(!objects.is_empty());
        assert_eq!(rows.len(), objects.len(), "{mode}: one row per JSON line");
        for (row, obj) in rows.iter().zip(&objects) {
            assert_eq!(row.len(), header.len());
            for (name, field) in header.iter().zip(row) {
                let expected = match &obj[name] {
                    // JSON names `truncated` only when true.
                    Value::Null if *name == "truncated" => "false".to_string(),
                    Value::Null => String::new(),
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                assert_eq!(*field, expected, "{mode}: column {name}");
            }
        }
    }
    // Ids with tabs, line breaks or backslashes are escaped, one row per pair.
    let jsonl = "{\"id\":\"a\\tb\",\"text\":\"the same words twice over\"}\n\
                 {\"id\":\"c\\\\d\\ne\",\"text\":\"the same words twice over\"}\n";
    let o = neardup_stdin(&["pairs", "-", "-q", "--output-format", "tsv"], jsonl);
    assert_eq!(
        stdout(&o),
        "a\tb\tjaccard\testimate\ttruncated\na\\tb\tc\\\\d\\ne\t1.0\t\tfalse\n"
    );
    // dedup writes the input's own format: the option is a usage error there.
    let o = neardup(&["dedup", "cli/stories.txt", "--output-format", "tsv"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--output-format"));
}

#[cfg(unix)]
#[test]
fn outputs_special_files_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, input) = temp_file("a.jsonl", OUT_JSONL);
    let input = input.to_str().unwrap();
    // A character device (made here, as /dev/null is: 1, 3) stays a device.
    let dev = dir.path().join("n");
    let made = std::process::Command::new("mknod")
        .args([dev.to_str().unwrap(), "c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let o = neardup(&["dedup", input, "-o", dev.to_str().unwrap(), "-q"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let t = std::fs::symlink_metadata(&dev).unwrap().file_type();
        assert!(t.is_char_device(), "the device was replaced: {t:?}");
    }
    // A FIFO's reader gets the output.
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = neardup(&["dedup", input, "-o", fifo.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = reader.join().unwrap();
    assert_eq!(String::from_utf8(got).unwrap().lines().count(), 2);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // A link to a file: the file is replaced, the link stays a link.
    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
    let o = neardup(&["dedup", input, "-o", link.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 2);
    // pairs and --skipped go through the same opener.
    let o = neardup(&[
        "pairs",
        input,
        "-o",
        link.to_str().unwrap(),
        "--skipped",
        "/dev/null",
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("\"a\":\"a\""));
    // A dangling link is an error, and is left as it is.
    let dangling = dir.path().join("dangling.jsonl");
    std::os::unix::fs::symlink("nowhere/x.jsonl", &dangling).unwrap();
    let o = neardup(&["dedup", input, "-o", dangling.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("dangling"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    // Another name for the input (a hard link) is refused, by device and inode.
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(input, &hard).unwrap();
    for flag in ["-o", "--removed"] {
        let o = neardup(&["dedup", input, flag, hard.to_str().unwrap(), "-q"]);
        assert_eq!(code(&o), 2, "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains("refusing"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(input).unwrap(), OUT_JSONL);
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
}

#[test]
fn outputs_several_directories_keep_every_file() {
    let dir = tempfile::tempdir().unwrap();
    for (root, text) in [
        ("dA", "the first story about a red bike and its owner"),
        ("dB", "another tale entirely, of ships and of the sea"),
    ] {
        std::fs::create_dir_all(dir.path().join(root)).unwrap();
        std::fs::write(dir.path().join(root).join("x.txt"), text).unwrap();
    }
    let out = dir.path().join("out");
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "dB", "-o", "out"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 2 "), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("dA/x.txt")).unwrap(),
        "the first story about a red bike and its owner"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("dB/x.txt")).unwrap(),
        "another tale entirely, of ships and of the sea"
    );
    // The same root twice: told apart, still every file.
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "./dA", "-o", "out2", "-t", "0.99"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Identical files: one kept, one removed; the kept one is where the summary says.
    assert!(stderr(&o).contains("kept 1 "), "{}", stderr(&o));
    assert!(dir.path().join("out2/dA/x.txt").is_file());
    assert!(!dir.path().join("out2/dA-2").exists());
    // One root keeps the flat layout.
    let o = Command::cargo_bin("neardup")
        .unwrap()
        .current_dir(dir.path())
        .args(["dedup", "dA", "-o", "out3"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.path().join("out3/x.txt").is_file());
}

#[test]
fn outputs_gz_names_are_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.jsonl.gz");
    std::fs::write(&input, gzip_bytes(OUT_JSONL.as_bytes())).unwrap();
    let out = dir.path().join("y.jsonl.gz");
    let o = neardup(&[
        "dedup",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b], "not gzip");
    // neardup reads its own output back: 2 records.
    let o = neardup(&["clusters", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("read 2 "), "{}", stderr(&o));
    let pairs = dir.path().join("p.jsonl.gz");
    let o = neardup(&[
        "pairs",
        input.to_str().unwrap(),
        "-o",
        pairs.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(&std::fs::read(&pairs).unwrap()[..2], [0x1f, 0x8b]);
}

#[test]
fn outputs_closed_stdin_is_an_error() {
    let bin = assert_cmd::cargo::cargo_bin("neardup");
    let o = std::process::Command::new("sh")
        .args(["-c", "exec \"$0\" pairs - <&-"])
        .arg(&bin)
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot read standard input"),
        "{}",
        stderr(&o)
    );
    // An empty standard input is no error.
    let o = std::process::Command::new(&bin)
        .args(["pairs", "-", "-q"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn outputs_trailing_bytes_after_gzip_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.jsonl.gz");
    let mut bytes = gzip_bytes(OUT_JSONL.as_bytes());
    let n = bytes.len();
    bytes.extend_from_slice(b"garbage");
    std::fs::write(&input, &bytes).unwrap();
    let o = neardup(&["pairs", input.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("trailing bytes after the gzip stream at byte {n}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn outputs_lone_surrogate_id_is_kept_lossily() {
    let (_d, path) = temp_file(
        "s.jsonl",
        concat!(
            "{\"id\": \"x\\ud800y\", \"text\": \"red bike for sale, barely used, with lights\"}\n",
            "{\"id\": \"b\", \"text\": \"red bike for sale, barely used, with lights!\"}\n",
        ),
    );
    let o = neardup(&["pairs", path.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines[0]["a"], "x\u{FFFD}y", "{}", stdout(&o));
    assert!(stderr(&o).contains("decoded lossily"), "{}", stderr(&o));
}

#[cfg(unix)]
#[test]
fn outputs_sigterm_while_writing_removes_the_temporary_file() {
    interrupted_write_leaves_nothing("-TERM", 143);
}

#[cfg(unix)]
#[test]
fn outputs_sigint_while_writing_removes_the_temporary_file() {
    interrupted_write_leaves_nothing("-INT", 130);
}

/// dedup of a directory of 3,000 files, interrupted while the kept files are copied into
/// the temporary folder beside the output: no folder is left, no output appears.
#[cfg(unix)]
#[test]
fn outputs_sigterm_while_copying_a_directory_removes_the_temporary_folder() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for i in 0..3000 {
        let sub = src.join(format!("d{}", i % 30));
        std::fs::create_dir_all(&sub).unwrap();
        let text = format!("document number {i} says {} ", i * 7919).repeat(400);
        std::fs::write(sub.join(format!("f{i}.txt")), text).unwrap();
    }
    let out = dir.path().join("out");
    let args = ["dedup", src.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let status = signal_once_it_writes(&args, dir.path(), "-TERM");
    assert_eq!(status.code(), Some(143), "{status}");
    assert!(litter(dir.path()).is_empty(), "{:?}", litter(dir.path()));
    assert!(!out.exists());
}

#[test]
fn pairs_output_order_is_deterministic_whatever_the_threads() {
    let (_dir, path) = temp_file("near.txt", &mutual_near_copies(300));
    let path = path.to_str().unwrap();
    for format in ["jsonl", "tsv"] {
        let run = |threads: &str| {
            ok(&[
                "pairs",
                path,
                "-q",
                "-t",
                "0.7",
                "--threads",
                threads,
                "--output-format",
                format,
            ])
        };
        let one = run("1");
        assert_eq!(one, run("2"), "{format}");
        assert_eq!(one, run("2"), "{format}, again");
        let lines: Vec<&str> = one.lines().collect();
        let mut sorted = lines.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), lines.len(), "{format}: each pair once");
    }
    // The summary counts every pair written.
    let o = neardup(&["pairs", path, "-t", "0.7"]);
    let written = stdout(&o).lines().count();
    let result = stderr(&o)
        .lines()
        .find_map(|l| l.strip_prefix("result"))
        .map(|l| l.trim().replace(',', ""))
        .unwrap_or_default();
    assert_eq!(result, format!("{written} pairs among 330 documents"));
}

#[test]
fn tsv_pairs_mark_pairs_with_a_truncated_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    let long: String = (0..50_000).map(|i| format!("w{i} ")).collect();
    std::fs::write(&path, format!("{long}\n{long}tail\nshort line\n")).unwrap();
    let tsv = ok(&[
        "pairs",
        path.to_str().unwrap(),
        "--max-shingles",
        "1000",
        "--output-format",
        "tsv",
        "-q",
    ]);
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "a\tb\tjaccard\testimate\ttruncated");
    assert_eq!(lines.len(), 2, "{tsv}");
    let row: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!((row[0], row[1], row[2], row[4]), ("1", "2", "", "true"));
}

#[test]
fn pairs_into_a_closed_pipe_print_the_first_lines_and_exit_cleanly() {
    use std::io::BufRead;
    let (_dir, path) = temp_file("near.txt", &mutual_near_copies(3000));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("neardup"))
        .args(["pairs", path.to_str().unwrap(), "-t", "0.7", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("{\"a\":"), "{first}");
    // Millions of pairs: the first lines come while the rest are still being found.
    assert!(child.try_wait().unwrap().is_none(), "still running");
    drop(reader);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "no error on a closed pipe"
    );
}
