//! Columns handed to NumPy without a copy: a [`Buffer`] owns a Rust vector and describes
//! it with NumPy's `__array_interface__`, so `numpy.asarray(buffer)` is an array over the
//! vector's memory that keeps the buffer alive. This needs no NumPy C API and no buffer
//! protocol (which the stable ABI lacks before Python 3.11).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// A vector's memory, owned through its raw parts: once handed to NumPy it is written
/// through NumPy's pointer, so Rust keeps no reference into it, only what `drop` needs.
struct RawVec {
    ptr: *mut u8,
    len: usize,
    drop: unsafe fn(*mut u8, usize, usize),
    cap: usize,
}

// SAFETY: the memory is plain numbers owned by this struct alone; Rust never reads it.
unsafe impl Send for RawVec {}
unsafe impl Sync for RawVec {}

impl RawVec {
    fn new<T: Copy>(v: Vec<T>) -> RawVec {
        let mut v = std::mem::ManuallyDrop::new(v);
        unsafe fn drop_as<T>(ptr: *mut u8, len: usize, cap: usize) {
            // SAFETY: the parts of a `Vec<T>` taken apart in `RawVec::new`.
            drop(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) });
        }
        RawVec {
            ptr: v.as_mut_ptr().cast(),
            len: v.len(),
            cap: v.capacity(),
            drop: drop_as::<T>,
        }
    }
}

impl Drop for RawVec {
    fn drop(&mut self) {
        // SAFETY: the parts recorded by `new`, dropped once.
        unsafe { (self.drop)(self.ptr, self.len, self.cap) }
    }
}

/// A typed column (or matrix) for NumPy. Not part of the API: the package turns it into
/// an array at once.
#[pyclass(frozen, name = "_Buffer", module = "neardup._neardup")]
pub struct Buffer {
    raw: RawVec,
    typestr: &'static str,
    shape: Vec<usize>,
}

/// Element types a [`Buffer`] holds, with NumPy's name for each.
pub trait Element: Copy {
    /// NumPy's `typestr`.
    const TYPESTR: &'static str;
}

impl Element for u32 {
    const TYPESTR: &'static str = "<u4";
}
impl Element for u64 {
    const TYPESTR: &'static str = "<u8";
}
impl Element for i64 {
    const TYPESTR: &'static str = "<i8";
}
impl Element for f64 {
    const TYPESTR: &'static str = "<f8";
}
impl Element for u8 {
    const TYPESTR: &'static str = "|u1";
}
impl Element for bool {
    const TYPESTR: &'static str = "|b1";
}

impl Buffer {
    /// A one-dimensional column.
    pub fn column<T: Element>(v: Vec<T>) -> Buffer {
        let shape = vec![v.len()];
        Buffer::shaped(v, shape)
    }

    /// A row-major array of `shape` (its product must be the length).
    pub fn shaped<T: Element>(v: Vec<T>, shape: Vec<usize>) -> Buffer {
        assert_eq!(
            shape.iter().product::<usize>(),
            v.len(),
            "shape of a buffer"
        );
        Buffer {
            raw: RawVec::new(v),
            typestr: T::TYPESTR,
            shape,
        }
    }
}

#[pymethods]
impl Buffer {
    /// NumPy's array interface (version 3): shape, type and the data's address.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", self.typestr)?;
        // An empty vector's pointer is dangling but aligned; NumPy reads nothing from it.
        d.set_item("data", (self.raw.ptr as usize, false))?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }
}
