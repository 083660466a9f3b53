//! `--reference OLD...`: the inputs deduplicated against records already published,
//! which are never removed nor written, and the same answer as an index of OLD asked
//! to add the inputs with `index add --dedup`.

use std::collections::BTreeMap;

use crate::common::*;

/// The PyPI summaries split in two: OLD the first 2,000, NEW the rest with, every 7th
/// line, a copy of an OLD summary under a new id (so NEW has duplicates of OLD as well
/// as of its own).
fn old_and_new(dir: &Path) -> (String, String) {
    let text = std::fs::read_to_string(testdata("pypi-summaries.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (old, new) = lines.split_at(2_000);
    let mut with_copies = Vec::new();
    for (i, line) in new.iter().enumerate() {
        with_copies.push(line.to_string());
        if i % 7 == 0 {
            let copied: Value = serde_json::from_str(old[i % old.len()]).unwrap();
            let record = serde_json::json!({"id": format!("copy-{i}"), "text": copied["text"]});
            with_copies.push(record.to_string());
        }
    }
    let write = |name: &str, lines: &[String]| {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path.to_str().unwrap().to_string()
    };
    let old: Vec<String> = old.iter().map(|l| l.to_string()).collect();
    (write("old.jsonl", &old), write("new.jsonl", &with_copies))
}

fn ids(jsonl: &str) -> Vec<String> {
    json_lines(jsonl)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

/// What dedup says of each removed record: the id it duplicates, and that id's file.
fn removed(path: &Path) -> BTreeMap<String, (String, String)> {
    json_lines(&std::fs::read_to_string(path).unwrap())
        .iter()
        .map(|v| {
            let of = v["duplicate_of"].as_str().unwrap().to_string();
            let file = v["duplicate_of_source"].as_str().unwrap().to_string();
            (v["id"].as_str().unwrap().to_string(), (of, file))
        })
        .collect()
}

/// Runs `neardup COMMAND NEW --reference OLD -t 0.8 EXTRA...`, expecting success.
fn against(command: &str, new: &str, old: &str, extra: &[&str]) -> Output {
    let args = [&[command, new, "--reference", old, "-t", "0.8"][..], extra].concat();
    let o = neardup(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

#[test]
fn dedup_against_a_reference_removes_what_index_add_dedup_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_and_new(dir.path());
    let removed_path = dir.path().join("removed.jsonl");
    let removed_arg = removed_path.to_str().unwrap();
    let o = against(
        "dedup",
        &new,
        &old,
        &["--method", "lsh", "--removed", removed_arg],
    );
    let kept = ids(&stdout(&o));
    let by_dedup = removed(&removed_path);
    // The index: OLD built, NEW added one at a time against it and what it kept.
    let idx = dir.path().join("idx");
    let idx = idx.to_str().unwrap();
    ok(&["index", "build", idx, &old, "-t", "0.8", "-q"]);
    let outcomes = json_lines(&ok(&["index", "add", idx, &new, "--dedup", "-q"]));
    let added: Vec<String> = outcomes
        .iter()
        .filter(|v| v["added"] == true)
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    let by_index: BTreeMap<String, String> = outcomes
        .iter()
        .filter(|v| v["duplicate_of"].is_string())
        .map(|v| {
            let of = v["duplicate_of"].as_str().unwrap().to_string();
            (v["id"].as_str().unwrap().to_string(), of)
        })
        .collect();
    assert_eq!(kept, added);
    let named: BTreeMap<String, String> = by_dedup
        .iter()
        .map(|(id, (of, _))| (id.clone(), of.clone()))
        .collect();
    assert_eq!(named, by_index);
    // Both kinds are there: duplicates of OLD (named with OLD's file), and of NEW.
    let of_old = by_dedup.values().filter(|(_, file)| *file == old).count();
    let of_new = by_dedup.values().filter(|(_, file)| *file == new).count();
    assert!(
        of_old > 100 && of_new > 0,
        "{of_old} of OLD, {of_new} of NEW"
    );
    assert_eq!(of_old + of_new, by_dedup.len());
    // No OLD record is written.
    let old_ids = ids(&std::fs::read_to_string(&old).unwrap());
    assert!(kept.iter().all(|id| !old_ids.contains(id)));
    // Spilled to disk: the same survivors and the same names.
    let spilled = dir.path().join("spilled.jsonl");
    let spilled_arg = spilled.to_str().unwrap();
    let tmp = dir.path().to_str().unwrap();
    let extra = ["--memory", "1M", "--tmp", tmp, "--removed", spilled_arg];
    let o = against("dedup", &new, &old, &extra);
    assert!(stderr(&o).contains("spills to"), "{}", stderr(&o));
    assert_eq!(ids(&stdout(&o)), kept);
    assert_eq!(removed(&spilled), by_dedup);
}

#[test]
fn the_summary_counts_the_inputs_and_the_reference_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_and_new(dir.path());
    let o = against("dedup", &new, &old, &[]);
    let summary = stderr(&o);
    let (read, kept, removed, skipped) = accounting(&summary);
    let new_lines = std::fs::read_to_string(&new).unwrap().lines().count() as u64;
    assert_eq!(read, new_lines);
    assert_eq!(read, kept + removed + skipped);
    assert_eq!(kept, stdout(&o).lines().count() as u64);
    assert!(
        summary.contains("| reference: 2,000 records, never written"),
        "{summary}"
    );
}

#[test]
fn clusters_and_pairs_leave_the_reference_alone_among_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_and_new(dir.path());
    let old_ids = ids(&std::fs::read_to_string(&old).unwrap());
    let from_old = |id: &Value| old_ids.iter().any(|o| o == id.as_str().unwrap());
    let lines = json_lines(&stdout(&against("clusters", &new, &old, &["-q"])));
    let mut by_cluster: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for line in &lines {
        by_cluster
            .entry(line["cluster"].as_u64().unwrap())
            .or_default()
            .push(line);
    }
    let mut headed_by_old = 0;
    for members in by_cluster.values() {
        // Every cluster holds an input record; an OLD one is only ever kept.
        assert!(members.iter().any(|m| !from_old(&m["id"])));
        for m in members {
            assert!(m["kept"] == true || !from_old(&m["id"]), "{m}");
            let file = if from_old(&m["id"]) { &old } else { &new };
            assert_eq!(m["source"], file.as_str());
        }
        if from_old(&members[0]["id"]) {
            headed_by_old += 1;
            assert!(members[1..].iter().all(|m| m["duplicate_of_source"] == old));
        }
    }
    assert!(headed_by_old > 100);
    let tsv = stdout(&against(
        "clusters",
        &new,
        &old,
        &["--output-format", "tsv", "-q"],
    ));
    let header =
        "id\tcluster\tkept\tduplicate_of\tjaccard\testimate\tsource\tduplicate_of_source\n";
    assert!(tsv.starts_with(header), "{}", &tsv[..200]);
    assert_eq!(tsv.lines().count(), lines.len() + 1);
    // Pairs: none between two OLD records, though OLD has such pairs.
    let pairs = |reference: bool| {
        let mut args = vec!["pairs", &new, "-t", "0.8", "--method", "exact", "-q"];
        if reference {
            args.extend(["--reference", &old]);
        } else {
            args.insert(1, &old);
        }
        json_lines(&ok(&args))
    };
    let with = pairs(true);
    let both_old = |p: &&Value| from_old(&p["a"]) && from_old(&p["b"]);
    assert!(!with.iter().any(|p| both_old(&p)));
    let all = pairs(false);
    let inside_old = all.iter().filter(both_old).count();
    assert!(inside_old > 0);
    assert_eq!(with.len(), all.len() - inside_old);
}

#[test]
fn drop_all_keeps_no_record_of_a_duplicated_text() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_and_new(dir.path());
    let removed_path = dir.path().join("removed.jsonl");
    let removed_arg = removed_path.to_str().unwrap();
    let clusters = json_lines(&stdout(&against("clusters", &new, &old, &["-q"])));
    let in_cluster: Vec<&str> = clusters.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let o = against(
        "dedup",
        &new,
        &old,
        &["--drop-all", "--removed", removed_arg],
    );
    let kept = ids(&stdout(&o));
    assert!(kept.iter().all(|id| !in_cluster.contains(&id.as_str())));
    let (read, k, removed, skipped) = accounting(&stderr(&o));
    assert_eq!(k, kept.len() as u64);
    assert_eq!(read, k + removed + skipped);
    // Every input record of a cluster is removed, the kept ones named as duplicates of
    // a record that is similar to them.
    let removed_lines = json_lines(&std::fs::read_to_string(&removed_path).unwrap());
    let old_ids = ids(&std::fs::read_to_string(&old).unwrap());
    let from_new = in_cluster
        .iter()
        .filter(|id| !old_ids.iter().any(|o| o == *id))
        .count();
    assert_eq!(removed_lines.len(), from_new);
    assert!(removed_lines
        .iter()
        .all(|r| r["jaccard"].as_f64().unwrap() >= 0.8));
    // Without a reference too, and clusters refuse it.
    let alone = ok(&["dedup", &new, "-t", "0.8", "--drop-all", "-q"]);
    let plain = ok(&["dedup", &new, "-t", "0.8", "-q"]);
    assert!(alone.lines().count() < plain.lines().count());
    refused(
        &["clusters", &new, "--drop-all"],
        &["--drop-all decides what dedup and annotate write"],
    );
}

#[test]
fn annotate_writes_the_inputs_alone_with_what_dedup_decided() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = old_and_new(dir.path());
    let removed_path = dir.path().join("removed.jsonl");
    let removed_arg = removed_path.to_str().unwrap();
    for drop_all in [false, true] {
        let extra: &[&str] = if drop_all { &["--drop-all"] } else { &[] };
        let dedup_args = [&["--removed", removed_arg][..], extra].concat();
        let survivors = ids(&stdout(&against("dedup", &new, &old, &dedup_args)));
        let by_dedup = removed(&removed_path);
        let annotated = json_lines(&stdout(&against("annotate", &new, &old, extra)));
        // Every input record, in order, and none of the reference's.
        let new_ids = ids(&std::fs::read_to_string(&new).unwrap());
        let annotated_ids: Vec<&str> = annotated
            .iter()
            .map(|v| v["id"].as_str().unwrap())
            .collect();
        assert_eq!(annotated_ids, new_ids);
        let kept: Vec<String> = annotated
            .iter()
            .filter(|v| v["kept"] == true)
            .map(|v| v["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kept, survivors, "drop-all {drop_all}");
        for v in annotated.iter().filter(|v| v["kept"] == false) {
            let (of, _) = &by_dedup[v["id"].as_str().unwrap()];
            assert_eq!(v["duplicate_of"], of.as_str());
        }
    }
}
