//! Band records `(key, document)` kept on disk in one file per band, read back band by
//! band sorted by key: a band that fits in the sorting memory is sorted there at once;
//! a larger one goes through sorted runs ([`super::runs`]) and is merged.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;

use super::runs::{Fixed, Merged, Sorter};
use super::spill_error;
use crate::candidates::band_index::BucketKey;
use crate::error::Result;
use crate::text::uniform_sort;

/// Bytes a record takes in memory: a 32-bit bucket key and a document, as the in-memory
/// run's band index holds them, so that both put the same documents in a bucket.
const IN_MEMORY: usize = std::mem::size_of::<(BucketKey, u32)>();

/// The band records of every band, one temporary file each.
pub(crate) struct BandFiles {
    dir: PathBuf,
    files: Vec<Option<BufWriter<File>>>,
    counts: Vec<u64>,
}

impl BandFiles {
    /// Files for `bands` bands (created when a band gets its first record).
    pub(crate) fn new(dir: &Path, bands: usize) -> Self {
        BandFiles {
            dir: dir.to_path_buf(),
            files: (0..bands).map(|_| None).collect(),
            counts: vec![0; bands],
        }
    }

    pub(crate) fn push(&mut self, band: usize, key: BucketKey, doc: u32) -> Result<()> {
        let out = match &mut self.files[band] {
            Some(out) => out,
            slot @ None => {
                let file =
                    tempfile::tempfile_in(&self.dir).map_err(|e| spill_error(&self.dir, e))?;
                slot.insert(BufWriter::with_capacity(1 << 16, file))
            }
        };
        let mut bytes = [0u8; 8];
        (key, doc).put(&mut bytes);
        out.write_all(&bytes)
            .map_err(|e| spill_error(&self.dir, e))?;
        self.counts[band] += 1;
        Ok(())
    }

    /// Records held, over all bands.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Every record, by band, then key, then document; a band is sorted in at most
    /// `memory` bytes.
    pub(crate) fn finish(self, memory: usize) -> Result<SortedBands> {
        let mut files = Vec::with_capacity(self.files.len());
        for (band, out) in self.files.into_iter().enumerate() {
            if let Some(out) = out {
                let mut file = out
                    .into_inner()
                    .map_err(|e| spill_error(&self.dir, e.into_error()))?;
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| spill_error(&self.dir, e))?;
                files.push((band as u32, self.counts[band], file));
            }
        }
        files.reverse();
        Ok(SortedBands {
            dir: self.dir,
            memory,
            files,
            current: None,
        })
    }
}

/// The records of one band, sorted.
enum Band {
    Memory(u32, std::vec::IntoIter<(BucketKey, u32)>),
    Disk(u32, Merged<(BucketKey, u32)>),
}

/// The records of [`BandFiles::finish`], as `(band, key, document)`.
pub(crate) struct SortedBands {
    dir: PathBuf,
    memory: usize,
    /// Bands still to read, the next last.
    files: Vec<(u32, u64, File)>,
    current: Option<Band>,
}

impl SortedBands {
    /// Reads and sorts the next band.
    fn open(&mut self, band: u32, count: u64, file: File) -> Result<Band> {
        let mut records = BufReader::with_capacity(1 << 20, file);
        let mut bytes = [0u8; 8];
        let mut read = |records: &mut BufReader<File>| -> Result<(BucketKey, u32)> {
            records
                .read_exact(&mut bytes)
                .map_err(|e| spill_error(&self.dir, e))?;
            Ok(<(BucketKey, u32)>::get(&bytes))
        };
        let bytes = count.saturating_mul(IN_MEMORY as u64);
        if bytes <= self.memory as u64 {
            let mut v = Vec::with_capacity(count as usize);
            for _ in 0..count {
                v.push(read(&mut records)?);
            }
            // Keys are uniform: the linear sort when its second buffer fits too.
            if 2 * bytes <= self.memory as u64 {
                uniform_sort::sort(&mut v, &mut uniform_sort::Scratch::default(), |r| {
                    (u64::from(r.0) << 32) | u64::from(r.1)
                });
            } else {
                v.par_sort_unstable();
            }
            Ok(Band::Memory(band, v.into_iter()))
        } else {
            let mut sorter = Sorter::new(&self.dir, self.memory);
            for _ in 0..count {
                sorter.push(read(&mut records)?)?;
            }
            Ok(Band::Disk(band, sorter.finish()?))
        }
    }
}

impl Iterator for SortedBands {
    type Item = Result<(u32, BucketKey, u32)>;

    fn next(&mut self) -> Option<Result<(u32, BucketKey, u32)>> {
        loop {
            match &mut self.current {
                Some(Band::Memory(band, it)) => {
                    if let Some((key, doc)) = it.next() {
                        return Some(Ok((*band, key, doc)));
                    }
                }
                Some(Band::Disk(band, it)) => match it.next() {
                    Some(Ok((key, doc))) => return Some(Ok((*band, key, doc))),
                    Some(Err(e)) => return Some(Err(e)),
                    None => {}
                },
                None => {}
            }
            // This band is done (or none was open): free it before reading the next.
            self.current = None;
            let (band, count, file) = self.files.pop()?;
            match self.open(band, count, file) {
                Ok(b) => self.current = Some(b),
                Err(e) => {
                    self.files.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn bands_come_back_sorted_in_memory_and_through_runs() {
        let mut rng = SplitMix64::new(5);
        // Few distinct keys, spread over the range as bucket keys are.
        let keys: Vec<BucketKey> = (0..5000).map(|_| rng.next_u64() as BucketKey).collect();
        let records: Vec<(u32, BucketKey, u32)> = (0..100_000)
            .map(|i| {
                let key = keys[(rng.next_u64() % 5000) as usize];
                ((rng.next_u64() % 7) as u32, key, i)
            })
            .collect();
        let mut want = records.clone();
        want.sort_unstable();
        // Sorted in linear time, in place, and through runs.
        for memory in [1 << 30, 100_000 * IN_MEMORY * 3 / 2, 1 << 16] {
            let dir = tempfile::tempdir().unwrap();
            let mut files = BandFiles::new(dir.path(), 9);
            for &(band, key, doc) in &records {
                files.push(band as usize, key, doc).unwrap();
            }
            assert_eq!(files.len(), records.len() as u64);
            let got: Vec<_> = files.finish(memory).unwrap().map(Result::unwrap).collect();
            assert_eq!(got, want, "memory {memory}");
        }
    }
}
