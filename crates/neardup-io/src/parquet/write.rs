//! Writing Parquet: the rows of an input a caller keeps, with the input's schema
//! ([`rewrite`]), and the options every Parquet output shares ([`ParquetOutput`]).

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{FieldRef, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::encode::ParquetWriter;
use crate::error::{Error, Result};

/// Rows decoded at a time while rewriting: all columns are read, so fewer than a
/// reader of one text column would take.
const BATCH_ROWS: usize = 1024;

/// A row group is closed at this many rows (DuckDB's are 122,880, Polars' 262,144): small
/// enough that a file of short texts has several, which are encoded side by side ...
pub const DEFAULT_ROW_GROUP_ROWS: usize = 128 * 1024;

/// ... or at this many bytes of Arrow data, whichever comes first: the rows of a group
/// are held until it is encoded, and long documents would otherwise fill memory.
pub const DEFAULT_ROW_GROUP_BYTES: usize = 64 * 1024 * 1024;

/// How a Parquet output's pages are compressed: `zstd` (the default, level 1 as pyarrow's),
/// `zstd:LEVEL` (1 to 22), `snappy`, `gzip`, `gzip:LEVEL` (0 to 9), `lz4` (the
/// `LZ4_RAW` codec, which pyarrow, DuckDB and Spark read) or `none`.
///
/// ```
/// use neardup_io::parquet::ParquetCompression;
///
/// assert_eq!("zstd:9".parse::<ParquetCompression>().unwrap(), ParquetCompression::Zstd(9));
/// assert_eq!(ParquetCompression::default().to_string(), "zstd:1");
/// assert!("brotli".parse::<ParquetCompression>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParquetCompression {
    /// zstd at a level from 1 to 22.
    Zstd(i32),
    /// Snappy.
    Snappy,
    /// gzip at a level from 0 to 9.
    Gzip(u32),
    /// LZ4 (the `LZ4_RAW` codec).
    Lz4,
    /// Uncompressed pages.
    None,
}

impl Default for ParquetCompression {
    fn default() -> Self {
        // pyarrow's level: zstd's own default (3) compresses the PyPI summaries at two
        // thirds of level 1's speed (218 against 326 MB/s, `zstd -b1e3`) for 11 % less.
        ParquetCompression::Zstd(1)
    }
}

impl fmt::Display for ParquetCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParquetCompression::Zstd(level) => write!(f, "zstd:{level}"),
            ParquetCompression::Snappy => f.write_str("snappy"),
            ParquetCompression::Gzip(level) => write!(f, "gzip:{level}"),
            ParquetCompression::Lz4 => f.write_str("lz4"),
            ParquetCompression::None => f.write_str("none"),
        }
    }
}

impl FromStr for ParquetCompression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::InvalidOptions(format!(
                "unknown Parquet compression {s:?} (expected zstd, zstd:LEVEL with LEVEL 1 to 22, \
                 snappy, gzip, gzip:LEVEL with LEVEL 0 to 9, lz4 or none)"
            ))
        };
        let lower = s.to_ascii_lowercase();
        let (name, level) = match lower.split_once(':') {
            Some((name, level)) => (name, Some(level)),
            None => (lower.as_str(), None),
        };
        let compression = match (name, level) {
            ("zstd", None) => ParquetCompression::default(),
            ("zstd", Some(level)) => ParquetCompression::Zstd(
                level
                    .parse()
                    .ok()
                    .filter(|l| (1..=22).contains(l))
                    .ok_or_else(bad)?,
            ),
            ("gzip", None) => ParquetCompression::Gzip(6),
            ("gzip", Some(level)) => {
                ParquetCompression::Gzip(level.parse().ok().filter(|l| *l <= 9).ok_or_else(bad)?)
            }
            ("snappy", None) => ParquetCompression::Snappy,
            ("lz4", None) => ParquetCompression::Lz4,
            ("none" | "uncompressed", None) => ParquetCompression::None,
            _ => return Err(bad()),
        };
        Ok(compression)
    }
}

impl ParquetCompression {
    /// The codec as the parquet crate names it (levels were checked on parsing).
    fn codec(self) -> Compression {
        match self {
            ParquetCompression::Zstd(level) => {
                Compression::ZSTD(ZstdLevel::try_new(level).unwrap_or_default())
            }
            ParquetCompression::Snappy => Compression::SNAPPY,
            ParquetCompression::Gzip(level) => {
                Compression::GZIP(GzipLevel::try_new(level).unwrap_or_default())
            }
            ParquetCompression::Lz4 => Compression::LZ4_RAW,
            ParquetCompression::None => Compression::UNCOMPRESSED,
        }
    }
}

/// How Parquet outputs are written: the compression and the row group size.
///
/// ```
/// use neardup_io::parquet::{ParquetCompression, ParquetOutput};
///
/// let output = ParquetOutput::new()
///     .compression(ParquetCompression::Snappy)
///     .row_group_size(10_000);
/// assert_eq!(output.row_group_rows(), 10_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParquetOutput {
    compression: ParquetCompression,
    row_group_rows: usize,
}

impl Default for ParquetOutput {
    fn default() -> Self {
        ParquetOutput {
            compression: ParquetCompression::default(),
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
        }
    }
}

impl ParquetOutput {
    /// zstd (level 1), row groups of [`DEFAULT_ROW_GROUP_ROWS`] rows or
    /// [`DEFAULT_ROW_GROUP_BYTES`] bytes, whichever is reached first.
    pub fn new() -> Self {
        Self::default()
    }

    /// How pages are compressed.
    pub fn compression(mut self, compression: ParquetCompression) -> Self {
        self.compression = compression;
        self
    }

    /// At most `rows` rows a row group (at least 1); the byte bound stays.
    pub fn row_group_size(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }

    /// The compression chosen.
    pub fn compression_of(&self) -> ParquetCompression {
        self.compression
    }

    /// The most rows a row group holds.
    pub fn row_group_rows(&self) -> usize {
        self.row_group_rows
    }

    /// The parquet crate's writer properties for these options.
    pub fn properties(&self) -> WriterProperties {
        WriterProperties::builder()
            .set_compression(self.compression.codec())
            .set_max_row_group_row_count(Some(self.row_group_rows))
            .build()
    }
}

/// Columns a caller adds to every batch [`rewrite`] writes: given the 1-based row of the
/// batch's first row and the 1-based rows kept from it (ascending), it returns the added
/// columns for those rows, each with its field (the same fields, in the same order, for
/// every batch). It is called once with no kept rows for an input without rows, so the
/// output's schema still has the added columns.
pub type ExtraColumns<'a> = dyn FnMut(u64, &[u64]) -> Result<Vec<(FieldRef, ArrayRef)>> + 'a;

/// What [`rewrite`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// Rows read from the input.
    pub read: u64,
    /// Rows written.
    pub written: u64,
}

/// Writes the rows of the Parquet file `input` that `keep` keeps to `out`, with the
/// input's schema (every column, nested ones too, and the file's key-value metadata) and
/// `extra`'s columns after them, compressed and grouped as `options` say: a
/// [`Rewriter`] of one input.
///
/// # Errors
///
/// As [`Rewriter::add`] and [`Rewriter::finish`].
pub fn rewrite<W: Write + Send>(
    input: &Path,
    out: W,
    out_name: &str,
    options: &ParquetOutput,
    keep: &mut dyn FnMut(u64) -> bool,
    extra: Option<&mut ExtraColumns<'_>>,
) -> Result<(W, Rewritten)> {
    let mut rewriter = Rewriter::new(out, out_name, options);
    let done = rewriter.add(input, keep, extra)?;
    Ok((rewriter.finish()?, done))
}

/// Writes the kept rows of one or more Parquet inputs of the same schema to one file,
/// with that schema: [`add`](Rewriter::add) each input, then [`finish`](Rewriter::finish).
pub struct Rewriter<'a, W: Write + Send> {
    writer: Writer<'a, W>,
    /// The first input, for errors about another's schema.
    first: Option<String>,
}

impl<'a, W: Write + Send> Rewriter<'a, W> {
    /// Starts the output `out`, which errors name `out_name`.
    pub fn new(out: W, out_name: &'a str, options: &ParquetOutput) -> Self {
        Rewriter {
            writer: Writer {
                out: Some(out),
                file: None,
                name: out_name,
                input: None,
                options: *options,
                extra_fields: None,
            },
            first: None,
        }
    }

    /// Writes the rows of the Parquet file `input` that `keep` keeps, with `extra`'s
    /// columns after the input's.
    ///
    /// `keep` is asked about each row, 1-based in file order (rows of every row group
    /// counted, as the reader numbers [`Location::record`](crate::Location::record)), in
    /// ascending order. The input is read a batch of rows at a time with all its
    /// columns, so memory follows the output's row group and one batch, not the file.
    ///
    /// # Errors
    ///
    /// [`Error::Read`] if `input` cannot be opened, [`Error::Parquet`] naming it (and
    /// the row) if it is not a readable Parquet file or its schema is not the first
    /// input's, [`Error::Write`] naming the output if it cannot be written, and whatever
    /// `extra` returns; an added column of the wrong length or a field that changes
    /// between batches is [`Error::InvalidOptions`].
    pub fn add(
        &mut self,
        input: &Path,
        keep: &mut dyn FnMut(u64) -> bool,
        mut extra: Option<&mut ExtraColumns<'_>>,
    ) -> Result<Rewritten> {
        let source = input.display().to_string();
        let bad = |row: Option<u64>, e: &dyn fmt::Display| Error::Parquet {
            path: source.clone(),
            row,
            reason: e.to_string(),
        };
        let file = File::open(input).map_err(|error| Error::Read {
            path: source.clone(),
            line: None,
            error,
        })?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| bad(None, &e))?;
        let schema = builder.schema().clone();
        match (&self.writer.input, &self.first) {
            (Some(known), Some(first)) if known.fields() != schema.fields() => {
                return Err(bad(
                    None,
                    &format!(
                    "its columns are not those of {first}, so they cannot be written to one file"
                ),
                ))
            }
            (Some(_), _) => {}
            (None, _) => {
                self.writer.input = Some(schema);
                self.first = Some(source.clone());
            }
        }
        let batches = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| bad(None, &e))?;
        let mut done = Rewritten::default();
        for batch in batches {
            let first = done.read + 1;
            let batch = batch.map_err(|e| bad(Some(first), &e))?;
            let rows: Vec<u64> = (first..first + batch.num_rows() as u64).collect();
            let kept: Vec<u64> = rows.iter().copied().filter(|&r| keep(r)).collect();
            done.read += rows.len() as u64;
            let columns = match extra.as_mut() {
                Some(extra) => extra(first, &kept)?,
                None => Vec::new(),
            };
            let mask: BooleanArray = if kept.len() == rows.len() {
                BooleanArray::from(vec![true; rows.len()])
            } else {
                let mut next = kept.iter().peekable();
                rows.iter()
                    .map(|r| Some(next.next_if_eq(&r).is_some()))
                    .collect()
            };
            let batch = arrow_select::filter::filter_record_batch(&batch, &mask)
                .map_err(|e| bad(Some(first), &e))?;
            done.written += self.writer.write(batch, columns)?;
        }
        if self.writer.file.is_none() {
            // No rows: the file is started now, so it has the schema, added columns too.
            let columns = match extra.as_mut() {
                Some(extra) => extra(done.read + 1, &[])?,
                None => Vec::new(),
            };
            let empty = RecordBatch::new_empty(self.writer.input.clone().expect("set above"));
            self.writer.write(empty, columns)?;
        }
        Ok(done)
    }

    /// Writes the footer and hands the output back.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] naming the output; [`Error::InvalidOptions`] if no input was added
    /// (there is no schema to write).
    pub fn finish(self) -> Result<W> {
        match self.writer.file {
            Some(file) => file.finish(),
            None => Err(Error::InvalidOptions(
                "a Parquet output needs at least one input for its schema".into(),
            )),
        }
    }
}

/// The Arrow schema of the Parquet file at `path`, from its footer alone.
///
/// # Errors
///
/// [`Error::Read`] if it cannot be opened, [`Error::Parquet`] naming it if it is not a
/// readable Parquet file.
pub fn schema_of(path: &Path) -> Result<SchemaRef> {
    let source = path.display().to_string();
    let file = File::open(path).map_err(|error| Error::Read {
        path: source.clone(),
        line: None,
        error,
    })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| Error::Parquet {
        path: source,
        row: None,
        reason: e.to_string(),
    })?;
    Ok(builder.schema().clone())
}

/// The output side of [`rewrite`]: the file, started on the first batch, when the
/// added columns' fields are known.
struct Writer<'a, W: Write + Send> {
    out: Option<W>,
    file: Option<ParquetWriter<W>>,
    name: &'a str,
    /// The first input's schema.
    input: Option<SchemaRef>,
    options: ParquetOutput,
    extra_fields: Option<Vec<FieldRef>>,
}

impl<W: Write + Send> Writer<'_, W> {
    /// Writes `batch` with `extra` columns added; returns its rows.
    fn write(&mut self, batch: RecordBatch, extra: Vec<(FieldRef, ArrayRef)>) -> Result<u64> {
        let (fields, arrays): (Vec<FieldRef>, Vec<ArrayRef>) = extra.into_iter().unzip();
        if let Some(a) = arrays.iter().find(|a| a.len() != batch.num_rows()) {
            return Err(Error::InvalidOptions(format!(
                "an added Parquet column has {} rows for a batch of {}",
                a.len(),
                batch.num_rows()
            )));
        }
        match &self.extra_fields {
            Some(known) if *known != fields => {
                return Err(Error::InvalidOptions(
                    "the added Parquet columns changed between batches".into(),
                ))
            }
            Some(_) => {}
            None => self.extra_fields = Some(fields.clone()),
        }
        // The input's schema, its key-value metadata included (the reader's batches
        // carry the fields only), and the added fields after it.
        // An added column named like one of the input's takes its place (annotate
        // --force replaces a value where it stands).
        let input = self.input.as_ref().expect("set before the first batch");
        let mut all: Vec<FieldRef> = input.fields().iter().cloned().collect();
        let mut columns = batch.columns().to_vec();
        for (field, array) in fields.into_iter().zip(arrays) {
            match all.iter().position(|f| f.name() == field.name()) {
                Some(at) => (all[at], columns[at]) = (field, array),
                None => {
                    all.push(field);
                    columns.push(array);
                }
            }
        }
        let schema = Schema::new(all).with_metadata(input.metadata().clone());
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let batch = RecordBatch::try_new_with_options(Arc::new(schema), columns, &options)
            .map_err(|e| {
                Error::InvalidOptions(format!("the added Parquet columns do not fit: {e}"))
            })?;
        if self.file.is_none() {
            let out = self.out.take().expect("the output is taken once");
            self.file = Some(ParquetWriter::create(
                out,
                self.name,
                batch.schema(),
                &self.options,
            )?);
        }
        self.file.as_mut().expect("made above").write(&batch)?;
        Ok(batch.num_rows() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{Array, Int64Array, StringArray, StructArray};
    use arrow_schema::{DataType, Field};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;

    /// Rows with a text, an id, a struct and a list column, in row groups of 3 rows,
    /// with a key-value note in the schema.
    fn input(dir: &Path, rows: i64) -> (std::path::PathBuf, RecordBatch) {
        std::fs::create_dir_all(dir).unwrap();
        let text = StringArray::from_iter_values((0..rows).map(|i| format!("text {i}")));
        let id = Int64Array::from_iter_values(0..rows);
        let meta = StructArray::from(vec![(
            Arc::new(Field::new("url", DataType::Utf8, true)),
            Arc::new(StringArray::from_iter(
                (0..rows).map(|i| (i % 2 == 0).then(|| format!("u{i}"))),
            )) as ArrayRef,
        )]);
        let mut tags = ListBuilder::new(StringBuilder::new());
        for i in 0..rows {
            for t in 0..i % 3 {
                tags.values().append_value(format!("t{t}"));
            }
            tags.append(true);
        }
        let tags = tags.finish();
        let schema = Schema::new(vec![
            Field::new("text", DataType::Utf8, false),
            Field::new("id", DataType::Int64, false),
            Field::new("meta", meta.data_type().clone(), true),
            Field::new("tags", tags.data_type().clone(), true),
        ])
        .with_metadata(std::collections::HashMap::from([(
            "origin".to_string(),
            "test rows".to_string(),
        )]));
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(text), Arc::new(id), Arc::new(meta), Arc::new(tags)],
        )
        .unwrap();
        let path = dir.join("in.parquet");
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(3))
            .build();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props))
            .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        (path, batch)
    }

    fn read_back(bytes: Vec<u8>) -> (RecordBatch, parquet::file::metadata::ParquetMetaData) {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let meta = builder.metadata().as_ref().clone();
        let schema = builder.schema().clone();
        let batches: Vec<RecordBatch> = builder.build().unwrap().map(|b| b.unwrap()).collect();
        (
            arrow_select::concat::concat_batches(&schema, &batches).unwrap(),
            meta,
        )
    }

    #[test]
    fn kept_rows_keep_every_column_and_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let (path, original) = input(dir.path(), 10);
        let keep_rows = [1u64, 2, 5, 9, 10];
        let mut asked = Vec::new();
        let mut keep = |row: u64| {
            asked.push(row);
            keep_rows.contains(&row)
        };
        let options = ParquetOutput::new().row_group_size(2);
        let (out, done) = rewrite(&path, Vec::new(), "out", &options, &mut keep, None).unwrap();
        assert_eq!(asked, (1..=10).collect::<Vec<u64>>());
        assert_eq!(
            done,
            Rewritten {
                read: 10,
                written: 5
            }
        );
        let (back, meta) = read_back(out);
        let mask: BooleanArray = (1..=10u64).map(|r| Some(keep_rows.contains(&r))).collect();
        let expected = arrow_select::filter::filter_record_batch(&original, &mask).unwrap();
        assert_eq!(back.schema().fields(), original.schema().fields());
        assert_eq!(back.columns(), expected.columns());
        assert_eq!(back.schema().metadata()["origin"], "test rows");
        assert_eq!(meta.num_row_groups(), 3, "row groups of at most 2 rows");
        let column = meta.row_group(0).column(0);
        assert!(
            matches!(column.compression(), Compression::ZSTD(_)),
            "{:?}",
            column.compression()
        );
    }

    #[test]
    fn added_columns_follow_the_input_and_an_empty_input_still_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let field: FieldRef = Arc::new(Field::new("kept_row", DataType::Int64, false));
        let mut extra = |_first: u64, kept: &[u64]| -> Result<Vec<(FieldRef, ArrayRef)>> {
            let rows = Int64Array::from_iter_values(kept.iter().map(|&r| r as i64));
            Ok(vec![(field.clone(), Arc::new(rows) as ArrayRef)])
        };
        let (path, _) = input(dir.path(), 7);
        let options = ParquetOutput::new().compression(ParquetCompression::Snappy);
        let (out, done) = rewrite(
            &path,
            Vec::new(),
            "out",
            &options,
            &mut |r| r % 2 == 1,
            Some(&mut extra),
        )
        .unwrap();
        assert_eq!(
            done,
            Rewritten {
                read: 7,
                written: 4
            }
        );
        let (back, meta) = read_back(out);
        assert_eq!(back.schema().field(4).name(), "kept_row");
        let rows = back
            .column(4)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(rows.values(), &[1, 3, 5, 7]);
        assert_eq!(
            meta.row_group(0).column(0).compression(),
            Compression::SNAPPY
        );

        let (path, _) = input(dir.path(), 0);
        let (out, done) = rewrite(
            &path,
            Vec::new(),
            "out",
            &options,
            &mut |_| true,
            Some(&mut extra),
        )
        .unwrap();
        assert_eq!(done, Rewritten::default());
        let (back, _) = read_back(out);
        assert_eq!(back.num_rows(), 0);
        assert_eq!(back.schema().fields().len(), 5);
    }

    #[test]
    fn an_added_column_of_the_wrong_length_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = input(dir.path(), 4);
        let mut extra = |_: u64, _: &[u64]| -> Result<Vec<(FieldRef, ArrayRef)>> {
            let field = Arc::new(Field::new("x", DataType::Int64, false));
            Ok(vec![(
                field,
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            )])
        };
        let e = rewrite(
            &path,
            Vec::new(),
            "out",
            &ParquetOutput::new(),
            &mut |_| true,
            Some(&mut extra),
        )
        .unwrap_err();
        assert!(e.to_string().contains("1 rows for a batch of 4"), "{e}");
    }

    #[test]
    fn inputs_of_one_schema_go_to_one_file_and_another_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = input(&dir.path().join("a"), 4);
        let (b, _) = input(&dir.path().join("b"), 3);
        let options = ParquetOutput::new();
        let mut rewriter = Rewriter::new(Vec::new(), "out", &options);
        assert_eq!(rewriter.add(&a, &mut |r| r > 2, None).unwrap().written, 2);
        assert_eq!(rewriter.add(&b, &mut |_| true, None).unwrap().written, 3);
        let (back, _) = read_back(rewriter.finish().unwrap());
        let ids = back
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(ids.values(), &[2, 3, 0, 1, 2]);

        let other = dir.path().join("other.parquet");
        let batch = RecordBatch::try_from_iter([(
            "text",
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
        )])
        .unwrap();
        let mut w =
            ArrowWriter::try_new(File::create(&other).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let mut rewriter = Rewriter::new(Vec::new(), "out", &options);
        rewriter.add(&a, &mut |_| true, None).unwrap();
        let e = rewriter.add(&other, &mut |_| true, None).unwrap_err();
        assert!(e.to_string().contains("other.parquet"), "{e}");
        assert!(e.to_string().contains("a/in.parquet"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_parquet_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        std::fs::write(&path, b"not parquet at all").unwrap();
        let e = rewrite(
            &path,
            Vec::new(),
            "out",
            &ParquetOutput::new(),
            &mut |_| true,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Parquet { .. }), "{e:?}");
        assert!(e.to_string().contains("bad.parquet"), "{e}");
    }

    #[test]
    fn compression_names() {
        for (name, c) in [
            ("zstd", ParquetCompression::Zstd(1)),
            ("ZSTD:19", ParquetCompression::Zstd(19)),
            ("snappy", ParquetCompression::Snappy),
            ("gzip", ParquetCompression::Gzip(6)),
            ("gzip:1", ParquetCompression::Gzip(1)),
            ("lz4", ParquetCompression::Lz4),
            ("none", ParquetCompression::None),
        ] {
            assert_eq!(name.parse::<ParquetCompression>().unwrap(), c, "{name}");
            assert_eq!(c.to_string().parse::<ParquetCompression>().unwrap(), c);
        }
        for bad in ["zstd:0", "zstd:23", "gzip:10", "snappy:1", "brotli", ""] {
            let e = bad.parse::<ParquetCompression>().unwrap_err();
            assert!(e.to_string().contains("expected zstd"), "{bad}: {e}");
        }
    }
}
