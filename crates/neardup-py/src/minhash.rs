//! `MinHash`, datasketch 2's: the same constructor (`num_perm`, `seed`, `gpu_mode`,
//! `hashfunc`, `hashobj`, `hashvalues`, `permutations`, `scheme`), the same hashvalues for
//! the same tokens (`scheme`), `jaccard` as datasketch estimates it. Besides the sketch it
//! keeps the set of its elements (8 bytes per distinct element, the xxh3-64 of its bytes)
//! while it can (default hash function, not rebuilt from hashvalues), so `exact_jaccard`
//! is exact and `MinHashLSH` can verify its answers.
//!
//! neardup's own sketches, `sketch="oph"` (one-permutation hashing from 64 elements, classic
//! below, the library's rule) or `"classic"`, keep only the set and sketch it when asked;
//! `MinHash.from_text` takes a text's shingle set exactly as the library makes it, so a
//! `MinHashLSH` of such MinHashes answers as the library's runs do.

use std::sync::{Arc, Mutex, MutexGuard};

use neardup::sketch::{ClassicMinHash, DocSet, OnePermutation, Sketch};
use neardup::{Config, Pipeline, SketchKind};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::blocks::u64_vector;
use crate::errors::{core, refused};
use crate::scheme::{drawn, Perms, Scheme};
use crate::texts;
use crate::threads;

/// Below this many elements a set gets the classic sketch (the library's rule).
const SMALL_SET: usize = 64;

/// The newest pickle format (`MinHash._from_state`); 0.1.0 pickled by `_restore`.
const PICKLE_VERSION: u32 = 2;

/// How the sketch is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// datasketch's: hashvalues kept up to date, element by element.
    Scheme(Scheme),
    /// neardup's: the set is kept and sketched when the hashvalues are asked for.
    Own(SketchKind),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Scheme(s) => s.name(),
            Kind::Own(k) => k.name(),
        }
    }

    fn parse(name: &str) -> PyResult<Kind> {
        match name {
            "oph" | "classic" => Ok(Kind::Own(name.parse().map_err(core)?)),
            other => Scheme::parse(other).map(Kind::Scheme),
        }
    }

    fn max(self) -> u64 {
        match self {
            Kind::Scheme(s) => s.max(),
            Kind::Own(_) => u64::MAX,
        }
    }
}

/// A set of hashed elements and its MinHash sketch.
#[pyclass(frozen, subclass, module = "neardup", name = "MinHash")]
pub struct MinHash {
    shape: Shape,
    inner: Mutex<Inner>,
}

/// Fields read as `self.seed`: the shape is fixed, only the state changes.
impl std::ops::Deref for MinHash {
    type Target = Shape;

    fn deref(&self) -> &Shape {
        &self.shape
    }
}

#[derive(Clone, Default)]
struct Inner {
    /// The elements' hashes; sorted and deduplicated unless `pending`.
    set: Vec<u64>,
    pending: bool,
    /// Whether `set` is the whole set (false once rebuilt from hashvalues, fed by the
    /// caller's hash function, or merged with a sketch without its set).
    has_set: bool,
    /// The whole text's sketch when the set is a truncated text's first shingles.
    whole: Option<Vec<u64>>,
    /// The schemes' hashvalues (empty for neardup's own sketches).
    values: Vec<u64>,
}

impl Inner {
    fn settle(&mut self) -> &[u64] {
        if self.pending {
            self.set.sort_unstable();
            self.set.dedup();
            self.pending = false;
        }
        &self.set
    }

    fn add(&mut self, hashes: impl IntoIterator<Item = u64>) {
        if self.has_set {
            self.set.extend(hashes);
            self.pending = true;
        }
        // The set is the caller's now, not a text's first shingles.
        self.whole = None;
    }

    fn forget_set(&mut self) {
        self.has_set = false;
        self.set = Vec::new();
        self.pending = false;
        self.whole = None;
    }
}

/// An element's bytes: bytes, a bytearray, a str (as UTF-8, where datasketch's SHA-1
/// refuses it) or any other buffer.
fn element_bytes<'a>(item: &'a Bound<'_, PyAny>, keep: &'a mut Vec<u8>) -> PyResult<&'a [u8]> {
    if let Ok(b) = item.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = item.cast::<PyString>() {
        *keep = texts::utf8_of(s.as_any())?.as_bytes().to_vec();
    } else if let Ok(b) = item.cast::<PyByteArray>() {
        *keep = b.to_vec();
    } else if let Ok(view) = item
        .py()
        .import("builtins")?
        .getattr("memoryview")?
        .call1((item,))
    {
        *keep = view.call_method0("tobytes")?.extract()?;
    } else {
        return Err(PyTypeError::new_err(format!(
            "MinHash elements are bytes or str, not {} (pass hashfunc= for other tokens)",
            item.get_type().name()?
        )));
    }
    Ok(keep)
}

fn num_perm_of(num_perm: i64) -> PyResult<usize> {
    match usize::try_from(num_perm) {
        Ok(k) if (1..=neardup::sketch::MAX_NUM_PERM).contains(&k) => Ok(k),
        _ => Err(core(neardup::Error::InvalidNumPerm(
            num_perm.max(0) as usize
        ))),
    }
}

fn to_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_bytes(bytes: &[u8]) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(refused(
            "a pickled MinHash's values are not whole 64-bit values",
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// Integers (a list, an array of any integer type) as u64, each at most `max`.
fn ints_of(values: &Bound<'_, PyAny>, max: u64, what: &str) -> PyResult<Vec<u64>> {
    // A list of Python ints as it is: NumPy would read one that mixes values past 2^63
    // with smaller ones as float64, rounding them.
    let listed = if values.hasattr("dtype")? {
        values
            .py()
            .import("numpy")?
            .call_method1("asarray", (values,))?
            .call_method0("ravel")?
            .call_method0("tolist")?
    } else {
        values.clone()
    };
    let out: Vec<u64> = listed
        .extract()
        .map_err(|_| refused(format!("{what} must be integers in 0..={max}")))?;
    if out.iter().any(|&v| v > max) {
        return Err(refused(format!("{what} out of range: each at most {max}")));
    }
    Ok(out)
}

/// Everything but the state: what a copy or a `bulk` sketch shares with its template.
pub struct Shape {
    num_perm: usize,
    seed: u64,
    kind: Kind,
    /// The caller's hash function; `None` for the default (SHA-1 for the schemes).
    hashfunc: Option<Py<PyAny>>,
    gpu_mode: String,
    /// The schemes' permutation parameters (shared by copies).
    perms: Option<Arc<Perms>>,
}

impl MinHash {
    fn with(shape: Shape, inner: Inner) -> MinHash {
        MinHash {
            shape,
            inner: Mutex::new(inner),
        }
    }

    fn shape(&self, py: Python<'_>) -> Shape {
        Shape {
            num_perm: self.num_perm,
            seed: self.seed,
            kind: self.kind,
            hashfunc: self.hashfunc.as_ref().map(|f| f.clone_ref(py)),
            gpu_mode: self.gpu_mode.clone(),
            perms: self.perms.clone(),
        }
    }

    /// neardup's own sketch of a set (the set only, nothing drawn).
    fn own(num_perm: usize, seed: u64, sketch: SketchKind, inner: Inner) -> MinHash {
        let shape = Shape {
            num_perm,
            seed,
            kind: Kind::Own(sketch),
            hashfunc: None,
            gpu_mode: "disable".into(),
            perms: None,
        };
        MinHash::with(
            shape,
            Inner {
                has_set: true,
                ..inner
            },
        )
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The set and the whole-text sketch, settled, as the library's document (an empty
    /// set for a MinHash without its set).
    pub fn doc(&self) -> DocSet {
        let mut inner = self.lock();
        let set = inner.settle().to_vec();
        DocSet::from_parts(set, inner.whole.clone())
    }

    /// Whether the MinHash carries its set (a sketch rebuilt from hashvalues, or built
    /// with a hashfunc of the caller's, does not).
    pub fn has_set(&self) -> bool {
        self.lock().has_set
    }

    /// The hashvalues, `num_perm` of them.
    pub fn values(&self) -> Vec<u64> {
        match self.kind {
            Kind::Scheme(_) => self.lock().values.clone(),
            Kind::Own(_) => {
                let set = self.lock().settle().to_vec();
                self.signature(&set, self.uses_oph(&[set.len()]))
            }
        }
    }

    /// Whether sets of these sizes are sketched with one-permutation hashing.
    fn uses_oph(&self, sizes: &[usize]) -> bool {
        self.kind == Kind::Own(SketchKind::OnePermutation) && sizes.iter().all(|&n| n >= SMALL_SET)
    }

    fn signature(&self, set: &[u64], oph: bool) -> Vec<u64> {
        let sketch: Box<dyn Sketch> = if oph {
            Box::new(OnePermutation::new(self.num_perm, self.seed).expect("checked num_perm"))
        } else {
            Box::new(ClassicMinHash::new(self.num_perm, self.seed).expect("checked num_perm"))
        };
        sketch.sketch(set)
    }

    /// datasketch's checks before comparing or merging, with its messages.
    fn same_kind(&self, other: &MinHash, doing: &str) -> PyResult<()> {
        if self.kind != other.kind {
            return Err(PyValueError::new_err(format!(
                "{doing} MinHash with different permutation schemes ({} and {})",
                self.kind.name(),
                other.kind.name()
            )));
        }
        if self.seed != other.seed {
            return Err(PyValueError::new_err(format!(
                "{doing} MinHash with different seeds"
            )));
        }
        if self.num_perm != other.num_perm {
            return Err(PyValueError::new_err(format!(
                "{doing} MinHash with different numbers of permutation functions"
            )));
        }
        Ok(())
    }

    /// Both settled sets (one lock at a time: `self` may be `other`).
    fn both(&self, other: &MinHash) -> (Vec<u64>, Vec<u64>) {
        let a = self.lock().settle().to_vec();
        let b = other.lock().settle().to_vec();
        (a, b)
    }

    /// The hashes of tokens: by the caller's hash function, else SHA-1 for the schemes
    /// and xxh3-64 for neardup's own sketches; and, for the set, their xxh3-64.
    fn hash_tokens<'py>(
        &self,
        items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    ) -> PyResult<(Vec<u64>, Vec<u64>)> {
        let (mut hashes, mut set) = (Vec::new(), Vec::new());
        let mut keep = Vec::new();
        for item in items {
            let item = item?;
            match (&self.hashfunc, self.kind) {
                (Some(f), Kind::Scheme(s)) => {
                    let hv = f.bind(item.py()).call1((item,))?;
                    let hv: u64 = hv.extract().map_err(|_| {
                        refused(format!(
                            "hashfunc returned a value out of range for scheme {:?}: {hv}",
                            s.name()
                        ))
                    })?;
                    hashes.push(s.check_input(hv)?);
                }
                (_, Kind::Scheme(s)) => {
                    let bytes = element_bytes(&item, &mut keep)?;
                    hashes.push(s.token_hash(bytes));
                    set.push(xxh3_64(bytes));
                }
                (_, Kind::Own(_)) => set.push(xxh3_64(element_bytes(&item, &mut keep)?)),
            }
        }
        Ok((hashes, set))
    }

    fn add_tokens<'py>(
        &self,
        items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    ) -> PyResult<()> {
        let (hashes, set) = self.hash_tokens(items)?;
        let mut inner = self.lock();
        if let Some(perms) = &self.perms {
            perms.apply(&hashes, &mut inner.values);
        }
        inner.add(set);
        Ok(())
    }

    fn empty_values(&self) -> Vec<u64> {
        match self.kind {
            Kind::Scheme(s) => vec![s.max(); self.num_perm],
            Kind::Own(_) => Vec::new(),
        }
    }

    /// An array of the scheme's dtype (uint32 for affine32, as datasketch stores them).
    fn array<'py>(&self, py: Python<'py>, values: Vec<u64>) -> PyResult<Bound<'py, PyAny>> {
        let np = py.import("numpy")?;
        if self.kind == Kind::Scheme(Scheme::Affine32) {
            let narrow: Vec<u32> = values.into_iter().map(|v| v as u32).collect();
            return np.call_method1("asarray", (crate::buffer::Buffer::column(narrow),));
        }
        np.call_method1("asarray", (crate::buffer::Buffer::column(values),))
    }

    /// The other sketch's kind, seed and hashvalues: a neardup MinHash, or any object
    /// with datasketch's `scheme`, `seed` and `hashvalues` (a datasketch MinHash).
    fn foreign(other: &Bound<'_, PyAny>) -> PyResult<(String, u64, Vec<u64>)> {
        if let Ok(m) = other.cast::<MinHash>() {
            let m = m.get();
            return Ok((m.kind.name().to_string(), m.seed, m.values()));
        }
        let scheme: String = other
            .getattr("scheme")
            .and_then(|s| s.extract())
            .unwrap_or_else(|_| "none".into());
        let seed: u64 = other.getattr("seed")?.extract()?;
        let values = ints_of(&other.getattr("hashvalues")?, u64::MAX, "hash values")?;
        Ok((scheme, seed, values))
    }
}

/// A pipeline for the shingling options of `from_text`.
fn shingling_pipeline(
    shingle: &str,
    normalize: &str,
    max_shingles: i64,
    num_perm: usize,
    seed: u64,
    sketch: SketchKind,
) -> PyResult<Pipeline> {
    let max_shingles =
        usize::try_from(max_shingles).map_err(|_| core(neardup::Error::InvalidMaxShingles(0)))?;
    let config = Config::builder()
        .shingle(shingle.parse().map_err(core)?)
        .normalization(normalize.parse().map_err(core)?)
        .max_shingles(max_shingles)
        .num_perm(num_perm)
        .seed(seed)
        .sketch(sketch)
        .build()
        .map_err(core)?;
    Pipeline::new(config).map_err(core)
}

/// `sketch` as one of neardup's own (`"oph"` or `"classic"`).
fn own_sketch(sketch: &str) -> PyResult<SketchKind> {
    match Kind::parse(sketch)? {
        Kind::Own(k) => Ok(k),
        Kind::Scheme(_) => Err(refused(format!(
            "sketch must be 'oph' or 'classic', got {sketch:?} (datasketch's schemes are scheme=)"
        ))),
    }
}

/// The arguments of `MinHash(...)` past `num_perm` and `seed`.
struct Args<'py> {
    gpu_mode: String,
    hashfunc: Option<Bound<'py, PyAny>>,
    hashvalues: Option<Bound<'py, PyAny>>,
    permutations: Option<Bound<'py, PyAny>>,
    scheme: Option<String>,
    sketch: Option<String>,
}

fn build(py: Python<'_>, num_perm: i64, seed: u64, args: Args<'_>) -> PyResult<MinHash> {
    if !["disable", "detect", "always"].contains(&args.gpu_mode.as_str()) {
        return Err(refused(format!(
            "gpu_mode must be 'disable', 'detect' or 'always', got {:?}",
            args.gpu_mode
        )));
    }
    if let Some(sketch) = &args.sketch {
        let kind = own_sketch(sketch)?;
        if args.scheme.is_some()
            || args.hashfunc.is_some()
            || args.hashvalues.is_some()
            || args.permutations.is_some()
        {
            return Err(refused(
                "sketch= (neardup's own sketch of the set) takes no scheme, hashfunc, \
                 hashvalues or permutations",
            ));
        }
        return Ok(MinHash::own(
            num_perm_of(num_perm)?,
            seed,
            kind,
            Inner::default(),
        ));
    }
    let scheme = match &args.scheme {
        Some(name) => Scheme::parse(name)?,
        None if args.hashvalues.is_some() || args.permutations.is_some() => {
            return Err(refused(
                "scheme must be specified explicitly when initializing from existing hash \
                 values or permutations: pass the scheme of the MinHash they came from, or \
                 scheme='legacy' for values created by datasketch before 2.0.0.",
            ))
        }
        None => Scheme::Affine32,
    };
    let values = match &args.hashvalues {
        // Legacy values are 32-bit but datasketch takes any uint64 there.
        Some(v) if scheme == Scheme::Legacy => Some(ints_of(v, u64::MAX, "hash values")?),
        Some(v) => Some(ints_of(v, scheme.max(), "hash values")?),
        None => None,
    };
    let num_perm = num_perm_of(values.as_ref().map_or(num_perm, |v| v.len() as i64))?;
    let perms = match &args.permutations {
        Some(p) => {
            let rows: Vec<Bound<'_, PyAny>> = p.try_iter()?.collect::<PyResult<_>>()?;
            let [a, b] = rows.as_slice() else {
                return Err(refused("permutations are two rows, a and b"));
            };
            let max = if scheme == Scheme::Legacy {
                u64::MAX
            } else {
                scheme.max()
            };
            Arc::new(Perms::given(
                scheme,
                num_perm,
                ints_of(a, max, "permutation parameters")?,
                ints_of(b, max, "permutation parameters")?,
            )?)
        }
        None => drawn(py, scheme, seed, num_perm)?,
    };
    // A hashfunc given as neardup's own SHA-1 function is the default, fast path.
    let hashfunc = match args.hashfunc {
        Some(f) if is_default_hashfunc(py, &f, scheme)? => None,
        Some(f) if !f.is_callable() => {
            return Err(refused("The hashfunc must be a callable."));
        }
        other => other.map(Bound::unbind),
    };
    let has_set = hashfunc.is_none() && values.is_none();
    let inner = Inner {
        has_set,
        values: values.unwrap_or_else(|| vec![scheme.max(); num_perm]),
        ..Inner::default()
    };
    let shape = Shape {
        num_perm,
        seed,
        kind: Kind::Scheme(scheme),
        hashfunc,
        gpu_mode: args.gpu_mode,
        perms: Some(perms),
    };
    Ok(MinHash::with(shape, inner))
}

fn is_default_hashfunc(py: Python<'_>, f: &Bound<'_, PyAny>, scheme: Scheme) -> PyResult<bool> {
    let name = if scheme == Scheme::Affine64 {
        "sha1_hash64"
    } else {
        "sha1_hash32"
    };
    Ok(f.is(&py.import("neardup._neardup")?.getattr(name)?))
}

/// datasketch's `sha1_hash32`: SHA-1's first 4 bytes, little-endian.
#[pyfunction]
pub fn sha1_hash32(data: &Bound<'_, PyAny>) -> PyResult<u64> {
    let mut keep = Vec::new();
    Ok(Scheme::Affine32.token_hash(element_bytes(data, &mut keep)?))
}

/// datasketch's `sha1_hash64`: SHA-1's first 8 bytes, little-endian.
#[pyfunction]
pub fn sha1_hash64(data: &Bound<'_, PyAny>) -> PyResult<u64> {
    let mut keep = Vec::new();
    Ok(Scheme::Affine64.token_hash(element_bytes(data, &mut keep)?))
}

#[pymethods]
impl MinHash {
    /// An empty MinHash of `num_perm` permutations drawn from `seed`, as datasketch 2's:
    /// `scheme` is `"affine32"` (the default), `"affine64"` or `"legacy"` (datasketch
    /// before 2.0); `hashfunc` hashes each token (default: SHA-1, as datasketch's);
    /// `hashvalues` and `permutations` rebuild a sketch (with its `scheme`); `gpu_mode` is
    /// accepted, but neardup runs on the CPU only (`"always"` fails in `update_batch`, as
    /// datasketch does without a GPU); `hashobj` is ignored (deprecated by datasketch).
    /// `sketch="oph"` or `"classic"` makes neardup's own sketch of the set instead.
    #[new]
    #[pyo3(signature = (num_perm=128, seed=1, gpu_mode="disable".to_string(), hashfunc=None,
                        hashobj=None, hashvalues=None, permutations=None, scheme=None, *,
                        sketch=None),
           text_signature = "(num_perm=128, seed=1, gpu_mode='disable', hashfunc=None, hashobj=None, hashvalues=None, permutations=None, scheme=None, *, sketch=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_perm: i64,
        seed: u64,
        gpu_mode: String,
        hashfunc: Option<Bound<'_, PyAny>>,
        hashobj: Option<Bound<'_, PyAny>>,
        hashvalues: Option<Bound<'_, PyAny>>,
        permutations: Option<Bound<'_, PyAny>>,
        scheme: Option<String>,
        sketch: Option<String>,
    ) -> PyResult<MinHash> {
        if hashobj.is_some() {
            let warnings = py.import("warnings")?;
            let category = py.get_type::<pyo3::exceptions::PyDeprecationWarning>();
            warnings.call_method1(
                "warn",
                ("hashobj is deprecated, use hashfunc instead.", category, 2),
            )?;
        }
        let args = Args {
            gpu_mode,
            hashfunc,
            hashvalues,
            permutations,
            scheme,
            sketch,
        };
        build(py, num_perm, seed, args)
    }

    /// The MinHash of a text's shingle set, made as the library makes it.
    #[staticmethod]
    #[pyo3(signature = (text, *, shingle="char:5".to_string(), normalize="nfkc".to_string(),
                        max_shingles=neardup::text::DEFAULT_MAX_SHINGLES as i64, num_perm=128, seed=1,
                        sketch="oph".to_string()),
           text_signature = "(text, *, shingle='char:5', normalize='nfkc', max_shingles=16777216, num_perm=128, seed=1, sketch='oph')")]
    #[allow(clippy::too_many_arguments)]
    fn from_text(
        py: Python<'_>,
        text: String,
        shingle: String,
        normalize: String,
        max_shingles: i64,
        num_perm: i64,
        seed: u64,
        sketch: String,
    ) -> PyResult<MinHash> {
        let mut all = MinHash::from_texts(
            py,
            PyList::new(py, [text])?.as_any(),
            shingle,
            normalize,
            max_shingles,
            num_perm,
            seed,
            sketch,
        )?;
        Ok(all.pop().expect("one text"))
    }

    /// The MinHashes of many texts, shingled in parallel with the GIL released.
    #[staticmethod]
    #[pyo3(signature = (texts, *, shingle="char:5".to_string(), normalize="nfkc".to_string(),
                        max_shingles=neardup::text::DEFAULT_MAX_SHINGLES as i64, num_perm=128, seed=1,
                        sketch="oph".to_string()),
           text_signature = "(texts, *, shingle='char:5', normalize='nfkc', max_shingles=16777216, num_perm=128, seed=1, sketch='oph')")]
    #[allow(clippy::too_many_arguments)]
    fn from_texts(
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        shingle: String,
        normalize: String,
        max_shingles: i64,
        num_perm: i64,
        seed: u64,
        sketch: String,
    ) -> PyResult<Vec<MinHash>> {
        let num_perm = num_perm_of(num_perm)?;
        let kind = own_sketch(&sketch)?;
        let pipeline =
            shingling_pipeline(&shingle, &normalize, max_shingles, num_perm, seed, kind)?;
        let texts = texts::read(texts, "texts")?;
        let texts = texts.as_slice();
        let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
        // A chunk at a time, so Ctrl-C stops it between two.
        let docs: Vec<DocSet> = threads::interruptible(py, None, watch, |stop| {
            let mut docs = Vec::with_capacity(texts.len());
            for chunk in threads::text_chunks(texts) {
                stop.checkpoint();
                docs.par_extend(chunk.par_iter().map(|t| pipeline.shingle_doc(t)));
            }
            docs
        })?;
        Ok(docs
            .into_iter()
            .map(|d| {
                let inner = Inner {
                    set: d.set().to_vec(),
                    whole: d.whole_signature().map(<[u64]>::to_vec),
                    ..Inner::default()
                };
                MinHash::own(num_perm, seed, kind, inner)
            })
            .collect())
    }

    /// MinHashes of many sets at once (datasketch's `MinHash.bulk`): each item of `b` is
    /// an iterable of tokens; `kwargs` are `MinHash`'s.
    #[classmethod]
    #[pyo3(signature = (b, **kwargs))]
    fn bulk(
        cls: &Bound<'_, pyo3::types::PyType>,
        b: &Bound<'_, PyAny>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<MinHash>> {
        let template = cls.call((), kwargs)?;
        let template = template.cast::<MinHash>()?.get();
        b.try_iter()?
            .map(|tokens| {
                let m = template.copy(b.py());
                m.add_tokens(tokens?.try_iter()?)?;
                Ok(m)
            })
            .collect()
    }

    /// MinHashes of many sets, one at a time (datasketch's `MinHash.generator`).
    #[classmethod]
    #[pyo3(signature = (b, **kwargs))]
    fn generator(
        cls: &Bound<'_, pyo3::types::PyType>,
        b: &Bound<'_, PyAny>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<MinHashes> {
        let template = cls.call((), kwargs)?.cast_into::<MinHash>()?.unbind();
        Ok(MinHashes {
            template,
            sets: b.try_iter()?.into_any().unbind(),
        })
    }

    /// Adds one token: bytes (a str as its UTF-8), or whatever `hashfunc` takes.
    fn update(&self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_tokens(std::iter::once(Ok(b.clone())))
    }

    /// Adds every token of an iterable. `gpu_mode="always"` fails here, as datasketch's
    /// does on a machine without a GPU: neardup runs on the CPU.
    fn update_batch(&self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.gpu_mode == "always" {
            return Err(PyRuntimeError::new_err(
                "GPU mode 'always' requested, but neardup's MinHash runs on the CPU only",
            ));
        }
        self.add_tokens(b.try_iter()?)
    }

    /// Adds 64-bit hashes as they are to neardup's own sketch (`sketch="oph"` or
    /// `"classic"`): a uint64 array or a sequence of ints, such as a set from
    /// `neardup.shingle_sets`.
    fn update_hashes(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Kind::Scheme(_) = self.kind {
            return Err(refused(
                "update_hashes adds to neardup's own sketch (MinHash(sketch='oph') or \
                 'classic'); datasketch's schemes take tokens (update)",
            ));
        }
        let array = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (values, "uint64"))?;
        let hashes = u64_vector(&array)?;
        self.lock().add(hashes);
        Ok(())
    }

    /// datasketch's estimate of the Jaccard similarity: the share of positions whose
    /// hashvalues agree (two empty sketches: 1.0). The other is a MinHash of the same
    /// scheme, seed and `num_perm` (or a datasketch MinHash of them).
    fn jaccard(&self, other: &Bound<'_, PyAny>) -> PyResult<f64> {
        if let Ok(m) = other.cast::<MinHash>() {
            let m = m.get();
            self.same_kind(m, "Cannot compute Jaccard given")?;
            if let Kind::Own(_) = self.kind {
                // Both sketched by the same family, chosen by both sizes.
                let (a, b) = self.both(m);
                let oph = self.uses_oph(&[a.len(), b.len()]);
                return Ok(neardup::verify::estimate(
                    &self.signature(&a, oph),
                    &self.signature(&b, oph),
                ));
            }
            return Ok(neardup::verify::estimate(&self.values(), &m.values()));
        }
        let (scheme, seed, values) = MinHash::foreign(other)?;
        if scheme != self.kind.name() || seed != self.seed || values.len() != self.num_perm {
            return Err(PyValueError::new_err(
                "Cannot compute Jaccard given MinHash with a different scheme, seed or number \
                 of permutation functions",
            ));
        }
        Ok(neardup::verify::estimate(&self.values(), &values))
    }

    /// The MinHash estimate of the Jaccard similarity (an older name of `jaccard`).
    fn estimate(&self, other: &Bound<'_, PyAny>) -> PyResult<f64> {
        self.jaccard(other)
    }

    /// The exact Jaccard similarity of the two sets (0 if either is empty): neardup's,
    /// where `jaccard` is datasketch's estimate. Both must carry their sets.
    fn exact_jaccard(&self, other: &MinHash) -> PyResult<f64> {
        if !self.has_set() || !other.has_set() {
            return Err(refused(
                "exact_jaccard needs both sets: a MinHash rebuilt from hashvalues, or fed \
                 by a hashfunc of yours, has only its sketch",
            ));
        }
        let (a, b) = self.both(other);
        Ok(neardup::verify::jaccard(&a, &b))
    }

    /// The hashvalues (a copy): `num_perm` values, uint32 for `affine32`, else uint64.
    fn digest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.array(py, self.values())
    }

    /// The hashvalues, datasketch's attribute (a copy: change it by `update` or `merge`).
    #[getter]
    fn hashvalues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.digest(py)
    }

    /// The permutation parameters, two rows `a` and `b` (datasketch's attribute; none
    /// for neardup's own sketches).
    #[getter]
    fn permutations<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(p) = &self.perms else {
            return Ok(None);
        };
        let flat: Vec<u64> = p.a.iter().chain(&p.b).copied().collect();
        let rows = crate::buffer::Buffer::shaped(flat, vec![2, self.num_perm]);
        let array = py.import("numpy")?.call_method1("asarray", (rows,))?;
        Ok(Some(array.call_method1("astype", (p.scheme.dtype(),))?))
    }

    /// The hash function of the tokens: yours, else `neardup.sha1_hash32` (`sha1_hash64`
    /// for affine64), which are datasketch's.
    #[getter]
    fn hashfunc<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(f) = &self.hashfunc {
            return Ok(Some(f.bind(py).clone()));
        }
        let name = match self.kind {
            Kind::Scheme(Scheme::Affine64) => "sha1_hash64",
            Kind::Scheme(_) => "sha1_hash32",
            Kind::Own(_) => return Ok(None),
        };
        Ok(Some(py.import("neardup._neardup")?.getattr(name)?))
    }

    /// datasketch's GPU setting, kept as given (neardup runs on the CPU).
    #[getter]
    fn _gpu_mode(&self) -> &str {
        &self.gpu_mode
    }

    /// datasketch's estimate of the number of distinct elements.
    fn count(&self) -> f64 {
        let k = self.num_perm as f64;
        let max = self.kind.max() as f64;
        k / self.values().iter().map(|&v| v as f64 / max).sum::<f64>() - 1.0
    }

    /// True if the sketch is as made (every hashvalue at its maximum; no element).
    fn is_empty(&self) -> bool {
        match self.kind {
            Kind::Scheme(s) => self.lock().values.iter().all(|&v| v == s.max()),
            Kind::Own(_) => self.lock().set.is_empty(),
        }
    }

    /// Makes this MinHash the union of both (datasketch's `merge`).
    fn merge(&self, other: &MinHash) -> PyResult<()> {
        self.same_kind(other, "Cannot merge")?;
        let theirs = other.lock().clone();
        let mut inner = self.lock();
        if let Kind::Scheme(_) = self.kind {
            for (v, &w) in inner.values.iter_mut().zip(&theirs.values) {
                *v = (*v).min(w);
            }
        }
        if theirs.has_set {
            inner.add(theirs.set);
        } else {
            inner.forget_set();
        }
        Ok(())
    }

    /// Resets the sketch, and the set, to empty.
    fn clear(&self) {
        let values = self.empty_values();
        *self.lock() = Inner {
            has_set: self.hashfunc.is_none(),
            values,
            ..Inner::default()
        };
    }

    /// A copy (sharing the permutations and the hash function).
    fn copy(&self, py: Python<'_>) -> MinHash {
        MinHash::with(self.shape(py), self.lock().clone())
    }

    /// The union of two or more MinHashes of the same scheme, seed and `num_perm`
    /// (datasketch's `MinHash.union`); it takes the first one's hash function.
    #[staticmethod]
    #[pyo3(signature = (*mhs))]
    fn union(py: Python<'_>, mhs: &Bound<'_, PyTuple>) -> PyResult<MinHash> {
        if mhs.len() < 2 {
            return Err(PyValueError::new_err("Cannot union less than 2 MinHash"));
        }
        let first = mhs.get_item(0)?;
        let out = first.cast::<MinHash>()?.get().copy(py);
        for m in mhs.iter().skip(1) {
            out.merge(m.cast::<MinHash>()?.get()).map_err(|_| {
                PyValueError::new_err(
                    "The unioning MinHash must have the same seed, number of permutation \
                     functions and scheme",
                )
            })?;
        }
        Ok(out)
    }

    /// Signature length K.
    #[getter]
    fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// Seed of the permutations.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// datasketch's permutation scheme (`"affine32"`, `"affine64"`, `"legacy"`), or
    /// neardup's own sketch (`"oph"`, `"classic"`).
    #[getter]
    fn scheme(&self) -> &'static str {
        self.kind.name()
    }

    /// The same as `scheme` (neardup's name).
    #[getter]
    fn sketch(&self) -> &'static str {
        self.kind.name()
    }

    /// The set's hashes, sorted (a uint64 array); refused for a MinHash without its set.
    fn hashes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if !self.has_set() {
            return Err(refused(
                "this MinHash has only its sketch, not its set (rebuilt from hashvalues, or \
                 fed by a hashfunc of yours)",
            ));
        }
        let set = self.lock().settle().to_vec();
        py.import("numpy")?
            .call_method1("asarray", (crate::buffer::Buffer::column(set),))
    }

    /// Whether the MinHash carries its set (so `exact_jaccard` and verified LSH answers).
    #[getter(has_set)]
    fn has_set_py(&self) -> bool {
        self.has_set()
    }

    /// The signature length, as datasketch's `len(m)`.
    fn __len__(&self) -> usize {
        self.num_perm
    }

    /// datasketch's equality: the same type, scheme, seed and hashvalues (neardup's own
    /// sketches: the same sets).
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !slf.get_type().is(other.get_type()) {
            return Ok(false);
        }
        let (me, other) = (slf.get(), other.cast::<MinHash>()?.get());
        if std::ptr::eq(me, other) {
            return Ok(true);
        }
        if (me.kind, me.seed, me.num_perm) != (other.kind, other.seed, other.num_perm) {
            return Ok(false);
        }
        if let Kind::Own(_) = me.kind {
            let (a, b) = me.both(other);
            return Ok(a == b && me.lock().whole == other.lock().whole);
        }
        Ok(me.values() == other.values())
    }

    fn __repr__(&self) -> String {
        format!(
            "MinHash(num_perm={}, seed={}, scheme={:?})",
            self.num_perm,
            self.seed,
            self.kind.name(),
        )
    }

    /// Pickles as a versioned state (`_from_state`), which later versions keep reading.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let state = PyDict::new(py);
        state.set_item("version", PICKLE_VERSION)?;
        state.set_item("num_perm", me.num_perm)?;
        state.set_item("seed", me.seed)?;
        state.set_item("scheme", me.kind.name())?;
        state.set_item("gpu_mode", &me.gpu_mode)?;
        state.set_item("hashfunc", me.hashfunc.as_ref().map(|f| f.bind(py)))?;
        {
            let mut inner = me.lock();
            let set = inner
                .has_set
                .then(|| PyBytes::new(py, &to_bytes(inner.settle())));
            state.set_item("set", set)?;
            let whole = inner
                .whole
                .as_deref()
                .map(|w| PyBytes::new(py, &to_bytes(w)));
            state.set_item("whole", whole)?;
            state.set_item("values", PyBytes::new(py, &to_bytes(&inner.values)))?;
        }
        // Drawn permutations are drawn again from the seed; given ones travel.
        if let (Kind::Scheme(s), Some(p)) = (me.kind, &me.perms) {
            if drawn(py, s, me.seed, me.num_perm)?.as_ref() != p.as_ref() {
                state.set_item(
                    "permutations",
                    (
                        PyBytes::new(py, &to_bytes(&p.a)),
                        PyBytes::new(py, &to_bytes(&p.b)),
                    ),
                )?;
            }
        }
        let restore = py
            .import("neardup._neardup")?
            .getattr("MinHash")?
            .getattr("_from_state")?;
        Ok((restore, PyTuple::new(py, [state.into_any()])?))
    }

    /// Rebuilds a MinHash pickled by `__reduce__` (format 2, neardup 0.2 on).
    #[staticmethod]
    fn _from_state<'py>(py: Python<'py>, state: &Bound<'py, PyDict>) -> PyResult<MinHash> {
        let get = |k: &str| -> PyResult<Bound<'py, PyAny>> {
            state
                .get_item(k)?
                .ok_or_else(|| refused(format!("a pickled MinHash lacks {k:?}")))
        };
        let version: u32 = get("version")?.extract()?;
        if version > PICKLE_VERSION {
            return Err(refused(format!(
                "this MinHash was pickled by a newer neardup (format {version}; this one reads \
                 up to {PICKLE_VERSION})"
            )));
        }
        let num_perm = num_perm_of(get("num_perm")?.extract()?)?;
        let seed: u64 = get("seed")?.extract()?;
        let set: Option<Vec<u8>> = get("set")?.extract()?;
        let whole: Option<Vec<u8>> = get("whole")?.extract()?;
        let mut inner = Inner {
            has_set: set.is_some(),
            set: from_bytes(&set.unwrap_or_default())?,
            pending: true,
            whole: whole.as_deref().map(from_bytes).transpose()?,
            values: from_bytes(&get("values")?.extract::<Vec<u8>>()?)?,
        };
        let scheme_name: String = get("scheme")?.extract()?;
        let Kind::Scheme(scheme) = Kind::parse(&scheme_name)? else {
            return Ok(MinHash::own(
                num_perm,
                seed,
                own_sketch(&scheme_name)?,
                inner,
            ));
        };
        if inner.values.len() != num_perm {
            return Err(refused(
                "a pickled MinHash's hashvalues are not num_perm long",
            ));
        }
        let perms = match state.get_item("permutations")? {
            Some(p) => {
                let (a, b): (Vec<u8>, Vec<u8>) = p.extract()?;
                Arc::new(Perms::given(
                    scheme,
                    num_perm,
                    from_bytes(&a)?,
                    from_bytes(&b)?,
                )?)
            }
            None => drawn(py, scheme, seed, num_perm)?,
        };
        let hashfunc: Option<Py<PyAny>> = get("hashfunc")?.extract()?;
        inner.has_set &= hashfunc.is_none();
        let shape = Shape {
            num_perm,
            seed,
            kind: Kind::Scheme(scheme),
            hashfunc,
            gpu_mode: get("gpu_mode")?.extract()?,
            perms: Some(perms),
        };
        Ok(MinHash::with(shape, inner))
    }

    /// Rebuilds a MinHash pickled by neardup 0.1 (its set and its own sketch).
    #[staticmethod]
    fn _restore(
        num_perm: i64,
        seed: u64,
        sketch: String,
        set: &[u8],
        whole: Option<&[u8]>,
    ) -> PyResult<MinHash> {
        let inner = Inner {
            set: from_bytes(set)?,
            pending: true,
            whole: whole.map(from_bytes).transpose()?,
            ..Inner::default()
        };
        Ok(MinHash::own(
            num_perm_of(num_perm)?,
            seed,
            own_sketch(&sketch)?,
            inner,
        ))
    }
}

/// The iterator `MinHash.generator` returns: one MinHash per set, made when asked for.
#[pyclass(module = "neardup")]
pub struct MinHashes {
    template: Py<MinHash>,
    sets: Py<PyAny>,
}

#[pymethods]
impl MinHashes {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<MinHash>> {
        let Some(tokens) = self
            .sets
            .bind(py)
            .cast::<pyo3::types::PyIterator>()?
            .clone()
            .next()
        else {
            return Ok(None);
        };
        let m = self.template.get().copy(py);
        m.add_tokens(tokens?.try_iter()?)?;
        Ok(Some(m))
    }
}
