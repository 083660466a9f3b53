//! Texts from any Arrow producer, through the Arrow PyCapsule interface: an object with
//! `__arrow_c_stream__` (a Polars Series or DataFrame, a DuckDB relation, a pyarrow Table,
//! ChunkedArray or RecordBatchReader) or `__arrow_c_array__` (an array or a record batch).
//! The producer's buffers are imported as they are (arrow-rs's C data interface) and read
//! in place: no string becomes a Python object.
//!
//! A stream is read a batch at a time, so a run holds one batch of texts besides the
//! shingled corpus. A stream of tables (struct arrays) gives the column named by the
//! caller, or its only column, or a column `text`. `string`, `large_string`,
//! `string_view` and dictionaries of those are read; a null is a missing text.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;

use crate::errors::refused;

/// True if `obj` exports Arrow data through the PyCapsule interface.
pub fn exports(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.hasattr("__arrow_c_stream__")? || obj.hasattr("__arrow_c_array__")?)
}

/// The pointer a capsule holds, checked to be of the kind its name says.
fn capsule_pointer(capsule: &Bound<'_, PyAny>, name: &CStr) -> PyResult<*mut std::ffi::c_void> {
    // SAFETY: PyCapsule_GetPointer checks the object is a capsule of that name, and
    // returns NULL with an exception set if it is not.
    let pointer = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr()) };
    if pointer.is_null() {
        return Err(PyErr::fetch(capsule.py()));
    }
    Ok(pointer)
}

/// Where the texts' arrays come from.
enum Arrays {
    /// A producer's stream, read on demand.
    Stream(ArrayStreamReader),
    /// One array, given whole.
    One(Option<ArrayRef>),
}

/// The text column of an Arrow producer, read chunk by chunk.
pub struct TextStream {
    arrays: Arrays,
    /// The text column's index when the stream's arrays are tables (struct arrays).
    column: Option<usize>,
    /// Names the argument in messages.
    what: String,
    /// Texts read so far: the first row of the next chunk.
    rows: usize,
}

/// The arrays of an object with `__arrow_c_stream__`, imported as they are (a table's
/// are struct arrays); `what` names it in errors.
pub fn stream(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ArrayStreamReader> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let pointer = capsule_pointer(&capsule, c"arrow_array_stream")?;
    // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream; the struct
    // is moved out and the capsule's left released, so it is read once.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.cast()) };
    ArrayStreamReader::try_new(stream).map_err(|e| refused(format!("{what}: {e}")))
}

/// Opens the texts of `obj` (see [`exports`]): its column `column` when it is a table.
pub fn open(obj: &Bound<'_, PyAny>, column: Option<&str>, what: &str) -> PyResult<TextStream> {
    let (arrays, field) = if obj.hasattr("__arrow_c_stream__")? {
        let reader = stream(obj, what)?;
        let field = Arc::clone(arrow_array::ArrayReader::field(&reader));
        (Arrays::Stream(reader), field)
    } else {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let (schema, array): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
        let schema = capsule_pointer(&schema, c"arrow_schema")?.cast::<FFI_ArrowSchema>();
        let array = capsule_pointer(&array, c"arrow_array")?.cast::<FFI_ArrowArray>();
        // SAFETY: the capsules hold an ArrowSchema and an ArrowArray of that schema. The
        // array is moved out (its capsule left released); the schema is only borrowed
        // and released with its capsule.
        let data = unsafe { from_ffi(FFI_ArrowArray::from_raw(array), &*schema) };
        let array = arrow_array::make_array(data.map_err(|e| refused(format!("{what}: {e}")))?);
        let field = Field::new("", array.data_type().clone(), true);
        (Arrays::One(Some(array)), Arc::new(field))
    };
    let column = text_column(&field, column, what)?;
    let kind = match column {
        Some(i) => match field.data_type() {
            DataType::Struct(fields) => fields[i].data_type().clone(),
            _ => unreachable!("a column is chosen in tables only"),
        },
        None => field.data_type().clone(),
    };
    if !is_text(&kind) {
        let named = column.map_or(String::new(), |_| {
            format!(" column {:?}", chosen_name(&field, column))
        });
        return Err(PyTypeError::new_err(format!(
            "{what}{named} holds {kind}, not strings (string, large_string, string_view or \
             a dictionary of them)"
        )));
    }
    Ok(TextStream {
        arrays,
        column,
        what: what.to_string(),
        rows: 0,
    })
}

fn chosen_name(field: &Field, column: Option<usize>) -> String {
    match (field.data_type(), column) {
        (DataType::Struct(fields), Some(i)) => fields[i].name().clone(),
        _ => field.name().clone(),
    }
}

/// The index of the text column in a stream of tables (`None` for a stream of texts).
fn text_column(field: &Field, column: Option<&str>, what: &str) -> PyResult<Option<usize>> {
    let DataType::Struct(fields) = field.data_type() else {
        return match column {
            Some(name) if name != field.name() => Err(refused(format!(
                "{what} is one column of texts, not a table: text_col={name:?} names no column"
            ))),
            _ => Ok(None),
        };
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    let found = match column {
        Some(name) => names.iter().position(|n| *n == name),
        None if names.len() == 1 => Some(0),
        None => names.iter().position(|n| *n == "text"),
    };
    found.map(Some).ok_or_else(|| {
        let asked = column.map_or("no text_col, and no column \"text\"".to_string(), |n| {
            format!("no column {n:?}")
        });
        let near = column
            .and_then(|n| names.iter().find(|c| c.eq_ignore_ascii_case(n)))
            .map_or(String::new(), |c| format!(" (did you mean {c:?}?)"));
        refused(format!(
            "{what} has {asked}{near}: its columns are {names:?}; name the texts with text_col="
        ))
    })
}

/// Whether the texts of a column of this type can be read.
fn is_text(kind: &DataType) -> bool {
    match kind {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => {
            matches!(
                **values,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            )
        }
        _ => false,
    }
}

/// One chunk of texts: an array of strings, checked (offsets, UTF-8, dictionary keys).
pub struct TextChunk(ArrayRef);

impl TextStream {
    /// The next chunk of texts, `None` after the last; an error names the rows. Needs no
    /// GIL: a producer that needs one takes it.
    pub fn next_chunk(&mut self) -> Option<Result<TextChunk, String>> {
        let array = match &mut self.arrays {
            Arrays::Stream(reader) => reader.next()?,
            Arrays::One(array) => Ok(array.take()?),
        };
        let first = self.rows;
        let what = &self.what;
        let chunk = array.map_err(|e| format!("{what}: {e}")).and_then(|array| {
            let texts = match self.column {
                Some(i) => Arc::clone(array.as_struct().column(i)),
                None => array,
            };
            texts
                .to_data()
                .validate_full()
                .map_err(|e| format!("{what}, the chunk from row {first}: {e}"))?;
            Ok(TextChunk(texts))
        });
        if let Ok(c) = &chunk {
            self.rows += c.0.len();
        }
        Some(chunk)
    }
}

impl TextChunk {
    /// Each text, `""` for a null.
    pub fn views(&self) -> Vec<&str> {
        views_of(self.0.as_ref())
    }
}

fn views_of(array: &dyn Array) -> Vec<&str> {
    fn or_empty<'a>(texts: impl Iterator<Item = Option<&'a str>>) -> Vec<&'a str> {
        texts.map(|t| t.unwrap_or("")).collect()
    }
    match array.data_type() {
        DataType::Utf8 => or_empty(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => or_empty(array.as_string::<i64>().iter()),
        DataType::Utf8View => or_empty(array.as_string_view().iter()),
        DataType::Dictionary(..) => {
            let dictionary = array.as_any_dictionary();
            let values = views_of(dictionary.values().as_ref());
            if values.is_empty() {
                // Every key is null (validated): no value to point at.
                return vec![""; array.len()];
            }
            let keys = dictionary.normalized_keys();
            (0..array.len())
                .map(|i| {
                    if array.is_null(i) {
                        ""
                    } else {
                        values[keys[i]]
                    }
                })
                .collect()
        }
        _ => unreachable!("the column's type was checked when the stream was opened"),
    }
}
