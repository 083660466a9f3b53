//! The Parquet reader: rows of the columns asked for, batch by batch, as entries.
//!
//! A record's [`Location::line`] and [`Location::record`] are both its 1-based row in the
//! file (every row group's rows counted in file order, skipped rows included), and its
//! [`Record::raw`] is empty: a Parquet row has no bytes of its own to copy back.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, LargeStringArray, RecordBatch, StringArray, StringViewArray};
use arrow_schema::{DataType, Field, Fields};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;

use crate::error::{Error, Result};
use crate::options::ReadOptions;
use crate::record::{Entry, Filled, Record, SkipReason, Skipped};

/// Rows decoded at a time: enough to amortise the decoder's per-batch work, few enough
/// that a batch of long documents stays far below a row group.
const BATCH_ROWS: usize = 1024;

/// The magic bytes a Parquet file starts and ends with.
pub(crate) const MAGIC: &[u8; 4] = b"PAR1";

/// What a text column must be.
const TEXT_TYPES: &str =
    "a text column must be a string (string, large_string, string_view or a dictionary of strings)";

/// What an id or key column must be.
const VALUE_TYPES: &str =
    "an id or key column must be a string, a number, a boolean or binary (or a dictionary of those)";

/// A column asked for: its name as given and its path of field names.
struct Column {
    name: String,
    path: Vec<String>,
}

/// A column of one batch, ready to be read row by row.
struct Prepared {
    /// The arrays from the top-level column down to the leaf: a row is null if any is.
    chain: Vec<ArrayRef>,
    /// The values: the leaf, or a dictionary's values.
    values: ArrayRef,
    /// A dictionary's keys as indices into `values`.
    keys: Option<Vec<usize>>,
    /// `values` as strings, if they are: told once per batch, not per row.
    strings: Strings,
    /// Whether any array of `chain` has a null: most batches have none, and then no row
    /// is asked.
    nulls: bool,
}

/// A batch's string values, by their layout.
enum Strings {
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    View(StringViewArray),
    /// Not strings (an id or key column of numbers, booleans, bytes).
    No,
}

impl Strings {
    fn of(values: &dyn Array) -> Strings {
        if let Some(a) = values.as_string_opt::<i32>() {
            Strings::Utf8(a.clone())
        } else if let Some(a) = values.as_string_opt::<i64>() {
            Strings::LargeUtf8(a.clone())
        } else if let Some(a) = values.as_string_view_opt() {
            Strings::View(a.clone())
        } else {
            Strings::No
        }
    }
}

impl Prepared {
    /// The column of `batch`, `Ok(None)` if the batch lacks it; an error if its arrays
    /// could not be read row by row without a panic (a row past an array's end, a
    /// dictionary key past its values): checked once here, so reading a row cannot fail.
    fn new(batch: &RecordBatch, column: &Column) -> std::result::Result<Option<Prepared>, String> {
        let Some(first) = batch.column_by_name(&column.path[0]) else {
            return Ok(None);
        };
        let mut chain: Vec<ArrayRef> = vec![first.clone()];
        for name in &column.path[1..] {
            let child = chain
                .last()
                .and_then(|a| a.as_struct_opt()?.column_by_name(name));
            let Some(child) = child else {
                return Ok(None);
            };
            chain.push(child.clone());
        }
        let rows = batch.num_rows();
        if chain.iter().any(|a| a.len() < rows) {
            return Err(format!(
                "column {:?} has fewer values than rows",
                column.name
            ));
        }
        let leaf = chain[chain.len() - 1].clone();
        let (values, keys) = match leaf.as_any_dictionary_opt() {
            Some(dict) => (dict.values().clone(), Some(dict.normalized_keys())),
            None => (leaf, None),
        };
        if keys
            .as_ref()
            .is_some_and(|k| k.iter().any(|&k| k >= values.len()))
        {
            return Err(format!(
                "column {:?} has a dictionary key past its values",
                column.name
            ));
        }
        Ok(Some(Prepared {
            nulls: chain.iter().any(|a| a.null_count() > 0),
            chain,
            strings: Strings::of(values.as_ref()),
            values,
            keys,
        }))
    }

    /// The index into `values` of row `i`, or `None` if the row is null.
    fn index(&self, i: usize) -> Option<usize> {
        if self.nulls && self.chain.iter().any(|a| a.is_null(i)) {
            return None;
        }
        match &self.keys {
            Some(keys) => keys.get(i).copied(),
            None => Some(i),
        }
    }

    /// Row `i` as a string, `None` if null (the column's type was checked on opening).
    fn text(&self, i: usize) -> Option<&str> {
        let i = self.index(i)?;
        match &self.strings {
            Strings::Utf8(a) => Some(a.value(i)),
            Strings::LargeUtf8(a) => Some(a.value(i)),
            Strings::View(a) => Some(a.value(i)),
            Strings::No => None,
        }
    }

    /// Row `i` as text written into `out` (cleared first), and whether it is a number
    /// (written back as one); `None` if null.
    fn value_into(&self, i: usize, out: &mut String) -> Option<bool> {
        use std::fmt::Write;
        out.clear();
        if let Some(text) = self.text(i) {
            out.push_str(text);
            return Some(false);
        }
        let i = self.index(i)?;
        let v = self.values.as_ref();
        // Writing to a String cannot fail.
        macro_rules! number {
            ($($t:ty),*) => {
                $(if let Some(a) = v.as_primitive_opt::<$t>() {
                    let _ = write!(out, "{}", a.value(i));
                    return Some(true);
                })*
            };
        }
        number!(
            Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
            UInt64Type
        );
        macro_rules! float {
            ($($t:ty),*) => {
                $(if let Some(a) = v.as_primitive_opt::<$t>() {
                    let x = a.value(i);
                    let _ = write!(out, "{x}");
                    // NaN and the infinities are no JSON numbers: written as text.
                    return Some(x.is_finite());
                })*
            };
        }
        float!(Float16Type, Float32Type, Float64Type);
        if let Some(a) = v.as_boolean_opt() {
            let _ = write!(out, "{}", a.value(i));
            return Some(false);
        }
        let bytes = if let Some(a) = v.as_binary_opt::<i32>() {
            a.value(i)
        } else if let Some(a) = v.as_binary_opt::<i64>() {
            a.value(i)
        } else {
            v.as_binary_view_opt()?.value(i)
        };
        out.push_str(&String::from_utf8_lossy(bytes));
        Some(false)
    }

    /// Row `i` into `field`: `None` if null, the field's buffer kept for the next row.
    fn field_into(&self, i: usize, field: &mut Option<String>) -> Option<bool> {
        let mut buffer = field.take().unwrap_or_default();
        let numeric = self.value_into(i, &mut buffer)?;
        *field = Some(buffer);
        Some(numeric)
    }
}

/// One decoded batch and how far it has been read.
struct Batch {
    rows: usize,
    next: usize,
    text: Option<Prepared>,
    id: Option<Prepared>,
    key: Option<Prepared>,
}

/// Reads the rows of a Parquet file as entries.
pub(crate) struct ParquetReader {
    source: Arc<str>,
    batches: ParquetRecordBatchReader,
    text: Option<Column>,
    id: Option<Column>,
    key: Option<Column>,
    /// The file's columns, a struct's fields as dotted paths.
    columns: Vec<String>,
    batch: Option<Batch>,
    /// Rows yielded so far.
    row: u64,
    limit: usize,
}

impl ParquetReader {
    /// Opens the Parquet file at `path` and checks the columns `opts` asks for.
    pub(crate) fn open(path: &Path, opts: &ReadOptions) -> Result<ParquetReader> {
        let source: Arc<str> = path.display().to_string().into();
        let error = |reason: String| Error::Parquet {
            path: source.to_string(),
            row: None,
            reason,
        };
        let mut file = File::open(path).map_err(|e| Error::Read {
            path: source.to_string(),
            line: None,
            error: e,
        })?;
        check_magic(&mut file).map_err(|e| match e {
            Ok(reason) => error(reason.to_string()),
            Err(error) => Error::Read {
                path: source.to_string(),
                line: None,
                error,
            },
        })?;
        let builder = guarded(|| ParquetRecordBatchReaderBuilder::try_new(file))
            .and_then(|b| b.map_err(|e| e.to_string()))
            .map_err(|e| error(format!("damaged Parquet footer: {e}")))?;
        let schema = builder.schema().clone();
        let columns = column_names(schema.fields());
        let missing = |column: &str| Error::MissingParquetColumn {
            path: source.to_string(),
            column: column.to_string(),
            available: columns.clone(),
        };
        let wrong = |column: &str, field: &Field, wanted| Error::ParquetColumnType {
            path: source.to_string(),
            column: column.to_string(),
            found: type_name(field.data_type()),
            wanted,
        };
        // The text column must be there; the default id column `id` may be absent (the
        // rows are then numbered), one named otherwise must be there.
        let text = match opts.text_field.as_str() {
            "" => None,
            name => {
                let (column, field) = find(schema.fields(), name).ok_or_else(|| missing(name))?;
                if !is_text(field.data_type()) {
                    return Err(wrong(name, field, TEXT_TYPES));
                }
                Some(column)
            }
        };
        let value_column = |name: &str, required: bool| -> Result<Option<Column>> {
            match find(schema.fields(), name) {
                Some((column, field)) if is_value(field.data_type()) => Ok(Some(column)),
                Some((_, field)) => Err(wrong(name, field, VALUE_TYPES)),
                None if required => Err(missing(name)),
                None => Ok(None),
            }
        };
        let id = match opts.id_field.as_str() {
            "" => None,
            name => value_column(name, name != crate::DEFAULT_ID_COLUMN)?,
        };
        let key = match opts.key_field.as_deref() {
            Some(name) => value_column(name, true)?,
            None => None,
        };
        // Only the leaves under the columns asked for are decoded.
        let wanted: Vec<&Column> = [&text, &id, &key].into_iter().flatten().collect();
        let leaves: Vec<usize> = builder
            .parquet_schema()
            .columns()
            .iter()
            .enumerate()
            .filter(|(_, leaf)| {
                let parts = leaf.path().parts();
                wanted.iter().any(|c| parts.starts_with(&c.path))
            })
            .map(|(i, _)| i)
            .collect();
        let batches = guarded(|| {
            let mask = ProjectionMask::leaves(builder.parquet_schema(), leaves);
            builder
                .with_projection(mask)
                .with_batch_size(BATCH_ROWS)
                .build()
        })
        .and_then(|b| b.map_err(|e| e.to_string()))
        .map_err(|e| error(format!("cannot read the Parquet file: {e}")))?;
        Ok(ParquetReader {
            source,
            batches,
            text,
            id,
            key,
            columns,
            batch: None,
            row: 0,
            limit: opts.max_record_bytes,
        })
    }

    /// The file's columns, a struct's fields as dotted paths.
    pub(crate) fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The next batch with rows, or `None` at the end of the file.
    fn next_batch(&mut self) -> Result<Option<Batch>> {
        loop {
            let Some(batch) = self.batches.next() else {
                return Ok(None);
            };
            let batch = batch.map_err(|e| Error::Parquet {
                path: self.source.to_string(),
                row: Some(self.row + 1),
                reason: format!("damaged Parquet data: {e}"),
            })?;
            if batch.num_rows() == 0 {
                continue;
            }
            let prepare = |column: &Option<Column>| -> Result<Option<Prepared>> {
                let Some(c) = column else {
                    return Ok(None);
                };
                let reason = match Prepared::new(&batch, c) {
                    Ok(Some(prepared)) => return Ok(Some(prepared)),
                    Ok(None) => format!("column {:?} is missing from a row group", c.name),
                    Err(damage) => format!("damaged Parquet data: {damage}"),
                };
                Err(Error::Parquet {
                    path: self.source.to_string(),
                    row: Some(self.row + 1),
                    reason,
                })
            };
            return Ok(Some(Batch {
                rows: batch.num_rows(),
                next: 0,
                text: prepare(&self.text)?,
                id: prepare(&self.id)?,
                key: prepare(&self.key)?,
            }));
        }
    }

    /// The next row as an entry, `None` at the end of the file.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        let mut record = Record::default();
        Ok(self.read_into(&mut record)?.map(|filled| match filled {
            Filled::Record => Entry::Record(record),
            Filled::Skipped(skipped) => Entry::Skipped(skipped),
        }))
    }

    /// The next row written into `record`, its buffers reused (see
    /// [`Reader::read_into`](crate::Reader::read_into)); `None` at the end of the file.
    pub(crate) fn read_into(&mut self, record: &mut Record) -> Result<Option<Filled>> {
        if self.batch.as_ref().is_none_or(|b| b.next == b.rows) {
            // The decoder runs here, guarded; a row of a decoded batch is read without
            // a panic (`Prepared::new` checked its arrays).
            let row = self.row + 1;
            self.batch = guarded(|| self.next_batch()).unwrap_or_else(|panic| {
                Err(Error::Parquet {
                    path: self.source.to_string(),
                    row: Some(row),
                    reason: format!("damaged Parquet data: {panic}"),
                })
            })?;
        }
        let Some(batch) = &mut self.batch else {
            return Ok(None);
        };
        let i = batch.next;
        batch.next += 1;
        self.row += 1;
        let location = &mut record.location;
        // Every row of the file names it: the name is shared, not counted again per row.
        if !Arc::ptr_eq(&location.source, &self.source) {
            location.source = self.source.clone();
        }
        location.line = self.row;
        location.record = self.row;
        record.numeric_id = match &batch.id {
            // A null leaves `None`.
            Some(column) => column.field_into(i, &mut record.id).unwrap_or(false),
            None => {
                record.id = None;
                false
            }
        };
        let skipped = |reason, record: &Record| {
            Filled::Skipped(Skipped {
                location: record.location.clone(),
                id: record.id.clone(),
                reason,
            })
        };
        record.text.clear();
        if let (Some(prepared), Some(column)) = (&batch.text, &self.text) {
            match prepared.text(i) {
                // A null is no string, as `"text": null` is not in JSONL.
                None => {
                    let reason = SkipReason::FieldNotText(column.name.clone());
                    return Ok(Some(skipped(reason, record)));
                }
                Some(text) if text.len() > self.limit => {
                    let reason = SkipReason::TooLarge {
                        size: text.len() as u64,
                        limit: self.limit as u64,
                    };
                    return Ok(Some(skipped(reason, record)));
                }
                Some(text) => record.text.push_str(text),
            }
        }
        match &batch.key {
            Some(column) => _ = column.field_into(i, &mut record.key),
            None => record.key = None,
        }
        record.raw.clear();
        record.lossy = false;
        record.path = None;
        Ok(Some(Filled::Record))
    }
}

/// Runs `f`, a panic in it made an error message. arrow-rs asserts on some damaged
/// metadata (a negative column offset) instead of returning an error, and no input may end
/// the process: the file is reported as damaged, naming it, like any other.
fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the decoder stopped".to_string())
    })
}

/// True if the file at `path` starts with Parquet's magic bytes (false if it cannot be
/// read: opening it again reports why).
pub(crate) fn starts_with_magic(path: &Path) -> bool {
    let mut head = Vec::with_capacity(4);
    File::open(path)
        .and_then(|f| f.take(4).read_to_end(&mut head))
        .is_ok_and(|_| head == MAGIC)
}

/// Tells a file that is not Parquet, or is cut short, from one whose footer is damaged:
/// `Ok(reason)` for the first two, `Err` if the file cannot be read.
fn check_magic(file: &mut File) -> std::result::Result<(), std::io::Result<&'static str>> {
    let len = file.metadata().map_err(Err)?.len();
    let mut head = Vec::with_capacity(4);
    (&mut *file).take(4).read_to_end(&mut head).map_err(Err)?;
    if head != MAGIC {
        return Err(Ok(
            "not a Parquet file (it does not start with the magic bytes PAR1)",
        ));
    }
    let mut tail = [0u8; 4];
    file.seek(SeekFrom::Start(len.saturating_sub(4)))
        .and_then(|_| file.read_exact(&mut tail))
        .map_err(Err)?;
    if len < 12 || &tail != MAGIC {
        return Err(Ok(
            "truncated Parquet file (it does not end with the footer's magic bytes PAR1)",
        ));
    }
    file.rewind().map_err(Err)?;
    Ok(())
}

/// Finds the field `name` names: a top-level field of that exact name, else a dotted
/// path through struct fields. Returns the path and the field.
fn find<'a>(fields: &'a Fields, name: &str) -> Option<(Column, &'a Field)> {
    let column = |path: Vec<String>| Column {
        name: name.to_string(),
        path,
    };
    if let Some((_, field)) = fields.find(name) {
        return Some((column(vec![name.to_string()]), field));
    }
    let mut parts = name.split('.');
    let (_, mut field) = fields.find(parts.next()?)?;
    for part in parts {
        let DataType::Struct(children) = field.data_type() else {
            return None;
        };
        field = children.find(part)?.1;
    }
    Some((column(name.split('.').map(str::to_string).collect()), field))
}

/// The columns of a schema, a struct's fields as dotted paths (the struct itself not
/// listed), for telling the user what there is.
fn column_names(fields: &Fields) -> Vec<String> {
    let mut names = Vec::new();
    for field in fields {
        match field.data_type() {
            DataType::Struct(children) => names.extend(
                column_names(children)
                    .into_iter()
                    .map(|child| format!("{}.{child}", field.name())),
            ),
            _ => names.push(field.name().clone()),
        }
    }
    names
}

/// True for a string type, or a dictionary of one.
fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => is_text(values),
        _ => false,
    }
}

/// True for the types an id or key is read from.
fn is_value(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, values) => is_value(values),
        t => {
            is_text(t)
                || t.is_integer()
                || t.is_floating()
                || matches!(
                    t,
                    DataType::Boolean
                        | DataType::Binary
                        | DataType::LargeBinary
                        | DataType::BinaryView
                )
        }
    }
}

/// A type as pyarrow names it (`int64`, `large_string`), which most users know Parquet
/// files by; Arrow's own name for the rest.
fn type_name(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Utf8View => "string_view".into(),
        DataType::Boolean => "bool".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Struct(_) => "a struct".into(),
        DataType::List(_) | DataType::LargeList(_) | DataType::ListView(_) => "a list".into(),
        DataType::Dictionary(_, values) => format!("a dictionary of {}", type_name(values)),
        t if t.is_integer() => format!("{t}").to_ascii_lowercase(),
        t => format!("{t}"),
    }
}
