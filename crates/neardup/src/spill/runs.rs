//! Sorting more fixed-width records than memory holds: records gather in a buffer of a
//! given size; a full buffer is sorted and written to an unnamed temporary file (a run);
//! at the end the runs are merged, smallest record first. Nothing touches the disk when
//! the records fit in the buffer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;

use super::spill_error;
use crate::error::Result;

/// A record of fixed width, written little-endian.
pub(crate) trait Fixed: Copy + Ord + Send + Sync {
    /// Bytes per record.
    const WIDTH: usize;
    fn put(&self, out: &mut [u8]);
    fn get(bytes: &[u8]) -> Self;
}

/// Runs open at once, at most: when a sorter has this many, they are merged into one
/// longer run, so a sort never holds more files or read buffers than this however
/// small its memory.
const FAN_IN: usize = 64;

/// Bytes read ahead per run while merging.
const READ_AHEAD: usize = 1 << 16;

/// Records gathered into sorted runs on disk.
pub(crate) struct Sorter<R: Fixed> {
    dir: PathBuf,
    buffer: Vec<R>,
    capacity: usize,
    runs: Vec<Run>,
    /// Records pushed in all.
    len: u64,
}

impl<R: Fixed> Sorter<R> {
    /// A sorter that holds at most `memory` bytes of records (at least 4,096 records)
    /// before it writes a run into `dir`.
    pub(crate) fn new(dir: &Path, memory: usize) -> Self {
        let capacity = (memory / std::mem::size_of::<R>().max(1)).max(1 << 12);
        Sorter {
            dir: dir.to_path_buf(),
            buffer: Vec::new(),
            capacity,
            runs: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, record: R) -> Result<()> {
        if self.buffer.len() == self.capacity {
            self.spill()?;
        }
        if self.buffer.capacity() == 0 {
            self.buffer.reserve_exact(self.capacity);
        }
        self.buffer.push(record);
        self.len += 1;
        Ok(())
    }

    /// Records pushed so far.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Runs written so far.
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        self.buffer.par_sort_unstable();
        let run = write_run(&self.dir, self.buffer.drain(..))?;
        self.runs.push(run);
        if self.runs.len() == FAN_IN {
            let runs = std::mem::take(&mut self.runs);
            let merged = Merge::<R>::new(runs, &self.dir)?;
            self.runs.push(write_run_fallible(&self.dir, merged)?);
        }
        Ok(())
    }

    /// Every record pushed, smallest first.
    pub(crate) fn finish(mut self) -> Result<Merged<R>> {
        if self.runs.is_empty() {
            self.buffer.par_sort_unstable();
            return Ok(Merged::Memory(self.buffer.into_iter()));
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        self.buffer = Vec::new();
        Ok(Merged::Disk(Merge::new(
            std::mem::take(&mut self.runs),
            &self.dir,
        )?))
    }
}

/// A sorted run: its file, rewound, and how many records it holds (so a file cut short
/// is an error, not a shorter run).
pub(crate) struct Run {
    file: File,
    records: u64,
}

fn write_run(dir: &Path, records: impl Iterator<Item = impl Fixed>) -> Result<Run> {
    write_run_fallible(dir, records.map(Ok))
}

fn write_run_fallible<R: Fixed>(
    dir: &Path,
    records: impl Iterator<Item = Result<R>>,
) -> Result<Run> {
    let file = tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut bytes = vec![0u8; R::WIDTH];
    let mut count = 0u64;
    for r in records {
        r?.put(&mut bytes);
        out.write_all(&bytes).map_err(|e| spill_error(dir, e))?;
        count += 1;
    }
    let mut file = out
        .into_inner()
        .map_err(|e| spill_error(dir, e.into_error()))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| spill_error(dir, e))?;
    Ok(Run {
        file,
        records: count,
    })
}

/// The records of a finished [`Sorter`], smallest first; an error reading a run ends it.
pub(crate) enum Merged<R: Fixed> {
    /// They all fitted in memory.
    Memory(std::vec::IntoIter<R>),
    /// They are merged from runs on disk.
    Disk(Merge<R>),
}

impl<R: Fixed> Iterator for Merged<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        match self {
            Merged::Memory(it) => it.next().map(Ok),
            Merged::Disk(m) => m.next(),
        }
    }
}

/// A k-way merge of sorted runs.
pub(crate) struct Merge<R: Fixed> {
    dir: PathBuf,
    /// Each run's reader and the records it has left.
    readers: Vec<(BufReader<File>, u64)>,
    heap: BinaryHeap<Reverse<(R, usize)>>,
    bytes: Vec<u8>,
    failed: bool,
}

impl<R: Fixed> Merge<R> {
    fn new(runs: Vec<Run>, dir: &Path) -> Result<Self> {
        let mut m = Merge {
            dir: dir.to_path_buf(),
            readers: runs
                .into_iter()
                .map(|r| (BufReader::with_capacity(READ_AHEAD, r.file), r.records))
                .collect(),
            heap: BinaryHeap::new(),
            bytes: vec![0u8; R::WIDTH],
            failed: false,
        };
        for i in 0..m.readers.len() {
            if let Some(r) = m.read(i)? {
                m.heap.push(Reverse((r, i)));
            }
        }
        Ok(m)
    }

    /// The next record of run `i`, if it has one.
    fn read(&mut self, i: usize) -> Result<Option<R>> {
        let (reader, left) = &mut self.readers[i];
        if *left == 0 {
            return Ok(None);
        }
        *left -= 1;
        reader
            .read_exact(&mut self.bytes)
            .map_err(|e| spill_error(&self.dir, e))?;
        Ok(Some(R::get(&self.bytes)))
    }
}

impl<R: Fixed> Iterator for Merge<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        if self.failed {
            return None;
        }
        let Reverse((record, i)) = self.heap.pop()?;
        match self.read(i) {
            Ok(Some(next)) => self.heap.push(Reverse((next, i))),
            Ok(None) => {}
            Err(e) => {
                self.failed = true;
                return Some(Err(e));
            }
        }
        Some(Ok(record))
    }
}

/// A pair of documents `(a, b)`, or a band record in its band's file: `(bucket key,
/// document)`.
impl Fixed for (u32, u32) {
    const WIDTH: usize = 8;
    fn put(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.0.to_le_bytes());
        out[4..8].copy_from_slice(&self.1.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        (u32_at(b, 0), u32_at(b, 4))
    }
}

/// A record of three fields, 16 bytes: the sorter's tests run on it.
#[cfg(test)]
impl Fixed for (u32, u64, u32) {
    const WIDTH: usize = 16;
    fn put(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.0.to_le_bytes());
        out[4..12].copy_from_slice(&self.1.to_le_bytes());
        out[12..16].copy_from_slice(&self.2.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        (u32_at(b, 0), u64_at(b, 4), u32_at(b, 12))
    }
}

/// A set's fingerprint and its document: `(fingerprint, document)`.
impl Fixed for (u128, u32) {
    const WIDTH: usize = 20;
    fn put(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.0.to_le_bytes());
        out[16..20].copy_from_slice(&self.1.to_le_bytes());
    }
    fn get(b: &[u8]) -> Self {
        let mut x = [0u8; 16];
        x.copy_from_slice(&b[..16]);
        (u128::from_le_bytes(x), u32_at(b, 16))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

#[cfg(test)]
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn sorted_through<R: Fixed + std::fmt::Debug>(records: &[R], memory: usize) -> (Vec<R>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(dir.path(), memory);
        for &r in records {
            s.push(r).unwrap();
        }
        assert_eq!(s.len(), records.len() as u64);
        let runs = s.runs();
        let out: Vec<R> = s.finish().unwrap().map(|r| r.unwrap()).collect();
        (out, runs)
    }

    #[test]
    fn merges_runs_into_the_sorted_records() {
        let mut rng = SplitMix64::new(7);
        let records: Vec<(u32, u64, u32)> = (0..300_000)
            .map(|i| ((rng.next_u64() % 5) as u32, rng.next_u64() % 1000, i))
            .collect();
        let mut want = records.clone();
        want.sort_unstable();
        // In memory, a few runs, and more runs than are merged at once.
        for (memory, spilled) in [(1 << 30, false), (1 << 20, true), (1, true)] {
            let (got, runs) = sorted_through(&records, memory);
            assert_eq!(got, want, "memory {memory}");
            assert_eq!(runs > 0, spilled);
        }
        // 300,000 records in runs of 4,096: merged down on the way, never more open
        // than FAN_IN.
        let (_, runs) = sorted_through(&records, 1);
        assert!((1..FAN_IN).contains(&runs), "{runs} runs");
    }

    #[test]
    fn records_survive_the_round_trip_through_bytes() {
        let mut b = [0u8; 20];
        let f = (u128::MAX - 12345, u32::MAX - 1);
        f.put(&mut b);
        assert_eq!(<(u128, u32)>::get(&b), f);
        let p = (3u32, u32::MAX);
        p.put(&mut b[..8]);
        assert_eq!(<(u32, u32)>::get(&b[..8]), p);
        let mut pairs: Vec<(u32, u32)> = (0..10_000u32).rev().map(|i| (i % 97, i)).collect();
        let (got, _) = sorted_through(&pairs, 1);
        pairs.sort_unstable();
        assert_eq!(got, pairs);
    }
}
