//! The README's command-line examples that run on the shipped data: each `$ ` line of the
//! section's console block is run from a copy of the repository's layout, and the lines
//! printed under it must be what the command prints (the summary's `result` line from
//! standard error, the rest from standard output).

use crate::common::*;

/// The console block under the README heading `heading`: each command with the lines shown
/// after it.
fn console_examples(heading: &str) -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(testdata("../README.md")).unwrap();
    let section = readme
        .split(&format!("\n{heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no README section {heading:?}"));
    let block = section
        .split("```console\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no console block under {heading:?}"));
    let mut examples: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => examples.push((command.to_string(), Vec::new())),
            None => examples
                .last_mut()
                .expect("a console block starts with a command")
                .1
                .push(line.to_string()),
        }
    }
    examples
}

#[test]
fn the_readme_annotate_examples_print_what_they_show() {
    runs_as_shown("### Mark instead of remove", 4, &["pypi-summaries.jsonl"]);
}

#[test]
fn the_readme_unit_examples_print_what_they_show() {
    runs_as_shown(
        "## Repeated paragraphs and lines",
        3,
        &["cli/shop-pages.jsonl"],
    );
}

/// Runs the (at least `min`) examples of the section `heading` in a folder holding the
/// test data `files` under `testdata/`, and checks each prints the lines shown under it.
fn runs_as_shown(heading: &str, min: usize, files: &[&str]) {
    let examples = console_examples(heading);
    assert!(examples.len() >= min, "{examples:?}");
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let to = dir.path().join("testdata").join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(testdata(file), to).unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin("neardup");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (command, shown) in examples {
        // A comment after the command is for the reader.
        let command = command.split("  #").next().unwrap().trim();
        let out = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let (printed, summary) = (stdout(&out), stderr(&out));
        for line in shown {
            let found = if line.starts_with("result ") {
                summary.lines().any(|l| l == line)
            } else {
                printed.lines().any(|l| l == line)
            };
            assert!(
                found,
                "{command}: {line:?} not printed\n{printed}\n{summary}"
            );
        }
    }
}
