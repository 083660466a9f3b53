//! A reader that keeps the bytes it hands out, so a parser that reads ahead through its
//! own buffer (the `csv` crate) can still have each record's exact source bytes sliced
//! out by absolute offset.

use std::io::{self, BufRead, Read};

/// How much is read from the inner reader at a time.
const CHUNK: usize = 64 * 1024;

/// Wraps a reader and remembers every byte read from it since the last
/// [`Recorder::release_before`], addressed by absolute offset from the start of the stream.
pub(crate) struct Recorder {
    inner: Box<dyn BufRead + Send>,
    /// Bytes from absolute offset `base` on.
    buf: Vec<u8>,
    /// The absolute offset of `buf[0]`.
    base: u64,
    /// The absolute offset of the next byte to hand to the consumer through `Read`.
    delivered: u64,
    /// True once the inner reader reported the end.
    eof: bool,
}

impl Recorder {
    /// Records `inner`.
    pub(crate) fn new(inner: Box<dyn BufRead + Send>) -> Recorder {
        Recorder {
            inner,
            buf: Vec::new(),
            base: 0,
            delivered: 0,
            eof: false,
        }
    }

    /// The absolute offset just past the bytes read from the inner reader so far.
    fn end(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Reads more from the inner reader into the buffer; false at the end of the stream.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                self.eof = true;
                return Ok(false);
            }
            let n = chunk.len().min(CHUNK);
            self.buf.extend_from_slice(&chunk[..n]);
            self.inner.consume(n);
            return Ok(true);
        }
    }

    /// The byte at absolute offset `at`, reading ahead if needed (without handing it to
    /// the consumer); `None` past the end of the stream. `at` must not be before the
    /// last release point.
    pub(crate) fn byte_at(&mut self, at: u64) -> io::Result<Option<u8>> {
        while at >= self.end() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(at
            .checked_sub(self.base)
            .and_then(|i| self.buf.get(i as usize).copied()))
    }

    /// The recorded bytes in `start..end` (absolute offsets), clamped to what is held.
    pub(crate) fn slice(&self, start: u64, end: u64) -> &[u8] {
        let held = |at: u64| (at.saturating_sub(self.base) as usize).min(self.buf.len());
        let (s, e) = (held(start), held(end));
        &self.buf[s.min(e)..e]
    }

    /// Allows the bytes before absolute offset `at` to be forgotten. Memory is given back
    /// in large steps, so releasing after every record costs amortised O(1) per byte.
    pub(crate) fn release_before(&mut self, at: u64) {
        let at = at.min(self.delivered);
        let n = at.saturating_sub(self.base) as usize;
        if n >= CHUNK && n >= self.buf.len() / 2 {
            self.buf.drain(..n);
            self.base += n as u64;
        }
    }

    /// The absolute offset of the end of the stream, once it is known.
    pub(crate) fn total(&self) -> Option<u64> {
        self.eof.then(|| self.end())
    }
}

impl Read for Recorder {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.delivered >= self.end() && !self.fill()? {
            return Ok(0);
        }
        let start = (self.delivered - self.base) as usize;
        let available = &self.buf[start..];
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.delivered += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn recorder(bytes: &[u8]) -> Recorder {
        // A tiny inner buffer to exercise refills.
        Recorder::new(Box::new(io::BufReader::with_capacity(
            3,
            Cursor::new(bytes.to_vec()),
        )))
    }

    #[test]
    fn passes_bytes_through_and_keeps_them() {
        let data: Vec<u8> = (0..200u8).collect();
        let mut r = recorder(&data);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(r.slice(10, 20), &data[10..20]);
        assert_eq!(r.slice(190, 500), &data[190..]);
        assert_eq!(r.total(), Some(200));
    }

    #[test]
    fn lookahead_does_not_skip_bytes() {
        let mut r = recorder(b"abcdefgh");
        let mut two = [0u8; 2];
        r.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"ab");
        assert_eq!(r.byte_at(6).unwrap(), Some(b'g'));
        assert_eq!(r.byte_at(8).unwrap(), None);
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"cdefgh");
    }

    #[test]
    fn release_keeps_undelivered_and_later_bytes() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut r = Recorder::new(Box::new(Cursor::new(data.clone())));
        let mut out = vec![0u8; 200_000];
        r.read_exact(&mut out).unwrap();
        r.release_before(150_000);
        assert_eq!(r.slice(150_000, 150_010), &data[150_000..150_010]);
        assert_eq!(r.byte_at(150_000).unwrap(), Some(data[150_000]));
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, &data[200_000..]);
        assert_eq!(r.slice(299_990, 300_000), &data[299_990..]);
    }
}
