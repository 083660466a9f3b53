//! How many threads a call runs on: the global rayon pool (every core, or
//! `RAYON_NUM_THREADS`), or a pool of the size a caller asks for, built once per size.
//! Results do not depend on it (the library's determinism).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::PyResult;
use rayon::ThreadPool;

use crate::errors::refused;

/// The most threads a call may ask for: more only cost memory and start-up time.
const MAX_THREADS: usize = 1024;

/// Runs `work` on `threads` threads (`None`: the global pool).
pub fn run<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    match threads {
        None => Ok(work()),
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

fn pool(n: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(p) = pools.get(&n) {
        return Ok(Arc::clone(p));
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("neardup-{i}"))
        .build()
        .map_err(|e| refused(format!("cannot start {n} threads: {e}")))?;
    let built = Arc::new(built);
    pools.insert(n, Arc::clone(&built));
    Ok(built)
}
