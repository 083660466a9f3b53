//! Durability and isolation across processes.
//!
//! The crash test: a child process adds and removes batches in a loop, saying "ack" after
//! each returns, and is killed with SIGKILL at a random moment; then the index must open,
//! pass `check`, hold every acknowledged change, and hold the change in flight wholly or
//! not at all. The trials run on one index, so each child also recovers from the last
//! one's crash. `NEARDUP_CRASH_TRIALS` sets how many (default 20; the benchmark runs 100).
//!
//! The reader test: a child process reads while this one writes, and must only ever see
//! whole batches.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use neardup::sketch::SplitMix64;
use neardup::Config;
use neardup_index::{check, IndexWriter, Searcher};

const BATCH: usize = 40;
const CHILD_ENV: &str = "NEARDUP_INDEX_CHILD";

/// What step `s` of the child's loop does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add(u64),
    Remove(u64),
}

fn op(step: u64) -> Op {
    if step % 4 == 3 {
        Op::Remove(step - 2)
    } else {
        Op::Add(step)
    }
}

fn ids(batch: u64) -> Vec<String> {
    (0..BATCH).map(|i| format!("b{batch}-{i}")).collect()
}

fn docs(batch: u64) -> Vec<(String, String)> {
    let mut rng = SplitMix64::new(batch);
    ids(batch)
        .into_iter()
        .map(|id| {
            let words: Vec<String> = (0..12)
                .map(|_| format!("w{}", rng.next_u64() % 5000))
                .collect();
            (id, words.join(" "))
        })
        .collect()
}

/// The live ids after the given steps.
fn expected(steps: &[u64]) -> BTreeSet<String> {
    let mut live = BTreeSet::new();
    for &s in steps {
        match op(s) {
            Op::Add(b) => live.extend(ids(b)),
            Op::Remove(b) => {
                for id in ids(b) {
                    live.remove(&id);
                }
            }
        }
    }
    live
}

/// What follows `tag` on a line of the child's output (the test harness may have
/// started the line with its own words).
fn after<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    line.find(tag).map(|i| &line[i + tag.len()..])
}

/// Where two sets of ids differ, briefly.
fn difference(live: &BTreeSet<String>, want: &BTreeSet<String>) -> String {
    let extra: Vec<&String> = live.difference(want).take(5).collect();
    let missing: Vec<&String> = want.difference(live).take(5).collect();
    format!(
        "{} live, {} expected; extra {extra:?}, missing {missing:?}",
        live.len(),
        want.len()
    )
}

fn config() -> Config {
    Config::builder().threshold(0.8).build().unwrap()
}

fn child(test: &str, dir: &Path, start: u64) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        test,
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, dir)
    .env("NEARDUP_CHILD_START", start.to_string())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    cmd
}

/// The writer child: runs the loop from step `NEARDUP_CHILD_START` until killed.
#[test]
#[ignore = "a child process of the crash test, started by it"]
fn writer_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start: u64 = std::env::var("NEARDUP_CHILD_START")
        .unwrap()
        .parse()
        .unwrap();
    let mut writer = IndexWriter::open_with(&dir, &config()).unwrap();
    let mut out = std::io::stdout().lock();
    for step in start.. {
        match op(step) {
            Op::Add(b) => {
                writer.add(&docs(b)).unwrap();
            }
            Op::Remove(b) => {
                writer.remove(&ids(b)).unwrap();
            }
        }
        writeln!(out, "ack {step}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn killed_writers_lose_nothing_acknowledged_and_leave_no_partial_batch() {
    let trials: u64 = std::env::var("NEARDUP_CRASH_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    drop(IndexWriter::create(dir.path(), &config()).unwrap());
    let mut rng = SplitMix64::new(0x6372617368);
    let mut done: Vec<u64> = Vec::new(); // steps known to be committed
    let (mut in_flight_kept, mut in_flight_lost) = (0, 0);
    for trial in 0..trials {
        let start = done.last().map_or(0, |s| s + 1);
        let mut proc = child("writer_child", dir.path(), start).spawn().unwrap();
        let stdout = proc.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| after(&l, "ack ")?.parse::<u64>().ok())
                .collect::<Vec<u64>>()
        });
        // Long enough for the child to start and commit a few batches, at a random moment.
        std::thread::sleep(Duration::from_millis(150 + rng.next_u64() % 400));
        proc.kill().unwrap(); // SIGKILL
        proc.wait().unwrap();
        let acked = reader.join().unwrap();
        done.extend(&acked);
        let report = check(dir.path()).unwrap();
        assert!(report.is_ok(), "trial {trial}: {:?}", report.problems);
        let live: BTreeSet<String> = Searcher::open(dir.path())
            .unwrap()
            .ids()
            .map(String::from)
            .collect();
        let acked_state = expected(&done);
        let in_flight = done.last().map_or(start, |s| s + 1);
        if live == acked_state {
            in_flight_lost += 1;
        } else {
            done.push(in_flight);
            let want = expected(&done);
            assert!(
                live == want,
                "trial {trial}: the index holds neither the acknowledged state nor it plus step \
                 {in_flight}: {}",
                difference(&live, &want)
            );
            in_flight_kept += 1;
        }
    }
    eprintln!(
        "{trials} trials, {} steps committed; in flight at the kill: {in_flight_kept} kept whole, {in_flight_lost} absent",
        done.len()
    );
    assert!(
        done.len() as u64 >= trials,
        "the children committed too little to test anything"
    );
}

/// The reader child: reloads and checks that every batch is wholly there or wholly absent
/// until the writer says stop (a file), then prints how many states it saw.
#[test]
#[ignore = "a child process of the reader test, started by it"]
fn reader_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let mut searcher = Searcher::open(dir).unwrap();
    let mut states = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join("stop").exists() && Instant::now() < deadline {
        searcher = searcher.reload().unwrap();
        let live: BTreeSet<&str> = searcher.ids().collect();
        assert_eq!(live.len() as u64, searcher.len());
        for id in &live {
            let batch: u64 = id[1..id.find('-').unwrap()].parse().unwrap();
            for other in ids(batch) {
                assert!(
                    live.contains(other.as_str()),
                    "saw {id} without {other}: a partial commit"
                );
            }
        }
        // A query works on whatever state was seen (its segments stay mapped).
        if let Some(id) = live.iter().next() {
            let batch: u64 = id[1..id.find('-').unwrap()].parse().unwrap();
            let i: usize = id[id.find('-').unwrap() + 1..].parse().unwrap();
            let found = searcher
                .query(&docs(batch)[i].1, &neardup_index::Query::new())
                .unwrap();
            assert!(found.iter().any(|n| n.id == *id));
        }
        states.insert(searcher.generation());
    }
    println!("states {}", states.len());
}

#[test]
fn a_reader_in_another_process_sees_only_whole_commits() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &config()).unwrap();
    writer.add(&docs(0)).unwrap();
    let reader = child("reader_child", dir.path(), 0).spawn().unwrap();
    for step in 1..120 {
        match op(step) {
            Op::Add(b) => writer.add(&docs(b)).unwrap().added,
            Op::Remove(b) => writer.remove(&ids(b)).unwrap().removed,
        };
    }
    writer.compact().unwrap();
    std::fs::write(dir.path().join("stop"), b"").unwrap();
    let out = reader.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the reader failed: {text}");
    let states: usize = text
        .lines()
        .find_map(|l| after(l, "states ")?.parse().ok())
        .expect("the reader's count");
    assert!(
        states >= 2,
        "the reader saw {states} states: it raced nothing"
    );
}
