//! How many threads a call runs on: the global rayon pool (every core, or
//! `RAYON_NUM_THREADS`), or a pool of the size a caller asks for, built once per size.
//! Results do not depend on it (the library's determinism).
//!
//! A long call can be interrupted (Ctrl-C): see [`interruptible`].
//!
//! A process forked from one that used rayon (`multiprocessing` with the `fork` start
//! method) inherits the pools but not their threads: work sent to them would wait forever.
//! So every parallel step of the package goes through [`run`], which in a forked process
//! uses pools of its own.

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use neardup::run::Stage;
use neardup::Observer;
use pyo3::{PyResult, Python};
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

/// How often a caller waiting for an interruptible call runs Python's signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// The most texts and bytes of text a chunk of work holds between two checks: a few
/// milliseconds of work on plain text, half a second on the slowest (text that NFKC makes
/// many times longer).
const CHUNK_ITEMS: usize = 1 << 14;
const CHUNK_BYTES: usize = 1 << 20;

/// Calls on fewer texts and bytes than these are not watched (see [`worth_watching`]).
const WATCH_ITEMS: usize = 1 << 12;
const WATCH_BYTES: usize = 1 << 20;

/// Work stopped because the caller asked it to (carried by unwinding: see
/// [`Stop::checkpoint`]).
struct Interrupted;

/// A request to stop, set when a signal handler raised in the caller (Ctrl-C's
/// `KeyboardInterrupt`); the work looks at it between chunks.
#[derive(Default)]
pub struct Stop(AtomicBool);

impl Stop {
    /// Stops the work here once a stop is asked, by unwinding to [`interruptible`] (with
    /// `resume_unwind`, which prints nothing): the library's stages, called back through an
    /// [`Observer`] or a text they read, have no way to return early, and everything the
    /// work builds is its own, so unwinding drops it all. Call it between chunks.
    pub fn checkpoint(&self) {
        if self.0.load(Ordering::Relaxed) {
            panic::resume_unwind(Box::new(Interrupted));
        }
    }

    /// An observer that stops a library run at its next report: between stages, and
    /// between the chunks of candidates it verifies.
    pub fn observer(&self) -> StopObserver<'_> {
        StopObserver(self)
    }
}

/// See [`Stop::observer`].
pub struct StopObserver<'a>(&'a Stop);

impl Observer for StopObserver<'_> {
    fn start(&mut self, _stage: Stage, _total: u64) {
        self.0.checkpoint();
    }
    fn advance(&mut self, _n: u64) {
        self.0.checkpoint();
    }
    fn finish(&mut self) {
        self.0.checkpoint();
    }
    /// Asked once per chunk of candidates verified.
    fn wants_scores(&self) -> bool {
        self.0.checkpoint();
        false
    }
}

/// Whether a call on `items` of `bytes` in all (of text, or elements of sets) takes long
/// enough to watch for Ctrl-C: a small one ends soon anyway, and a thread started per call
/// would slow small calls made in a loop.
pub fn worth_watching(items: usize, bytes: usize) -> bool {
    items >= WATCH_ITEMS || bytes >= WATCH_BYTES
}

/// Texts in chunks of at most [`CHUNK_ITEMS`] texts and about [`CHUNK_BYTES`], to check
/// for a stop between.
pub fn text_chunks<'a, T: AsRef<str>>(texts: &'a [T]) -> impl Iterator<Item = &'a [T]> + 'a {
    let mut rest = texts;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let n = rest
            .iter()
            .take(CHUNK_ITEMS)
            .take_while(|t| {
                let fits = bytes < CHUNK_BYTES;
                bytes += t.as_ref().len();
                fits
            })
            .count();
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        Some(chunk)
    })
}

/// The total length of texts.
pub fn bytes_of<T: AsRef<str>>(texts: &[T]) -> usize {
    texts.iter().map(|t| t.as_ref().len()).sum()
}

/// Runs `work` with the GIL released on `threads` threads (see [`run`]) so that Ctrl-C
/// interrupts it, if `watch` (see [`worth_watching`]). Python runs signal handlers only on
/// the main thread, between bytecodes, so the calling thread waits for `work` on a thread
/// of its own and every [`SIGNAL_POLL`] takes the GIL to run them; when one raises
/// (`KeyboardInterrupt`) it asks `work` to stop, waits for it to reach a
/// [`Stop::checkpoint`], and raises that exception. Work that finished instead (past its
/// last checkpoint: a commit made) is answered, and the interrupt raised again for the
/// caller's Python to take right after.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    watch: bool,
    work: impl FnOnce(&Stop) -> T + Send,
) -> PyResult<T> {
    let stop = Stop::default();
    if !watch {
        return py.detach(|| run(threads, || work(&stop)));
    }
    py.detach(|| {
        let (done, finished) = mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("neardup-call".into())
                // As much stack as the main thread the work would otherwise run on.
                .stack_size(8 << 20)
                .spawn_scoped(scope, || {
                    // Dropped when the work ends, however it ends: the caller stops waiting.
                    let _done = done;
                    run(threads, || {
                        panic::catch_unwind(AssertUnwindSafe(|| work(&stop)))
                    })
                })
                .map_err(|e| crate::errors::refused(format!("cannot start a thread: {e}")))?;
            let mut raised = None;
            while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(SIGNAL_POLL) {
                if raised.is_none() {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        stop.0.store(true, Ordering::Relaxed);
                        raised = Some(e);
                    }
                }
            }
            let outcome = match worker.join() {
                Ok(ran) => ran?,
                Err(payload) => panic::resume_unwind(payload),
            };
            match (outcome, raised) {
                (Err(payload), _) if !payload.is::<Interrupted>() => panic::resume_unwind(payload),
                (Err(_), Some(e)) => Err(e),
                (Ok(done), Some(_)) => {
                    // The work finished before it reached a checkpoint: what it did (a
                    // commit made) is answered, and Ctrl-C is raised again, to be taken
                    // as soon as the caller's Python runs on.
                    // SAFETY: async-signal-safe, needs no GIL; it only flags an interrupt.
                    unsafe { pyo3::ffi::PyErr_SetInterrupt() };
                    Ok(done)
                }
                (Ok(done), None) => Ok(done),
                (Err(_), None) => unreachable!("only a raised signal asks for a stop"),
            }
        })
    })
}
