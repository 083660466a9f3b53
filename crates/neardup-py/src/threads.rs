//! How many threads a call runs on: the global rayon pool (every core, or
//! `RAYON_NUM_THREADS`), or a pool of the size a caller asks for, built once per size.
//! Results do not depend on it (the library's determinism).
//!
//! A process forked from one that used rayon (`multiprocessing` with the `fork` start
//! method) inherits the pools but not their threads: work sent to them would wait forever.
//! So every parallel step of the package goes through [`run`], which in a forked process
//! uses pools of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::PyResult;
use rayon::ThreadPool;

use crate::errors::refused;

/// The most threads a call may ask for: more only cost memory and start-up time.
const MAX_THREADS: usize = 1024;

/// The process the module was loaded in: its pools are the ones that have threads.
static LOADED_IN: OnceLock<u32> = OnceLock::new();

/// Notes the process the module is loaded in (called by the module's initialization).
pub fn loaded() {
    LOADED_IN.get_or_init(std::process::id);
}

/// True in a process forked after the module was loaded.
fn forked() -> bool {
    LOADED_IN
        .get()
        .is_some_and(|&pid| pid != std::process::id())
}

/// Runs `work` on `threads` threads (`None`: the global pool, or in a forked process a
/// pool of as many threads as it would have).
pub fn run<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    match threads {
        None if !forked() => Ok(work()),
        None => Ok(pool(default_threads())?.install(work)),
        Some(n) => Ok(pool(n)?.install(work)),
    }
}

/// A thread count from Python, checked before any work.
pub fn parse(threads: Option<i64>) -> PyResult<Option<usize>> {
    match threads {
        None => Ok(None),
        Some(n) if (1..=MAX_THREADS as i64).contains(&n) => Ok(Some(n as usize)),
        Some(n) => Err(refused(format!(
            "threads must be in 1..={MAX_THREADS}, got {n}"
        ))),
    }
}

/// What the global pool would have: `RAYON_NUM_THREADS`, else one per core.
fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| (1..=MAX_THREADS).contains(&n))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Pools by process and size: a forked process never uses its parent's.
type Pools = HashMap<(u32, usize), Arc<ThreadPool>>;

/// The pool of `n` threads of this process.
fn pool(n: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let key = (std::process::id(), n);
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(p) = pools.get(&key) {
        return Ok(Arc::clone(p));
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("neardup-{i}"))
        .build()
        .map_err(|e| refused(format!("cannot start {n} threads: {e}")))?;
    let built = Arc::new(built);
    pools.insert(key, Arc::clone(&built));
    Ok(built)
}

/// Runs `work` with the GIL released, its parallel steps on the global pool (see [`run`]).
pub fn detached<T: Send>(py: pyo3::Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| run(None, work))
}
