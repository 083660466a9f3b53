//! Small byte-level helpers shared by the readers: BOMs, line ends, lossy decoding.

/// The UTF-8 byte order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading UTF-8 byte order mark.
pub(crate) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// `line` without its terminator: a final `\n` or `\r\n` (a lone `\r` is kept).
pub(crate) fn strip_line_end(line: &[u8]) -> &[u8] {
    match line.strip_suffix(b"\n") {
        Some(rest) => rest.strip_suffix(b"\r").unwrap_or(rest),
        None => line,
    }
}

/// Decodes `bytes` as UTF-8, replacing invalid sequences with U+FFFD; the flag tells
/// whether anything was replaced.
pub(crate) fn decode(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_owned(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

/// Like [`decode`] but reuses the allocation when the bytes are valid.
pub(crate) fn decode_owned(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_bom_once() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBFabc"), b"abc");
        assert_eq!(strip_bom(b"abc"), b"abc");
        assert_eq!(strip_bom(b"\xEF\xBB"), b"\xEF\xBB");
    }

    #[test]
    fn strips_lf_and_crlf_only() {
        assert_eq!(strip_line_end(b"a\n"), b"a");
        assert_eq!(strip_line_end(b"a\r\n"), b"a");
        assert_eq!(strip_line_end(b"a\r"), b"a\r");
        assert_eq!(strip_line_end(b"a\r\r\n"), b"a\r");
        assert_eq!(strip_line_end(b"a"), b"a");
        assert_eq!(strip_line_end(b"\n"), b"");
    }

    #[test]
    fn decodes_lossily() {
        assert_eq!(decode(b"caf\xC3\xA9"), ("café".to_string(), false));
        assert_eq!(decode(b"a\xFFb"), ("a\u{FFFD}b".to_string(), true));
        assert_eq!(
            decode_owned(b"a\xFFb".to_vec()),
            ("a\u{FFFD}b".to_string(), true)
        );
        assert_eq!(decode_owned(b"ok".to_vec()), ("ok".to_string(), false));
    }
}
