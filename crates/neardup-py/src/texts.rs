//! Texts from Python, as the `&str`s the library takes, without copying where the memory
//! allows it:
//!
//! - a list or tuple of `str` (or `None`): each string's UTF-8 form, which CPython keeps in
//!   the object itself (ASCII strings are stored that way already);
//! - a pyarrow `string` or `large_string` array, chunked or not, sliced or not: the
//!   array's own offsets and data buffers, read in place (other string types, such as
//!   `string_view` or dictionary-encoded strings, are cast to `large_string` first);
//! - a NumPy array of `str` (dtype `U`): its fixed-width UTF-32 items, decoded to UTF-8
//!   (a copy, made with the GIL released); object and `StringDType` arrays as lists;
//! - any other Arrow producer (the PyCapsule interface: Polars, DuckDB, pyarrow tables and
//!   readers): its arrays imported and read in place (`arrow`), whole here, or a chunk at a
//!   time by the runs ([`source`]);
//! - any other iterable of `str` (a pandas Series, a generator), as a list.
//!
//! `None` (a null in pyarrow) is a missing text: it stays in its place, so results still
//! number documents by position, and takes part in nothing, like an empty text.
//!
//! The objects that own the memory are held until the texts are dropped, so a caller may
//! release the GIL while it works on them. Mutating a NumPy array while a call reads it
//! gives undefined texts, as it would in NumPy itself.

use std::os::raw::c_char;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;

use crate::arrow::{self, TextChunk, TextStream};
use crate::errors::refused;
use crate::threads;

extern "C" {
    // In the stable ABI from 3.10, and exported by every CPython 3 since 3.3: pyo3 hides
    // it when building for 3.9's limited API, but the function is there.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// Texts read from a Python object, with the objects that own their memory.
pub struct Texts {
    /// Each text, borrowed from `owners` or `decoded`; `""` for a missing one.
    views: Vec<&'static str>,
    /// Texts that had to be decoded (NumPy's UTF-32): their heap buffers never move.
    decoded: Vec<String>,
    /// The Python objects whose memory `views` borrow.
    owners: Vec<Py<PyAny>>,
    /// Arrow arrays imported from a producer, whose memory `views` borrow.
    arrays: Vec<TextChunk>,
}

impl Texts {
    /// The texts, in order, `""` for a missing one.
    pub fn as_slice(&self) -> &[&str] {
        &self.views
    }

    /// Number of texts.
    pub fn len(&self) -> usize {
        self.views.len()
    }
}

impl Drop for Texts {
    fn drop(&mut self) {
        // The views go before what they borrow from.
        self.views.clear();
        self.decoded.clear();
        self.owners.clear();
        self.arrays.clear();
    }
}

/// Lends a string for as long as its owner is held by a [`Texts`].
fn extend(s: &str) -> &'static str {
    // SAFETY: every caller stores the result in `Texts::views` beside the owner of `s`
    // (`owners` or `decoded`), which `Texts` keeps alive and unmoved until the views are
    // cleared first in `drop`; `as_slice` lends them only for the life of `&self`.
    unsafe { std::mem::transmute::<&str, &'static str>(s) }
}

/// The UTF-8 bytes of a `str` object, borrowed from the object (the GIL must be held).
pub(crate) fn utf8_of<'a>(item: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `item` is a live `str` (checked by the caller); CPython caches the UTF-8 form
    // in the object, so the bytes live as long as the object does.
    let data = unsafe { PyUnicode_AsUTF8AndSize(item.as_ptr(), &mut size) };
    if data.is_null() {
        return Err(PyErr::fetch(item.py()));
    }
    // SAFETY: CPython returns `size` bytes of valid UTF-8 at `data`.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) };
    Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// The type of a Python object, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// True if `obj` is an instance of `module.attr`, without importing the module: an object
/// cannot be one unless its module is loaded.
fn is_instance_of(obj: &Bound<'_, PyAny>, module: &str, attr: &str) -> PyResult<bool> {
    let py = obj.py();
    let modules = py.import("sys")?.getattr("modules")?;
    match modules.get_item(module) {
        Ok(m) => obj.is_instance(&m.getattr(attr)?),
        Err(_) => Ok(false),
    }
}

/// Reads the texts of `obj` (see the module's documentation). `what` names the argument
/// in messages.
pub fn read(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Texts> {
    let py = obj.py();
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of str, not one str (wrap it in a list)"
        )));
    }
    if obj.is_exact_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return from_list(&list_copy(obj)?, what);
    }
    if is_instance_of(obj, "pyarrow", "Array")? || is_instance_of(obj, "pyarrow", "ChunkedArray")? {
        return from_arrow(obj, what);
    }
    if is_instance_of(obj, "numpy", "ndarray")? {
        return from_numpy(obj, what);
    }
    if arrow::exports(obj)? {
        return from_stream(py, arrow::open(obj, None, what)?);
    }
    if obj.hasattr("__iter__")? {
        let list = py.import("builtins")?.getattr("list")?.call1((obj,))?;
        return from_list(list.cast::<PyList>()?, what);
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be a list of str, a NumPy array of str or a pyarrow string array, not {} \
         (or any object with __arrow_c_stream__: a Polars Series, a DuckDB relation)",
        type_name(obj)
    )))
}

/// A new list with the same items: the caller's list may change while the GIL is
/// released, this one does not.
fn list_copy<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: PySequence_List returns a new reference or NULL with an exception set.
    unsafe {
        let list = ffi::PySequence_List(obj.as_ptr());
        if list.is_null() {
            return Err(PyErr::fetch(obj.py()));
        }
        Ok(Bound::from_owned_ptr(obj.py(), list).cast_into::<PyList>()?)
    }
}

fn from_list(list: &Bound<'_, PyList>, what: &str) -> PyResult<Texts> {
    let mut views = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        if item.is_instance_of::<PyString>() {
            let s = utf8_of(&item).map_err(|e| {
                refused(format!(
                    "{what}[{i}] is not valid Unicode: {}",
                    e.value(list.py())
                ))
            })?;
            // The list copy, which holds the item, is kept in `owners`.
            views.push(extend(s));
        } else if item.is_none() {
            views.push("");
        } else {
            return Err(PyTypeError::new_err(format!(
                "{what}[{i}] is {}, not str (None counts as a missing text)",
                type_name(&item)
            )));
        }
    }
    Ok(Texts {
        views,
        decoded: Vec::new(),
        owners: vec![list.clone().into_any().unbind()],
        arrays: Vec::new(),
    })
}

/// One pyarrow array's buffers, by address.
struct ArrowChunk {
    len: usize,
    offset: usize,
    validity: Option<usize>,
    offsets: usize,
    offsets_bytes: usize,
    large: bool,
    data: usize,
    data_bytes: usize,
}

fn from_arrow(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Texts> {
    let py = obj.py();
    let arrays: Vec<Bound<'_, PyAny>> = if obj.hasattr("chunks")? {
        obj.getattr("chunks")?
            .try_iter()?
            .collect::<PyResult<_>>()?
    } else {
        vec![obj.clone()]
    };
    let mut owners = Vec::with_capacity(arrays.len());
    let mut chunks = Vec::with_capacity(arrays.len());
    for array in arrays {
        let mut array = array;
        let mut kind = array.getattr("type")?.str()?.to_string();
        let castable = kind == "string_view"
            || kind.starts_with("dictionary<values=string,")
            || kind.starts_with("dictionary<values=large_string,");
        if castable {
            // Other layouts of strings: into the one read here.
            array = array.call_method1("cast", ("large_string",))?;
            kind = "large_string".into();
        } else if kind != "string" && kind != "large_string" {
            return Err(PyTypeError::new_err(format!(
                "{what} is a pyarrow array of {kind}, not of strings"
            )));
        }
        let buffers = array.call_method0("buffers")?;
        let address = |i: usize| -> PyResult<Option<(usize, usize)>> {
            let b = buffers.get_item(i)?;
            if b.is_none() {
                return Ok(None);
            }
            Ok(Some((
                b.getattr("address")?.extract()?,
                b.getattr("size")?.extract()?,
            )))
        };
        let len: usize = array.len()?;
        let offset: usize = array.getattr("offset")?.extract()?;
        let (offsets, offsets_bytes) = address(1)?.unwrap_or((0, 0));
        let (data, data_bytes) = address(2)?.unwrap_or((0, 0));
        let validity = if array.getattr("null_count")?.extract::<usize>()? > 0 {
            address(0)?.map(|(a, _)| a)
        } else {
            None
        };
        let large = kind == "large_string";
        let width = if large { 8 } else { 4 };
        if len > 0 && offsets_bytes < (offset + len + 1) * width {
            return Err(refused(format!(
                "{what}: the pyarrow array's offsets buffer is too short"
            )));
        }
        chunks.push(ArrowChunk {
            len,
            offset,
            validity,
            offsets,
            offsets_bytes,
            large,
            data,
            data_bytes,
        });
        owners.push(array.unbind());
    }
    let views = threads::detached(py, || -> Result<Vec<&'static str>, String> {
        let mut views = Vec::new();
        let mut before = 0;
        for c in &chunks {
            views.extend(
                arrow_views(c).map_err(|(i, why)| format!("{what}[{}] {why}", before + i))?,
            );
            before += c.len;
        }
        Ok(views)
    });
    Ok(Texts {
        views: views?.map_err(refused)?,
        decoded: Vec::new(),
        owners,
        arrays: Vec::new(),
    })
}

/// The texts of one pyarrow array, checked: offsets within the data, valid UTF-8.
fn arrow_views(c: &ArrowChunk) -> Result<Vec<&'static str>, (usize, &'static str)> {
    if c.len == 0 {
        return Ok(Vec::new());
    }
    let n = c.offset + c.len + 1;
    debug_assert!(c.offsets_bytes >= n * if c.large { 8 } else { 4 });
    // SAFETY: the offsets buffer holds at least `n` values (checked by the caller), the
    // validity bitmap a bit per value, and the data buffer `data_bytes` bytes; all are
    // owned by the array, which the `Texts` holds.
    let bound = |i: usize| -> i64 {
        unsafe {
            if c.large {
                std::ptr::read_unaligned((c.offsets as *const i64).add(i))
            } else {
                i64::from(std::ptr::read_unaligned((c.offsets as *const i32).add(i)))
            }
        }
    };
    let valid = |i: usize| -> bool {
        c.validity.is_none_or(|v| unsafe {
            let byte = *(v as *const u8).add(i / 8);
            byte & (1 << (i % 8)) != 0
        })
    };
    (0..c.len)
        .into_par_iter()
        .map(|i| {
            let j = c.offset + i;
            if !valid(j) {
                return Ok("");
            }
            let (start, end) = (bound(j), bound(j + 1));
            if start < 0 || end < start || end as usize > c.data_bytes {
                return Err((i, "has offsets outside the array's data"));
            }
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    (c.data as *const u8).add(start as usize),
                    (end - start) as usize,
                )
            };
            std::str::from_utf8(bytes)
                .map(extend)
                .map_err(|_| (i, "is not valid UTF-8"))
        })
        .collect()
}

fn from_numpy(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Texts> {
    let py = obj.py();
    let ndim: usize = obj.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(refused(format!(
            "{what} must be one-dimensional, got a NumPy array of {ndim} dimensions"
        )));
    }
    let dtype = obj.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    match kind.as_str() {
        // Fixed-width UTF-32, little-endian and contiguous after this.
        "U" => {
            let contiguous = obj.getattr("flags")?.getattr("c_contiguous")?.is_truthy()?;
            let big = dtype.getattr("byteorder")?.extract::<String>()? == ">";
            let array = if contiguous && !big {
                obj.clone()
            } else {
                let little = dtype.call_method1("newbyteorder", ("<",))?;
                let kwargs = PyDict::new(py);
                kwargs.set_item("order", "C")?;
                obj.call_method("astype", (little,), Some(&kwargs))?
            };
            let itemsize: usize = array.getattr("dtype")?.getattr("itemsize")?.extract()?;
            let len: usize = array.len()?;
            let interface = array.getattr("__array_interface__")?;
            let (address, _readonly): (usize, bool) = interface.get_item("data")?.extract()?;
            let decoded = threads::detached(py, || decode_utf32(address, itemsize, len))?;
            let decoded = decoded.map_err(|i| {
                refused(format!(
                    "{what}[{i}] holds a code point that is not a character"
                ))
            })?;
            let mut t = Texts {
                views: Vec::new(),
                decoded,
                owners: vec![array.unbind()],
                arrays: Vec::new(),
            };
            t.views = t.decoded.iter().map(|s| extend(s.as_str())).collect();
            Ok(t)
        }
        // Python objects, or NumPy 2's variable-width strings: as str objects.
        "O" | "T" => {
            let list = obj.call_method0("tolist")?;
            from_list(list.cast::<PyList>()?, what)
        }
        "S" => Err(PyTypeError::new_err(format!(
            "{what} is a NumPy array of bytes: decode it to str first (np.char.decode)"
        ))),
        _ => Err(PyTypeError::new_err(format!(
            "{what} is a NumPy array of {}, not of str",
            dtype.str()?
        ))),
    }
}

/// Decodes `len` items of `itemsize` bytes of little-endian UTF-32 at `address`, each
/// padded with zeros (NumPy's `U` dtype). An invalid code point is `Err(item)`.
fn decode_utf32(address: usize, itemsize: usize, len: usize) -> Result<Vec<String>, usize> {
    if len == 0 || itemsize == 0 {
        return Ok(vec![String::new(); len]);
    }
    // SAFETY: a contiguous NumPy array of `len` items of `itemsize` bytes, held by the
    // caller for the duration of the call.
    let all = unsafe { std::slice::from_raw_parts(address as *const u8, itemsize * len) };
    all.par_chunks(itemsize)
        .enumerate()
        .map(|(i, item)| {
            let units = item
                .chunks_exact(4)
                .map(|u| u32::from_le_bytes(u.try_into().expect("4 bytes")));
            // Only trailing zeros are padding: a NUL inside the text is text.
            let len = units.clone().rposition(|c| c != 0).map_or(0, |p| p + 1);
            units
                .take(len)
                .map(|c| char::from_u32(c).ok_or(i))
                .collect::<Result<String, usize>>()
        })
        .collect()
}

/// Every text of an Arrow producer, its arrays held (read with the GIL released).
fn from_stream(py: Python<'_>, mut stream: TextStream) -> PyResult<Texts> {
    let read = threads::detached(py, || -> Result<Vec<TextChunk>, String> {
        std::iter::from_fn(|| stream.next_chunk()).collect()
    })?;
    let arrays = read.map_err(refused)?;
    let views = arrays
        .iter()
        .flat_map(|c| c.views().into_iter().map(extend))
        .collect();
    Ok(Texts {
        views,
        decoded: Vec::new(),
        owners: Vec::new(),
        arrays,
    })
}

/// Whether a run reads `obj` as an Arrow stream (see [`source`]): an Arrow producer that is
/// not a pyarrow array, a list or a NumPy array.
pub fn is_stream(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let held = obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || is_instance_of(obj, "pyarrow", "Array")?
        || is_instance_of(obj, "pyarrow", "ChunkedArray")?
        || is_instance_of(obj, "numpy", "ndarray")?;
    Ok(!held && arrow::exports(obj)?)
}

/// Where a run's texts come from: held whole, or an Arrow stream read a chunk at a time.
pub enum Source {
    /// Texts read before the run.
    Held(Texts),
    /// An Arrow producer's text column, read as the run takes it in.
    Stream(TextStream),
}

/// The texts of a run (see [`read`]): an Arrow producer other than a pyarrow array as a
/// stream (its `column` if it is a table), anything else held.
pub fn source(obj: &Bound<'_, PyAny>, column: Option<&str>, what: &str) -> PyResult<Source> {
    if is_stream(obj)? {
        return Ok(Source::Stream(arrow::open(obj, column, what)?));
    }
    if let Some(name) = column {
        return Err(refused(format!(
            "text_col={name:?} names a column of a table or data frame; {what} is {}, \
             its texts already",
            type_name(obj)
        )));
    }
    Ok(Source::Held(read(obj, what)?))
}
