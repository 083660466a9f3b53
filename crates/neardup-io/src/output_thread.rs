//! An output's bytes handed to a thread of its own: the caller gathers them a chunk at a
//! time and goes on while the thread compresses (`.gz`, `.zst`) and writes them.
//!
//! The write stages that run after the matching (dedup's survivors, annotate's every
//! record, a compressed pairs file) ran on one thread that formatted, compressed and
//! copied into the kernel in turn; with the last two on another, formatting the next
//! chunk overlaps them.

use std::io::{self, Write};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Bytes gathered before they are handed over.
const CHUNK: usize = 1 << 20;

/// What the writer thread is asked to do.
enum Job {
    Write(Vec<u8>),
    /// Flush and say how it went.
    Flush(mpsc::SyncSender<io::Result<()>>),
}

/// A writer whose bytes another thread writes to `W`, in order. An error of that thread
/// comes back from the next call; [`Handoff::finish`] hands `W` back once all is written.
pub(crate) struct Handoff<W: Write + Send + 'static> {
    buf: Vec<u8>,
    jobs: Option<mpsc::SyncSender<Job>>,
    /// Chunks written, given back to be filled again.
    empties: mpsc::Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<W>>>,
}

impl<W: Write + Send + 'static> Handoff<W> {
    /// Starts the thread that writes to `out`.
    pub(crate) fn new(mut out: W) -> io::Result<Self> {
        // Two chunks queued: the caller runs at most that far ahead of the disk.
        let (jobs, queue) = mpsc::sync_channel::<Job>(2);
        let (give_back, empties) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("neardup-output".into())
            .spawn(move || {
                for job in queue {
                    match job {
                        Job::Write(mut chunk) => {
                            out.write_all(&chunk)?;
                            chunk.clear();
                            // The caller may be gone after an error of its own.
                            let _ = give_back.send(chunk);
                        }
                        Job::Flush(done) => {
                            let flushed = out.flush();
                            let failed = flushed.as_ref().err().map(copy_error);
                            let _ = done.send(flushed);
                            if let Some(e) = failed {
                                return Err(e);
                            }
                        }
                    }
                }
                Ok(out)
            })?;
        Ok(Handoff {
            buf: Vec::with_capacity(CHUNK),
            jobs: Some(jobs),
            empties,
            thread: Some(thread),
        })
    }

    /// Writes what is gathered, waits for the thread, and hands the writer back.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.hand_over()?;
        self.jobs = None; // the thread ends when its queue closes
        self.join()
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        match self.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => Ok(()),
            _ => Err(self.failure()),
        }
    }

    /// Sends the gathered bytes to be written.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .empties
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.buf, next);
        self.send(Job::Write(full))
    }

    /// The error the thread stopped at.
    fn failure(&mut self) -> io::Error {
        self.jobs = None;
        match self.join() {
            Err(e) => e,
            Ok(_) => io::Error::other("the output's writer thread stopped"),
        }
    }

    fn join(&mut self) -> io::Result<W> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(written)) => written,
            Some(Err(_)) => Err(io::Error::other("the output's writer thread panicked")),
            None => Err(io::Error::other("the output's writer thread stopped")),
        }
    }
}

impl<W: Write + Send + 'static> Write for Handoff<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.hand_over()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()?;
        let (done, flushed) = mpsc::sync_channel(1);
        self.send(Job::Flush(done))?;
        match flushed.recv() {
            Ok(result) => result,
            Err(_) => Err(self.failure()),
        }
    }
}

impl<W: Write + Send + 'static> Drop for Handoff<W> {
    /// Dropped unfinished (an error elsewhere): the thread ends and drops the writer (a
    /// temporary file is removed) before this returns.
    fn drop(&mut self) {
        self.jobs = None;
        let _ = self.join();
    }
}

/// An error given to two readers (the flush's caller and the thread's end).
fn copy_error(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails after `room` bytes, with the given kind.
    struct Room {
        room: usize,
        written: Vec<u8>,
    }

    impl Write for Room {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            if self.written.len() + data.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.written.extend_from_slice(data);
            Ok(data.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_byte_arrives_in_order() {
        let mut out = Handoff::new(Vec::new()).unwrap();
        let mut expected = Vec::new();
        for i in 0..300_000u32 {
            let line = format!("{i}\n");
            out.write_all(line.as_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
            if i % 100_000 == 0 {
                out.flush().unwrap();
            }
        }
        out.write_all(&vec![b'x'; 3 * CHUNK]).unwrap();
        expected.extend(std::iter::repeat_n(b'x', 3 * CHUNK));
        assert_eq!(out.finish().unwrap(), expected);
    }

    #[test]
    fn the_threads_error_comes_back_with_its_kind() {
        let mut out = Handoff::new(Room {
            room: CHUNK + 10,
            written: Vec::new(),
        })
        .unwrap();
        let chunk = vec![b'a'; CHUNK];
        let mut failed = None;
        for _ in 0..8 {
            if let Err(e) = out.write_all(&chunk) {
                failed = Some(e);
                break;
            }
        }
        let e = match failed {
            Some(e) => e,
            None => out.finish().err().expect("the disk filled up"),
        };
        assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}");
    }

    #[test]
    fn a_flush_reports_what_was_written_before_it() {
        let mut out = Handoff::new(Room {
            room: 5,
            written: Vec::new(),
        })
        .unwrap();
        out.write_all(b"0123456789").unwrap();
        assert_eq!(out.flush().unwrap_err().kind(), io::ErrorKind::StorageFull);
        out.write_all(b"more").unwrap(); // gathered, not yet handed over
        assert!(out.flush().is_err(), "a stopped writer keeps failing");
    }
}
