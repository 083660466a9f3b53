//! Outputs in the formats the big corpora live in: zstd by name, Parquet (dedup's
//! survivors with the input's schema, pairs and clusters as typed columns), one output
//! per shard of a folder, and each shard's accounts in the summary.

use std::fs::File;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;

use crate::common::*;

/// The rows of a Parquet file, in one batch, and its row groups' compression and sizes.
fn read_parquet(path: &Path) -> (RecordBatch, Vec<(Compression, i64)>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let groups = builder
        .metadata()
        .row_groups()
        .iter()
        .map(|g| (g.column(0).compression(), g.num_rows()))
        .collect();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    let batch = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
    (batch, groups)
}

fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let column = batch.column_by_name(name).unwrap();
    let column = column.as_string::<i32>();
    (0..column.len())
        .map(|i| column.is_valid(i).then(|| column.value(i).to_string()))
        .collect()
}

fn zstd_decode(path: &Path) -> String {
    String::from_utf8(zstd::decode_all(File::open(path).unwrap()).unwrap()).unwrap()
}

#[test]
fn dedup_of_zst_to_zst_is_the_same_records_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(testdata("parquet/rows.jsonl")).unwrap();
    let input = dir.path().join("in.jsonl.zst");
    std::fs::write(&input, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    let zst = dir.path().join("out.jsonl.zst");
    let expected = ok(&["dedup", "parquet/rows.jsonl", "-q"]);
    ok(&[
        "dedup",
        input.to_str().unwrap(),
        "-o",
        zst.to_str().unwrap(),
        "-q",
    ]);
    let bytes = std::fs::read(&zst).unwrap();
    assert_eq!(
        &bytes[..4],
        [0x28, 0xb5, 0x2f, 0xfd],
        "the zstd magic number"
    );
    assert_eq!(zstd_decode(&zst), expected);
    assert_eq!(expected.lines().count(), 6, "{expected}");
    // pairs and clusters by name too.
    let pairs = dir.path().join("pairs.jsonl.zst");
    ok(&[
        "pairs",
        "parquet/rows.jsonl",
        "-o",
        pairs.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(
        zstd_decode(&pairs),
        ok(&["pairs", "parquet/rows.jsonl", "-q"])
    );
}

#[test]
fn dedup_of_parquet_keeps_every_column_of_the_survivors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kept.parquet");
    let o = neardup(&[
        "dedup",
        "parquet/struct.parquet",
        "--text-field",
        "meta.body",
        "--id-field",
        "meta.url",
        "--row-group-size",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, kept, _, _) = accounting(&stderr(&o));
    let (input, _) = read_parquet(&testdata("parquet/struct.parquet"));
    let (back, groups) = read_parquet(&out);
    assert_eq!(
        back.schema(),
        input.schema(),
        "the input's schema, struct included"
    );
    assert_eq!(back.num_rows() as u64, kept);
    assert!(kept < input.num_rows() as u64, "something was removed");
    assert!(groups
        .iter()
        .all(|(c, rows)| matches!(c, Compression::ZSTD(_)) && *rows <= 2));
    // The survivors are the input's rows, unchanged, in order: the JSONL of the same rows
    // keeps the same ids.
    let survivors: Vec<String> = json_lines(&ok(&["dedup", "parquet/rows.jsonl", "-q"]))
        .iter()
        .map(|v| v["id"].to_string())
        .collect();
    let urls = back
        .column(0)
        .as_struct()
        .column_by_name("url")
        .unwrap()
        .clone();
    let urls = urls.as_string::<i32>();
    assert_eq!(urls.len(), survivors.len(), "{survivors:?}");
}

#[test]
fn parquet_compression_and_its_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kept.parquet");
    ok(&[
        "dedup",
        "parquet/pyarrow.parquet",
        "--compression",
        "snappy",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    let (back, groups) = read_parquet(&out);
    assert_eq!(groups[0].0, Compression::SNAPPY);
    let ids = back
        .column_by_name("id")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(ids.values().to_vec(), [1, 3, 4, 9, 11, 12]);
    refused(
        &["dedup", "parquet/rows.jsonl", "--compression", "zstd"],
        &["--compression", "jsonl"],
    );
    refused(
        &["pairs", "parquet/rows.jsonl", "--row-group-size", "10"],
        &["--output-format parquet"],
    );
    refused(
        &[
            "pairs",
            "parquet/rows.jsonl",
            "--output-format",
            "parquet",
            "--compression",
            "brotli",
        ],
        &["brotli", "expected zstd"],
    );
    refused(
        &[
            "dedup",
            "parquet/pyarrow.parquet",
            "parquet/polars.parquet",
            "-o",
            out.to_str().unwrap(),
        ],
        &["pyarrow.parquet", "polars.parquet", "different schemas"],
    );
    refused(
        &["dedup", "parquet/pyarrow.parquet", "-o", "out.jsonl"],
        &["parquet", "out.jsonl"],
    );
}

/// `command` on the rows with near copies, as JSON lines and as Parquet: the lines, the
/// Parquet rows and their column names.
fn lines_and_parquet(command: &str) -> (Vec<Value>, RecordBatch, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.parquet");
    let lines = json_lines(&ok(&[command, "parquet/rows.jsonl", "-q"]));
    let out = path.to_str().unwrap();
    ok(&[
        command,
        "parquet/rows.jsonl",
        "--output-format",
        "parquet",
        "-o",
        out,
        "-q",
    ]);
    let (back, _) = read_parquet(&path);
    let names = back
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(back.num_rows(), lines.len());
    assert!(!lines.is_empty());
    (lines, back, names)
}

#[test]
fn pairs_and_clusters_as_parquet_hold_the_json_lines_fields() {
    let (lines, back, names) = lines_and_parquet("pairs");
    assert_eq!(names, ["a", "b", "jaccard", "estimate", "truncated"]);
    let (a, b) = (strings(&back, "a"), strings(&back, "b"));
    let jaccard = back
        .column_by_name("jaccard")
        .unwrap()
        .as_primitive::<Float64Type>();
    for (i, line) in lines.iter().enumerate() {
        let id = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        assert_eq!(a[i].as_deref(), Some(id(&line["a"]).as_str()));
        assert_eq!(b[i].as_deref(), Some(id(&line["b"]).as_str()));
        assert_eq!(Some(jaccard.value(i)), line["jaccard"].as_f64());
    }

    let (lines, back, names) = lines_and_parquet("clusters");
    assert_eq!(
        names,
        [
            "id",
            "cluster",
            "kept",
            "duplicate_of",
            "jaccard",
            "estimate",
            "truncated"
        ]
    );
    let cluster = back
        .column_by_name("cluster")
        .unwrap()
        .as_primitive::<UInt64Type>();
    let kept = back.column_by_name("kept").unwrap().as_boolean();
    let of = strings(&back, "duplicate_of");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(Some(cluster.value(i)), line["cluster"].as_u64());
        assert_eq!(Some(kept.value(i)), line["kept"].as_bool());
        assert_eq!(of[i].is_some(), line.get("duplicate_of").is_some());
    }
}

/// The folder of shards: a .jsonl.gz, a .jsonl.zst and a Parquet file below a subfolder.
const SHARDS: &[&str] = &[
    "dedup",
    "shards/reviews",
    "--text-field",
    "body",
    "--id-field",
    "review_id",
];

#[test]
fn a_folder_of_shards_is_written_shard_by_shard_and_each_accounted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = SHARDS.to_vec();
    args.extend(["-o", out.to_str().unwrap()]);
    let o = neardup(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> = walk(&out);
    files.sort();
    assert_eq!(files, ["a.jsonl.gz", "b/c.jsonl.zst", "b/d.parquet"]);
    let gz = std::fs::read(out.join("a.jsonl.gz")).unwrap();
    assert_eq!(&gz[..2], [0x1f, 0x8b], "gzip, as the shard was");
    let zst = zstd_decode(&out.join("b/c.jsonl.zst"));
    let parquet = read_parquet(&out.join("b/d.parquet")).0;

    // Each shard's line adds up, and the shards add up to the run.
    let summary = stderr(&o);
    let (read, kept, removed, skipped) = accounting(&summary);
    let shard_lines: Vec<&str> = summary.lines().filter(|l| l.starts_with("input")).collect();
    assert_eq!(shard_lines.len(), 3, "{summary}");
    let mut sums = [0u64; 4];
    for line in &shard_lines {
        let n: Vec<u64> = line
            .split_once(": read ")
            .unwrap()
            .1
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(n[0], n[1] + n[2] + n[3], "{line}");
        for (s, v) in sums.iter_mut().zip(&n) {
            *s += v;
        }
    }
    assert_eq!(sums, [read, kept, removed, skipped], "{summary}");
    let written = flate2_lines(&gz) + zst.lines().count() as u64 + parquet.num_rows() as u64;
    assert_eq!(written, kept);
    assert!(shard_lines[0].contains("a.jsonl.gz"), "{summary}");

    // Written again over it: refused unless --force.
    let mut again = args.clone();
    again.push("-q");
    let o = neardup(&again);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    again.push("--force");
    ok(&again);
}

#[test]
fn a_folder_of_shards_to_a_file_named_so_is_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    let rows = std::fs::read(testdata("parquet/rows.jsonl")).unwrap();
    let half = rows.len() / 2
        + rows[rows.len() / 2..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap()
        + 1;
    std::fs::write(shards.join("a.jsonl.gz"), gzip_bytes(&rows[..half])).unwrap();
    std::fs::write(
        shards.join("b.jsonl.zst"),
        zstd::encode_all(&rows[half..], 3).unwrap(),
    )
    .unwrap();
    let all = dir.path().join("all.jsonl");
    let o = neardup(&[
        "dedup",
        shards.to_str().unwrap(),
        "-o",
        all.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(all.is_file());
    // The same survivors as the unsplit file, and two input lines in the summary.
    assert_eq!(
        std::fs::read_to_string(&all).unwrap(),
        ok(&["dedup", "parquet/rows.jsonl", "-q"])
    );
    assert_eq!(
        stderr(&o)
            .lines()
            .filter(|l| l.starts_with("input"))
            .count(),
        2
    );
    // Shards of several formats cannot be one file.
    let mut args = SHARDS.to_vec();
    args.extend(["-o", all.to_str().unwrap()]);
    refused(&args, &["one output in one format", "parquet"]);
}

#[test]
fn shards_of_two_formats_for_one_file_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    std::fs::write(shards.join("a.jsonl"), "{\"text\":\"x\"}\n").unwrap();
    // Not Parquet inside: reading it would be an error naming it, so the refusal comes
    // from its name alone, before anything is read.
    std::fs::write(shards.join("b.parquet"), "not parquet").unwrap();
    let out = dir.path().join("all.jsonl");
    refused(
        &[
            "dedup",
            shards.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &["one output in one format", "a.jsonl", "b.parquet"],
    );
}

fn flate2_lines(gz: &[u8]) -> u64 {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    text.lines().count() as u64
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            out.extend(walk(&path).into_iter().map(|p| format!("{name}/{p}")));
        } else {
            out.push(path.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    out
}

#[test]
fn several_parquet_files_go_one_per_file_to_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    ok(&[
        "dedup",
        "parquet/pyarrow.parquet",
        "parquet/polars.parquet",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    let mut files = walk(&out);
    files.sort();
    assert_eq!(files, ["polars.parquet", "pyarrow.parquet"]);
    // The same rows in both: the second file's are all duplicates of the first's.
    assert_eq!(read_parquet(&out.join("pyarrow.parquet")).0.num_rows(), 6);
    assert_eq!(read_parquet(&out.join("polars.parquet")).0.num_rows(), 0);
}

/// One output has one header: each command that writes CSV inputs back with a column
/// added refuses a second input whose header differs, naming it, and writes inputs of one
/// header under it once.
#[test]
fn csv_inputs_annotated_into_one_output_share_their_header() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, content: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_string()
    };
    let a = write(
        "a.csv",
        "id,text\na1,\"Kettles boil.\n\nWe use cookies.\"\n",
    );
    let b = write(
        "b.csv",
        "text,id\n\"Toasters toast.\n\nWe use cookies.\",b1\n",
    );
    let c = write(
        "c.csv",
        "id,text\nc1,\"Toasters toast.\n\nWe use cookies.\"\n",
    );
    let tests = write(
        "tests.jsonl",
        "{\"text\": \"one two three four five six seven eight nine ten eleven twelve thirteen\"}\n",
    );
    let out = dir.path().join("out.csv");
    let out = out.to_str().unwrap();
    refused(
        &["annotate", &a, &b, "-o", out],
        &["annotate writes one output with one header", "b.csv"],
    );
    let apart = ["one output with one header", "b.csv"];
    refused(
        &["annotate", "--unit", "paragraph", &a, &b, "-o", out],
        &apart,
    );
    let decontaminate = ["decontaminate", "--tests", &tests, "--annotate", "-o", out];
    refused(&[&decontaminate[..], &[&a, &b]].concat(), &apart);
    ok(&["annotate", "--unit", "paragraph", &a, &c, "-o", out, "-q"]);
    assert_eq!(
        std::fs::read_to_string(out).unwrap(),
        "id,text,removed_spans\n\
         a1,\"Kettles boil.\n\nWe use cookies.\",[]\n\
         c1,\"Toasters toast.\n\nWe use cookies.\",\"[[17,32,\"\"a1\"\"]]\"\n"
    );
}
