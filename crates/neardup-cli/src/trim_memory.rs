//! Giving memory the program freed back to the system (glibc only; elsewhere a no-op).
//!
//! glibc keeps what a thread frees in that thread's arena and returns only what lies at
//! the top of a heap. A batch run frees most of what it read with (the readers' batches,
//! the shingling threads' buffers) in arenas the later stages never allocate from, so it
//! stays resident to the end unless trimmed.

/// Returns the free memory of every arena to the system now (a few milliseconds).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() {
    // SAFETY: malloc_trim only takes the allocator's own free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() {}
