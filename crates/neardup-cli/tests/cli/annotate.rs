//! `annotate`, `dedup --annotate` and `dedup --cluster-size-field`: every record back in
//! its own format with what dedup decided, nothing lost, the kept ones dedup's survivors.

use crate::common::*;

/// The shipped reviews (an empty body, a line that is not JSON, one without a body).
const REVIEWS: &[&str] = &[
    "cli/reviews.jsonl",
    "--text-field",
    "body",
    "--id-field",
    "review_id",
    "-t",
    "0.7",
];

/// The annotation's names, without a prefix.
const FIELDS: [&str; 5] = ["cluster", "cluster_size", "kept", "duplicate_of", "jaccard"];

fn run(command: &[&str], input: &[&str], more: &[&str]) -> Output {
    neardup(&[command, input, more].concat())
}

/// A JSON line without the annotation's fields (named with `prefix`), re-serialized.
fn without_fields(line: &str, prefix: &str) -> String {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(mut map)) => {
            for f in FIELDS {
                map.remove(&format!("{prefix}{f}"));
            }
            Value::Object(map).to_string()
        }
        _ => line.to_string(),
    }
}

#[test]
fn annotate_jsonl_reviews_golden() {
    let o = run(&["annotate"], REVIEWS, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    insta::assert_snapshot!("annotate_reviews", out);
    // Nothing lost: every line of the input, in its place, its own bytes first.
    let input = std::fs::read_to_string(testdata("cli/reviews.jsonl")).unwrap();
    assert_eq!(out.lines().count(), input.lines().count());
    for (given, written) in input.lines().zip(out.lines()) {
        match given.strip_suffix('}') {
            Some(head) => assert!(written.starts_with(head), "{written}"),
            None => assert_eq!(given, written),
        }
    }
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    assert_eq!(read, input.lines().count() as u64);
    assert_eq!(read, kept + removed + skipped);
    let lines: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let count = |kept: bool, null_dup: bool| {
        lines
            .iter()
            .filter(|l| l["kept"] == kept && l["duplicate_of"].is_null() == null_dup)
            .count() as u64
    };
    assert_eq!(count(true, true), kept);
    assert_eq!(count(false, false), removed);
    // Skipped and still a JSON object: kept false, no duplicate; the line that is not
    // JSON is the other skipped record.
    assert_eq!(count(false, true) + 1, skipped);
}

#[test]
fn annotate_kept_records_are_dedups_survivors() {
    for (input, more) in [
        (REVIEWS, &["--keep", "longest"][..]),
        (REVIEWS, &["--keep-by", "stars:desc"]),
        (LISTINGS, &[]),
    ] {
        let survivors = ok(&[&["dedup"], input, more, &["-q"]].concat());
        let annotated = ok(&[&["annotate"], input, more, &["-q"]].concat());
        let kept: Vec<String> = if input == REVIEWS {
            annotated
                .lines()
                .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["kept"] == true))
                .map(|l| without_fields(l, ""))
                .collect()
        } else {
            // TSV: the kept column is the third of the five added; the header dropped.
            annotated
                .lines()
                .skip(1)
                .filter(|l| l.split('\t').rev().nth(2) == Some("true"))
                .map(|l| l.rsplitn(6, '\t').last().unwrap().to_string())
                .collect()
        };
        let expected: Vec<String> = if input == REVIEWS {
            survivors.lines().map(|l| without_fields(l, "")).collect()
        } else {
            survivors.lines().skip(1).map(str::to_string).collect()
        };
        assert_eq!(kept, expected, "{more:?}");
        // dedup --annotate is the same output.
        let same = ok(&[&["dedup"], input, more, &["-q", "--annotate"]].concat());
        assert_eq!(same, annotated);
    }
}

#[test]
fn annotate_csv_and_tsv_golden() {
    let csv = &[
        "io/listings.csv",
        "--text-columns",
        "title,description",
        "-t",
        "0.5",
    ];
    let o = run(&["annotate"], csv, &["-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("annotate_listings_csv", stdout(&o));
    let o = run(&["annotate"], LISTINGS, &["-q", "--annotate-prefix", "nd_"]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("annotate_listings_tsv", stdout(&o));
    // Rows with no text stay, with kept false; the blank line is written as it was.
    let o = run(&["annotate"], &["dirty/empty_docs.csv"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("annotate_empty_docs_csv", stdout(&o));
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    assert_eq!((read, kept, removed, skipped), (5, 1, 0, 4));
}

#[test]
fn annotate_a_taken_name_is_refused_or_replaced_golden() {
    let (_dir, path) = temp_file(
        "taken.jsonl",
        "{\"text\": \"red bike with a bell\", \"kept\": \"yes\"}\n\
         {\"text\": \"red bike with a bell!\", \"kept\": \"no\", \"extra\": [1, {\"kept\": 2}]}\r\n",
    );
    let path = path.to_str().unwrap();
    let o = neardup(&["annotate", path, "-t", "0.5", "-q"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let said = stderr(&o);
    assert!(said.contains(&format!("{path}:1: ")), "{said}");
    assert!(said.contains("field \"kept\""), "{said}");
    let o = neardup(&["annotate", path, "-t", "0.5", "-q", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("annotate_force", stdout(&o));
    let o = neardup(&[
        "annotate",
        path,
        "-t",
        "0.5",
        "-q",
        "--annotate-prefix",
        "nd_",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("annotate_prefix", stdout(&o));
    // A CSV header names the column.
    let (_dir, csv) = temp_file("taken.csv", "text,cluster_size\nred bike,9\n");
    let csv = csv.to_str().unwrap();
    let o = neardup(&["dedup", csv, "-q", "--cluster-size-field", "cluster_size"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{csv}:1: ")), "{}", stderr(&o));
    let out = ok(&[
        "dedup",
        csv,
        "-q",
        "--cluster-size-field",
        "cluster_size",
        "--force",
    ]);
    assert_eq!(out, "text,cluster_size\nred bike,1\n");
}

#[test]
fn dedup_cluster_size_field_golden() {
    let o = run(
        &["dedup"],
        REVIEWS,
        &["--cluster-size-field", "minhash_cluster_size"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    insta::assert_snapshot!("dedup_cluster_size_field", out);
    // The survivors, each with its cluster's size as annotate gives it.
    let survivors = ok(&[&["dedup"], REVIEWS, &["-q"]].concat());
    let annotated = ok(&[&["annotate"], REVIEWS, &["-q"]].concat());
    let sizes: Vec<Value> = annotated
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("kept") == Some(&Value::Bool(true)))
        .map(|l| l["cluster_size"].clone())
        .collect();
    let lines = json_lines(&out);
    assert_eq!(lines.len(), survivors.lines().count());
    for ((line, size), survivor) in lines.iter().zip(&sizes).zip(survivors.lines()) {
        assert_eq!(&line["minhash_cluster_size"], size);
        let mut line = line.clone();
        line.as_object_mut().unwrap().remove("minhash_cluster_size");
        assert_eq!(line, serde_json::from_str::<Value>(survivor).unwrap());
    }
    assert!(sizes.iter().any(|s| s.as_u64() > Some(1)), "{sizes:?}");
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    assert_eq!(read, kept + removed + skipped);
    assert_eq!(kept, lines.len() as u64);
}

#[test]
fn annotate_refuses_what_it_cannot_write() {
    for (args, said) in [
        (
            &["annotate", "cli/stories.txt"][..],
            "annotate writes JSONL, CSV, TSV and Parquet records",
        ),
        (
            &["dedup", "cli/stories.txt", "--cluster-size-field", "n"],
            "--cluster-size-field writes JSONL, CSV, TSV and Parquet records",
        ),
        (&["annotate", "cli/articles", "-o", "out"], "is dir"),
        (
            &["annotate", "-", "--format", "jsonl"],
            "not from standard input",
        ),
        (
            &["dedup", "cli/reviews.jsonl", "--annotate-prefix", "x"],
            "--annotate",
        ),
        (
            &[
                "dedup",
                "cli/reviews.jsonl",
                "--annotate",
                "--cluster-size-field",
                "n",
            ],
            "cannot be used with",
        ),
    ] {
        let o = neardup(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// The rows of a Parquet file, in one batch.
fn parquet_rows(path: &Path) -> arrow_array::RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = builder.schema().clone();
    let batches: Vec<_> = builder.build().unwrap().map(Result::unwrap).collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

#[test]
fn annotate_parquet_adds_columns_to_every_row() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Array;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("annotated.parquet");
    let input = testdata("parquet/pyarrow.parquet");
    let o = neardup(&[
        "annotate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-t",
        "0.5",
        "--annotate-prefix",
        "nd_",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (read, kept, removed, skipped) = accounting(&stderr(&o));
    let given = parquet_rows(&input);
    let rows = parquet_rows(&out);
    // Every row, every column of the input first, then the five.
    assert_eq!(rows.num_rows() as u64, read);
    assert_eq!(rows.num_rows(), given.num_rows());
    let names: Vec<String> = rows
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let input_names: Vec<String> = given
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names[..input_names.len()], input_names[..]);
    assert_eq!(
        names[input_names.len()..],
        FIELDS.map(|f| format!("nd_{f}"))[..]
    );
    for (i, name) in input_names.iter().enumerate() {
        assert_eq!(rows.column(i), given.column(i), "{name}");
    }
    let kept_column = rows.column_by_name("nd_kept").unwrap().as_boolean();
    let duplicate = rows
        .column_by_name("nd_duplicate_of")
        .unwrap()
        .as_string::<i32>();
    let cluster = rows
        .column_by_name("nd_cluster")
        .unwrap()
        .as_primitive::<Int64Type>();
    let (mut k, mut r, mut s) = (0, 0, 0);
    for row in 0..rows.num_rows() {
        match (
            kept_column.value(row),
            duplicate.is_valid(row),
            cluster.is_valid(row),
        ) {
            (true, false, true) => k += 1,
            (false, true, true) => r += 1,
            (false, false, false) => s += 1,
            other => panic!("row {row}: {other:?}"),
        }
    }
    assert_eq!((k, r, s), (kept, removed, skipped));
    assert!(
        r > 0 && s > 0,
        "the fixture has duplicates and skipped rows"
    );
    // --cluster-size-field: the survivors as dedup writes them, with their cluster size.
    let survivors = dir.path().join("survivors.parquet");
    let sized = dir.path().join("sized.parquet");
    for (path, more) in [
        (&survivors, &[][..]),
        (
            &sized,
            &["--cluster-size-field", "minhash_cluster_size"][..],
        ),
    ] {
        let args = [
            &["dedup", input.to_str().unwrap(), "-t", "0.5", "-q", "-o"][..],
            &[path.to_str().unwrap()],
            more,
        ]
        .concat();
        ok(&args);
    }
    let (survivors, sized) = (parquet_rows(&survivors), parquet_rows(&sized));
    assert_eq!(sized.num_rows() as u64, kept);
    assert_eq!(
        sized
            .project(&(0..input_names.len()).collect::<Vec<_>>())
            .unwrap(),
        survivors
    );
    let sizes = sized
        .column_by_name("minhash_cluster_size")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert!(sizes.iter().all(|s| s >= Some(1)) && sizes.iter().any(|s| s > Some(1)));
    // Compressed as dedup's Parquet is: zstd by default, --compression to choose.
    let codec = |path: &Path| {
        let file = std::fs::File::open(path).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(
            &parquet::file::reader::SerializedFileReader::new(file).unwrap(),
        )
        .clone();
        meta.row_group(0).column(0).compression()
    };
    assert!(matches!(codec(&out), parquet::basic::Compression::ZSTD(_)));
    let snappy = dir.path().join("snappy.parquet");
    let args = [
        input.to_str().unwrap(),
        "-q",
        "--compression",
        "snappy",
        "-o",
    ];
    ok(&[&["annotate"], &args[..], &[snappy.to_str().unwrap()]].concat());
    assert_eq!(codec(&snappy), parquet::basic::Compression::SNAPPY);
    // A column of one of the names is refused, naming the file and column...
    let again = dir.path().join("again.parquet");
    let reannotate = |force: bool| {
        let mut args = vec![
            "annotate",
            out.to_str().unwrap(),
            "--annotate-prefix",
            "nd_",
            "-o",
            again.to_str().unwrap(),
            "-q",
        ];
        if force {
            args.push("--force");
        }
        neardup(&args)
    };
    let o = reannotate(false);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("already has a column \"nd_cluster\""),
        "{}",
        stderr(&o)
    );
    // ...and with --force its values are replaced where it stands: the same columns in
    // the same order, and (the same texts) the same annotations.
    let o = reannotate(true);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (first, second) = (parquet_rows(&out), parquet_rows(&again));
    assert_eq!(first.schema(), second.schema());
    assert_eq!(first, second);
}

#[test]
fn annotate_a_folder_of_shards_writes_one_output_per_shard() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir_all(shards.join("sub")).unwrap();
    let reviews = std::fs::read_to_string(testdata("cli/reviews.jsonl")).unwrap();
    let lines: Vec<&str> = reviews.lines().collect();
    let (a, b) = (lines[..5].join("\n") + "\n", lines[5..].join("\n") + "\n");
    std::fs::write(shards.join("a.jsonl"), &a).unwrap();
    std::fs::write(shards.join("sub/b.jsonl.gz"), gzip_bytes(b.as_bytes())).unwrap();
    let out = dir.path().join("out");
    let (shards, out_dir) = (shards.to_str().unwrap(), out.to_str().unwrap());
    ok(&[&["annotate", shards, "-o", out_dir, "-q"], &REVIEWS[1..]].concat());
    let first = std::fs::read_to_string(out.join("a.jsonl")).unwrap();
    let mut second = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(out.join("sub/b.jsonl.gz")).unwrap()),
        &mut second,
    )
    .unwrap();
    // The same lines as the whole file annotated, each shard in its own output.
    let whole = ok(&[&["annotate"], REVIEWS, &["-q"]].concat());
    assert_eq!(first + &second, whole);
}

/// A JSONL input of near-duplicates and junk, drawn from `seed`: sentences from a few
/// templates with small edits, blank lines, lines that are not JSON, objects without a
/// text, `{}`, `\r\n` line ends and extra whitespace before the closing brace.
fn dirty_jsonl(seed: u64) -> String {
    let mut rng = Lcg(seed);
    let templates = [
        "the red bike is for sale with new tyres and lights",
        "a quiet flat near the park with two rooms and a balcony",
        "fresh bread every morning from the bakery on the corner",
        "used piano in good condition, tuned last spring",
    ];
    let mut out = String::from("\u{feff}");
    for i in 0..60 {
        let end = if rng.next().is_multiple_of(4) {
            "\r\n"
        } else {
            "\n"
        };
        let line = match rng.next() % 12 {
            0 => String::new(),
            1 => "not json at all".to_string(),
            2 => format!("{{\"id\": {i}, \"stars\": 3}}"),
            3 => "{}".to_string(),
            _ => {
                let t = templates[(rng.next() % 4) as usize];
                let tail = ["", "!", " today", " (again)"][(rng.next() % 4) as usize];
                let pad = if rng.next().is_multiple_of(3) {
                    "  "
                } else {
                    ""
                };
                format!("{{\"id\": {i}, \"text\": \"{t}{tail}\"{pad}}}")
            }
        };
        out.push_str(&line);
        out.push_str(end);
    }
    out
}

/// Whatever the input, annotate writes every line, each beginning with its own bytes,
/// and the lines it marks kept are dedup's survivors.
#[test]
fn annotate_keeps_every_line_and_marks_dedups_survivors_whatever_the_input() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..24 {
        let input = dirty_jsonl(seed);
        let path = dir.path().join(format!("dirty-{seed}.jsonl"));
        std::fs::write(&path, &input).unwrap();
        let path = path.to_str().unwrap();
        let survivors = ok(&["dedup", path, "-q", "-t", "0.6"]);
        let o = neardup(&["annotate", path, "-t", "0.6"]);
        assert!(o.status.success(), "seed {seed}: {}", stderr(&o));
        let out = stdout(&o);
        let (read, kept, removed, skipped) = accounting(&stderr(&o));
        assert_eq!(read, kept + removed + skipped, "seed {seed}");
        assert_eq!(read, 60, "seed {seed}");
        let given: Vec<&str> = input.split_inclusive('\n').collect();
        let written: Vec<&str> = out.split_inclusive('\n').collect();
        assert_eq!(given.len(), written.len(), "seed {seed}");
        let mut marked = Vec::new();
        for (g, w) in given.iter().zip(&written) {
            let head = g.trim_end().strip_suffix('}').unwrap_or(g);
            assert!(w.starts_with(head), "seed {seed}: {g:?} -> {w:?}");
            assert!(w.ends_with(&g[g.trim_end().len()..]), "seed {seed}: {w:?}");
            let object = serde_json::from_str::<Value>(w.trim_start_matches('\u{feff}'));
            if object.as_ref().is_ok_and(|v| v["kept"] == true) {
                // The survivor as dedup wrote it: the line without the fields.
                let cut = w.rfind(",\"cluster\":").unwrap();
                let cut = if w[..cut].trim_end().ends_with('{') {
                    cut + 1
                } else {
                    cut
                };
                marked.push(format!("{}{}", &w[..cut], &g[head.len()..]));
            }
        }
        assert_eq!(marked.concat(), survivors, "seed {seed}");
        assert_eq!(marked.len() as u64, kept, "seed {seed}");
    }
}

/// A CSV whose lines end in a lone `\r` (which the reader counts as line ends) cannot be
/// followed line by line: an error naming the line, and no output file left behind.
#[test]
fn annotate_a_csv_of_lone_cr_line_ends_is_an_error_not_a_wrong_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let o = neardup(&[
        "annotate",
        "dirty/lone_cr.csv",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ne!(code(&o), 0);
    assert!(
        stderr(&o).contains("dirty/lone_cr.csv:2: the input is not as it was when read"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    assert!(litter(dir.path()).is_empty());
}
