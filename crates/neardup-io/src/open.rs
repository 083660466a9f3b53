//! Opening an input as a byte stream: a file, a `.gz` or `.zst` file, or standard input.
//!
//! Files whose name ends in `.gz` (any case) are decompressed with a multi-member gzip
//! decoder; bytes after the last member that do not start another member are
//! [`Error::GzipTrailingBytes`] (`gzip -d` warns of "trailing garbage"), not a truncated
//! stream. Files whose name ends in `.zst` are decompressed with zstd's streaming
//! decoder, frame after frame (`zstd -d` reads concatenated frames as one stream); a
//! frame cut short is [`Error::Zstd`]. Standard input is decompressed when it starts with
//! the gzip magic bytes (`1f 8b`) or zstd's (`28 b5 2f fd`), since it has no name to go
//! by.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

use crate::error::{Error, Result};
use crate::format::Format;

/// Buffer size for reading files and decompressed streams.
const BUF_SIZE: usize = 64 * 1024;

/// How much of standard input is looked at to guess its format: a stream that is only
/// whitespace for that long is read as lines (and is not held in memory to find out).
const SNIFF_LIMIT: usize = 1 << 20;

/// An opened input: its bytes, decompressed, and what to call it in messages.
pub(crate) struct Input {
    /// The (decompressed) bytes.
    pub(crate) reader: Box<dyn BufRead + Send>,
    /// The context for error messages.
    pub(crate) ctx: ErrorContext,
}

/// What an input is called in errors, and whether its errors may come from a decoder.
#[derive(Debug, Clone)]
pub(crate) struct ErrorContext {
    /// The path as given, or `-`; shared by every record's location.
    pub(crate) source: std::sync::Arc<str>,
    /// True if the stream goes through the gzip decoder.
    pub(crate) gzip: bool,
    /// True if the stream goes through the zstd decoder.
    pub(crate) zstd: bool,
}

impl ErrorContext {
    /// Turns a read error at `line` into the crate's error, telling a broken gzip
    /// stream from other read errors.
    pub(crate) fn read_error(&self, line: Option<u64>, error: io::Error) -> Error {
        let from_decoder = matches!(
            error.kind(),
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
        );
        let trailing = error
            .get_ref()
            .and_then(|e| e.downcast_ref::<TrailingBytes>())
            .map(|t| t.0);
        if let Some(offset) = trailing {
            Error::GzipTrailingBytes {
                path: self.source.to_string(),
                offset,
            }
        } else if self.gzip && from_decoder {
            Error::Gzip {
                path: self.source.to_string(),
                line,
                error,
            }
        } else if self.zstd && (from_decoder || error.kind() == io::ErrorKind::Other) {
            // The zstd crate reports a bad frame as `Other`, with zstd's own message.
            Error::Zstd {
                path: self.source.to_string(),
                line,
                error,
            }
        } else {
            Error::Read {
                path: self.source.to_string(),
                line,
                error,
            }
        }
    }
}

/// True if the file name ends in `.gz`, ignoring ASCII case: the readers decompress such
/// a file.
pub fn is_gzip_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"))
        .unwrap_or(false)
}

/// True if the file name ends in `.zst`, ignoring ASCII case: the readers decompress such
/// a file.
pub fn is_zstd_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".zst"))
        .unwrap_or(false)
}

/// The magic bytes a zstd frame starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A zstd decoder over `inner`: every frame in turn, as one stream.
fn zstd_reader(inner: Box<dyn BufRead + Send>) -> io::Result<Box<dyn BufRead + Send>> {
    let decoder = zstd::stream::read::Decoder::with_buffer(inner)?;
    Ok(Box::new(BufReader::with_capacity(BUF_SIZE, decoder)))
}

/// Opens the file at `path`, decompressing it if its name ends in `.gz` or `.zst`.
pub(crate) fn open_file(path: &Path) -> Result<Input> {
    let ctx = ErrorContext {
        source: path.display().to_string().into(),
        gzip: is_gzip_name(path),
        zstd: is_zstd_name(path),
    };
    let file = File::open(path).map_err(|e| Error::Read {
        path: ctx.source.to_string(),
        line: None,
        error: e,
    })?;
    let buffered = BufReader::with_capacity(BUF_SIZE, file);
    let reader: Box<dyn BufRead + Send> = if ctx.gzip {
        Box::new(BufReader::with_capacity(
            BUF_SIZE,
            GzipMembers::new(buffered),
        ))
    } else if ctx.zstd {
        zstd_reader(Box::new(buffered)).map_err(|e| ctx.read_error(None, e))?
    } else {
        Box::new(buffered)
    };
    Ok(Input { reader, ctx })
}

/// Bytes after the end of a gzip stream that do not start another member: the error
/// [`GzipMembers`] reads with, at the offset of the first such byte.
#[derive(Debug)]
struct TrailingBytes(u64);

impl std::fmt::Display for TrailingBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trailing bytes after the gzip stream at byte {}", self.0)
    }
}

impl std::error::Error for TrailingBytes {}

/// A [`BufRead`] that counts the bytes consumed.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.count += amt as u64;
        self.inner.consume(amt);
    }
}

/// A multi-member gzip decoder (like `flate2`'s `MultiGzDecoder`) that tells bytes
/// after the last member ([`TrailingBytes`]) from a truncated or corrupt member.
struct GzipMembers<R: BufRead> {
    decoder: Option<GzDecoder<Counting<R>>>,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(inner: R) -> Self {
        GzipMembers {
            decoder: Some(GzDecoder::new(Counting { inner, count: 0 })),
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let Some(decoder) = &mut self.decoder else {
                return Ok(0);
            };
            let n = decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            // The member ended: the end of the input, another member, or trailing bytes.
            let Some(decoder) = self.decoder.take() else {
                return Ok(0);
            };
            let mut inner = decoder.into_inner();
            let rest = loop {
                match inner.fill_buf() {
                    Ok(rest) => break rest,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            match rest {
                [] => return Ok(0),
                [0x1f] | [0x1f, 0x8b, ..] => self.decoder = Some(GzDecoder::new(inner)),
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        TrailingBytes(inner.count),
                    ))
                }
            }
        }
    }
}

/// Opens standard input, decompressing it if it starts with the gzip magic bytes.
///
/// # Errors
///
/// [`Error::Read`] ("cannot read standard input: it is closed") if file descriptor 0
/// is closed: the Rust runtime then puts `/dev/null` in its place, which would read as
/// an empty input.
pub(crate) fn open_stdin() -> Result<Input> {
    if stdin_is_closed() {
        return Err(Error::Read {
            path: "-".to_string(),
            line: None,
            error: io::Error::new(
                io::ErrorKind::NotConnected,
                "cannot read standard input: it is closed",
            ),
        });
    }
    let stdin = BufReader::with_capacity(BUF_SIZE, io::stdin());
    open_stream(Box::new(stdin), "-")
}

/// True if standard input was closed when the program started: descriptor 0 is gone, or
/// is what the Rust runtime opens in place of a closed one, `/dev/null` read-write (a
/// shell's `< /dev/null` opens it read-only).
#[cfg(unix)]
fn stdin_is_closed() -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: fcntl and fstat on descriptor 0 read the descriptor's state only.
    let flags = unsafe { libc::fcntl(0, libc::F_GETFL) };
    if flags == -1 {
        return true;
    }
    if flags & libc::O_ACCMODE != libc::O_RDWR {
        return false;
    }
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `stat` is written by fstat before it is read, and only if it succeeds.
    if unsafe { libc::fstat(0, stat.as_mut_ptr()) } != 0 {
        return true;
    }
    let stat = unsafe { stat.assume_init() };
    let is_char = stat.st_mode & libc::S_IFMT == libc::S_IFCHR;
    #[allow(clippy::unnecessary_cast)] // not u64 on every Unix
    let rdev = stat.st_rdev as u64;
    is_char && std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == rdev)
}

#[cfg(not(unix))]
fn stdin_is_closed() -> bool {
    false
}

/// Opens any byte stream the way standard input is opened (gzip and zstd sniffed by
/// content).
pub(crate) fn open_stream(reader: Box<dyn BufRead + Send>, source: &str) -> Result<Input> {
    let mut ctx = ErrorContext {
        source: source.into(),
        gzip: false,
        zstd: false,
    };
    let (reader, prefix) =
        peek_until(reader, |p| p.len() >= 4).map_err(|e| ctx.read_error(None, e))?;
    let reader: Box<dyn BufRead + Send> = if prefix.starts_with(&[0x1f, 0x8b]) {
        ctx.gzip = true;
        Box::new(BufReader::with_capacity(BUF_SIZE, GzipMembers::new(reader)))
    } else if prefix.starts_with(&ZSTD_MAGIC) {
        ctx.zstd = true;
        zstd_reader(reader).map_err(|e| ctx.read_error(None, e))?
    } else {
        reader
    };
    Ok(Input { reader, ctx })
}

impl Input {
    /// Guesses the format from the content: Parquet if it starts with `PAR1`, JSONL if
    /// the first byte that is not ASCII whitespace (after a UTF-8 BOM) is `{`, lines
    /// otherwise (an empty stream, or one
    /// with only whitespace in its first [`SNIFF_LIMIT`] bytes, is lines too).
    pub(crate) fn sniff_format(self) -> Result<(Input, Format)> {
        let Input { reader, ctx } = self;
        let content = |p: &[u8]| {
            let p = crate::text::strip_bom(p);
            // A partial BOM is not content yet.
            let partial_bom = !p.is_empty() && crate::text::BOM.starts_with(p) && p.len() < 3;
            p.iter()
                .position(|b| !b.is_ascii_whitespace())
                .filter(|_| !partial_bom)
        };
        let (reader, prefix) =
            peek_until(reader, |p| p.len() >= SNIFF_LIMIT || content(p).is_some())
                .map_err(|e| ctx.read_error(Some(1), e))?;
        let head = &prefix[..prefix.len().min(SNIFF_LIMIT)];
        let format = match content(head).map(|i| crate::text::strip_bom(head)[i]) {
            _ if head.starts_with(crate::parquet::read::MAGIC) => Format::Parquet,
            Some(b'{') => Format::Jsonl,
            _ => Format::Lines,
        };
        Ok((Input { reader, ctx }, format))
    }
}

/// Reads from `reader` until `enough` holds for the bytes read so far (or the stream
/// ends), and returns a reader that still yields every byte, plus those bytes.
pub(crate) fn peek_until(
    mut reader: Box<dyn BufRead + Send>,
    enough: impl Fn(&[u8]) -> bool,
) -> io::Result<(Box<dyn BufRead + Send>, Vec<u8>)> {
    let mut prefix = Vec::new();
    while !enough(&prefix) {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        prefix.extend_from_slice(buf);
        reader.consume(n);
    }
    if prefix.is_empty() {
        return Ok((reader, prefix));
    }
    let chained = Cursor::new(prefix.clone()).chain(reader);
    Ok((Box::new(chained), prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn stream(bytes: &[u8]) -> Box<dyn BufRead + Send> {
        Box::new(Cursor::new(bytes.to_vec()))
    }

    fn read_all(mut input: Input) -> Vec<u8> {
        let mut out = Vec::new();
        input.reader.read_to_end(&mut out).unwrap();
        out
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn plain_stream_is_passed_through() {
        let input = open_stream(stream(b"hello\nworld\n"), "-").unwrap();
        assert!(!input.ctx.gzip);
        assert_eq!(read_all(input), b"hello\nworld\n");
        let input = open_stream(stream(b""), "-").unwrap();
        assert_eq!(read_all(input), b"");
        let input = open_stream(stream(b"x"), "-").unwrap();
        assert_eq!(read_all(input), b"x");
    }

    #[test]
    fn gzip_stream_is_sniffed_and_decompressed() {
        let input = open_stream(stream(&gzip(b"{\"text\":\"a\"}\n")), "-").unwrap();
        assert!(input.ctx.gzip);
        assert_eq!(read_all(input), b"{\"text\":\"a\"}\n");
    }

    #[test]
    fn sniffs_jsonl_after_whitespace_and_keeps_bytes() {
        let input = open_stream(stream(b"  \n\t{\"text\":1}\n"), "-").unwrap();
        let (input, format) = input.sniff_format().unwrap();
        assert_eq!(format, Format::Jsonl);
        assert_eq!(read_all(input), b"  \n\t{\"text\":1}\n");

        let (input, format) = open_stream(stream(b"plain text\n"), "-")
            .unwrap()
            .sniff_format()
            .unwrap();
        assert_eq!(format, Format::Lines);
        assert_eq!(read_all(input), b"plain text\n");

        let (_, format) = open_stream(stream(b""), "-")
            .unwrap()
            .sniff_format()
            .unwrap();
        assert_eq!(format, Format::Lines);
    }

    #[test]
    fn sniffing_skips_a_bom_and_gives_up_after_a_mib_of_whitespace() {
        let (input, format) = open_stream(stream(b"\xEF\xBB\xBF {\"text\":1}\n"), "-")
            .unwrap()
            .sniff_format()
            .unwrap();
        assert_eq!(format, Format::Jsonl);
        assert_eq!(read_all(input), b"\xEF\xBB\xBF {\"text\":1}\n");
        let (_, format) = open_stream(stream(b"\xEF\xBB"), "-")
            .unwrap()
            .sniff_format()
            .unwrap();
        assert_eq!(format, Format::Lines);
        let mut blank = vec![b'\n'; 3 * SNIFF_LIMIT];
        blank.extend_from_slice(b"{\"text\":1}\n");
        let chunked = Box::new(BufReader::with_capacity(
            BUF_SIZE,
            Cursor::new(blank.clone()),
        ));
        let (input, format) = open_stream(chunked, "-").unwrap().sniff_format().unwrap();
        assert_eq!(format, Format::Lines);
        assert_eq!(read_all(input), blank);
    }

    #[test]
    fn gzip_errors_are_classified() {
        let ctx = ErrorContext {
            source: "x.gz".into(),
            gzip: true,
            zstd: false,
        };
        let e = ctx.read_error(Some(3), io::Error::from(io::ErrorKind::UnexpectedEof));
        assert!(matches!(e, Error::Gzip { line: Some(3), .. }), "{e:?}");
        let e = ctx.read_error(None, io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(matches!(e, Error::Read { .. }), "{e:?}");
        let plain = ErrorContext {
            source: "x".into(),
            gzip: false,
            zstd: false,
        };
        let e = plain.read_error(None, io::Error::from(io::ErrorKind::InvalidData));
        assert!(matches!(e, Error::Read { .. }), "{e:?}");
    }

    #[test]
    fn trailing_bytes_after_gzip_are_named() {
        let mut bytes = gzip(b"a\n");
        let n = bytes.len();
        bytes.extend_from_slice(&gzip(b"b\n"));
        let two = bytes.len();
        assert_eq!(
            read_all(open_stream(stream(&bytes), "-").unwrap()),
            b"a\nb\n"
        );
        bytes.extend_from_slice(b"junk");
        let mut input = open_stream(stream(&bytes), "x.gz").unwrap();
        let e = input.reader.read_to_end(&mut Vec::new()).unwrap_err();
        let e = input.ctx.read_error(Some(2), e);
        assert!(
            matches!(e, Error::GzipTrailingBytes { offset, .. } if offset == two as u64),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("x.gz: trailing bytes after the gzip stream at byte {two}")
        );
        assert!(n < two);
        // A truncated member is still a broken stream.
        let mut input = open_stream(stream(&bytes[..n - 3]), "x.gz").unwrap();
        let e = input.reader.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(matches!(input.ctx.read_error(None, e), Error::Gzip { .. }));
    }

    fn zstd(bytes: &[u8]) -> Vec<u8> {
        zstd::encode_all(bytes, 3).unwrap()
    }

    #[test]
    fn zstd_frames_are_read_as_one_stream() {
        let mut bytes = zstd(b"a\n");
        bytes.extend_from_slice(&zstd(b"b\n"));
        bytes.extend_from_slice(&zstd(b""));
        bytes.extend_from_slice(&zstd(b"c\n"));
        let input = open_stream(stream(&bytes), "-").unwrap();
        assert!(input.ctx.zstd && !input.ctx.gzip);
        assert_eq!(read_all(input), b"a\nb\nc\n");
    }

    #[test]
    fn a_truncated_zstd_frame_is_a_zstd_error() {
        let bytes = zstd(&b"some text that compresses\n".repeat(100));
        for cut in [bytes.len() - 1, bytes.len() / 2, 5] {
            let mut input = open_stream(stream(&bytes[..cut]), "x.zst").unwrap();
            let e = input.reader.read_to_end(&mut Vec::new()).unwrap_err();
            let e = input.ctx.read_error(Some(7), e);
            assert!(
                matches!(e, Error::Zstd { line: Some(7), .. }),
                "{cut}: {e:?}"
            );
            assert!(
                e.to_string()
                    .starts_with("x.zst:7: corrupt or truncated zstd stream: "),
                "{e}"
            );
        }
        // Bytes after the last frame that are no frame are an error too.
        let mut junk = zstd(b"a\n");
        junk.extend_from_slice(b"junk");
        let mut input = open_stream(stream(&junk), "x.zst").unwrap();
        let e = input.reader.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(matches!(input.ctx.read_error(None, e), Error::Zstd { .. }));
    }

    #[test]
    fn zst_names() {
        assert!(is_zstd_name(Path::new("a.jsonl.zst")));
        assert!(is_zstd_name(Path::new("A.ZST")));
        assert!(!is_zstd_name(Path::new("a.jsonl.gz")));
    }

    #[test]
    fn gz_names() {
        assert!(is_gzip_name(Path::new("a.jsonl.gz")));
        assert!(is_gzip_name(Path::new("A.GZ")));
        assert!(!is_gzip_name(Path::new("a.jsonl")));
        assert!(!is_gzip_name(Path::new("-")));
    }
}
