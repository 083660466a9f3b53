//! The JSONL format: one JSON object per line.
//!
//! The text is the string field named by [`ReadOptions::text_field`]; the id is the field
//! named by [`ReadOptions::id_field`] if present: a string as is, a number (or any other
//! value) as its exact JSON source text; `null` counts as absent. Other fields are skipped
//! without being built. If a field occurs twice, the last one counts. An empty text field
//! name reads ids only: every object is a record with empty text (files of ids, such as
//! ground-truth labels, are read with the very id rule of the data).
//!
//! Each line yields one entry: a record, or a skipped record with the reason: a line that
//! is empty or only whitespace ([`SkipReason::BlankLine`]), a line that is not one JSON
//! object ([`SkipReason::MalformedJson`]), an object without the text field
//! ([`SkipReason::MissingField`]) or with a text field that is not a string
//! ([`SkipReason::FieldNotText`]). `\r\n` line ends and a UTF-8 BOM at the start of the
//! input are accepted; invalid UTF-8 is replaced (the record is marked lossy) before the
//! line is parsed.
//!
//! [`ReadOptions::text_field`]: crate::ReadOptions::text_field
//! [`ReadOptions::id_field`]: crate::ReadOptions::id_field

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::Result;
use crate::line_source::{line_content, LineSource, NextLine};
use crate::record::{Entry, Record, SkipReason, Skipped};

/// Reads records from JSONL.
pub(crate) struct JsonlReader {
    lines: LineSource,
    text_field: String,
    id_field: String,
    key_field: Option<String>,
    buf: Vec<u8>,
    /// The top-level keys of the first [`FIELDS_SEEN_OBJECTS`] objects, in first-seen
    /// order.
    fields_seen: Vec<String>,
    /// Objects parsed so far, up to [`FIELDS_SEEN_OBJECTS`].
    objects: usize,
}

/// How many objects [`JsonlReader::fields_seen`] looks at.
const FIELDS_SEEN_OBJECTS: usize = 10;

impl JsonlReader {
    /// Reads `lines`, taking text, id and key from the named fields.
    pub(crate) fn new(
        lines: LineSource,
        text_field: &str,
        id_field: &str,
        key_field: Option<&str>,
    ) -> JsonlReader {
        JsonlReader {
            lines,
            text_field: text_field.to_string(),
            id_field: id_field.to_string(),
            key_field: key_field.map(str::to_string),
            buf: Vec::new(),
            fields_seen: Vec::new(),
            objects: 0,
        }
    }

    /// The top-level keys of the first 10 JSON objects read, in first-seen order.
    pub(crate) fn fields_seen(&self) -> &[String] {
        &self.fields_seen
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        let location = match self.lines.next_line_record(&mut self.buf)? {
            NextLine::End => return Ok(None),
            NextLine::TooLarge(skipped) => return Ok(Some(skipped)),
            NextLine::Line(location) => location,
        };
        let content = line_content(&self.buf, &location);
        let wanted = Wanted {
            text: &self.text_field,
            id: &self.id_field,
            key: self.key_field.as_deref(),
        };
        let collect = self.objects < FIELDS_SEEN_OBJECTS;
        let mut seen = Vec::new();
        let parsed = parse_wanted(content, wanted, collect.then_some(&mut seen));
        if collect
            && !matches!(
                parsed,
                Parsed::Skip {
                    reason: SkipReason::BlankLine | SkipReason::MalformedJson(_),
                    ..
                }
            )
        {
            self.objects += 1;
            for name in seen {
                if !self.fields_seen.contains(&name) {
                    self.fields_seen.push(name);
                }
            }
        }
        let entry = match parsed {
            Parsed::Text {
                id,
                text,
                lossy,
                key,
                numeric_id,
            } => Entry::Record(Record {
                id,
                text,
                raw: self.lines.raw(&mut self.buf),
                location,
                lossy,
                key,
                numeric_id,
                path: None,
            }),
            Parsed::Skip { id, reason } => Entry::Skipped(Skipped {
                location,
                id,
                reason,
            }),
        };
        Ok(Some(entry))
    }
}

/// What one JSONL line holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A document.
    Text {
        /// Its id, if the object has one.
        id: Option<String>,
        /// Its text.
        text: String,
        /// True if invalid UTF-8 was replaced.
        lossy: bool,
        /// The key field's value, if one is asked for and present.
        key: Option<String>,
        /// True if the id is a JSON number.
        numeric_id: bool,
    },
    /// Not a document.
    Skip {
        /// Its id, if the object has one.
        id: Option<String>,
        /// Why.
        reason: SkipReason,
    },
}

/// Parses one line (without its terminator).
#[cfg(test)]
pub(crate) fn parse_line(line: &[u8], text_field: &str, id_field: &str) -> Parsed {
    let wanted = Wanted {
        text: text_field,
        id: id_field,
        key: None,
    };
    parse_wanted(line, wanted, None)
}

/// Parses one line (without its terminator) for the `wanted` fields; pushes every
/// top-level key onto `seen` if given (keys of a line that is not one JSON object may be
/// pushed too: the caller discards them).
fn parse_wanted(line: &[u8], wanted: Wanted<'_>, seen: Option<&mut Vec<String>>) -> Parsed {
    if line
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return Parsed::Skip {
            id: None,
            reason: SkipReason::BlankLine,
        };
    }
    let replaced;
    let (json, lossy) = match std::str::from_utf8(line) {
        Ok(s) => (s, false),
        Err(_) => {
            replaced = String::from_utf8_lossy(line).into_owned();
            (replaced.as_str(), true)
        }
    };
    // The hand-written scanner does not note keys: the first objects of an input, whose
    // keys are collected, always take the serde path.
    if seen.is_none() {
        if let Some(parsed) = parse_fast(json, lossy, wanted) {
            return parsed;
        }
    }
    parse_serde(json, lossy, wanted, seen)
}

/// Parses one line, already UTF-8 (`lossy` if it was replaced), with serde_json: the
/// reference for every line, and the only path for what [`parse_fast`] gives up on.
fn parse_serde(
    json: &str,
    lossy: bool,
    wanted: Wanted<'_>,
    seen: Option<&mut Vec<String>>,
) -> Parsed {
    let mut de = serde_json::Deserializer::from_str(json);
    let seed = WantedSeed { wanted, seen };
    match seed.deserialize(&mut de).and_then(|f| de.end().map(|()| f)) {
        Ok(fields) => fields.into_parsed(lossy, wanted.text),
        Err(e) => Parsed::Skip {
            id: None,
            reason: SkipReason::MalformedJson(json_message(&e)),
        },
    }
}

impl Fields {
    /// The entry for an object with these fields (`lossy` if the line was replaced).
    fn into_parsed(self, lossy: bool, text_field: &str) -> Parsed {
        let numeric_id = self.numeric_id;
        let lossy = lossy || self.id_lossy;
        let id = self.id.flatten();
        match self.text {
            Some(TextValue::Text(text)) => Parsed::Text {
                id,
                text,
                lossy,
                key: self.key,
                numeric_id,
            },
            Some(TextValue::NotText) => Parsed::Skip {
                id,
                reason: SkipReason::FieldNotText(text_field.to_string()),
            },
            None if text_field.is_empty() => Parsed::Text {
                id,
                text: String::new(),
                lossy,
                key: self.key,
                numeric_id,
            },
            None => Parsed::Skip {
                id,
                reason: SkipReason::MissingField(text_field.to_string()),
            },
        }
    }
}

/// serde_json's message with the column, without its "line 1" (always 1 here).
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&suffix) {
        Some(msg) => format!("{msg} at column {}", e.column()),
        None => full,
    }
}

/// The names of the fields to pick out of an object.
#[derive(Clone, Copy)]
struct Wanted<'a> {
    text: &'a str,
    id: &'a str,
    key: Option<&'a str>,
}

/// [`Wanted`], and where to note every key seen (the first objects of an input).
struct WantedSeed<'a, 's> {
    wanted: Wanted<'a>,
    seen: Option<&'s mut Vec<String>>,
}

/// The fields picked out of an object.
#[derive(Default)]
struct Fields {
    /// The text field, if present.
    text: Option<TextValue>,
    /// The id field if present: `Some(None)` for `null`.
    id: Option<Option<String>>,
    /// True if the id field is a JSON number.
    numeric_id: bool,
    /// True if the id (or key) held a lone surrogate escape, replaced by U+FFFD.
    id_lossy: bool,
    /// The key field's value (`None` if absent or `null`).
    key: Option<String>,
}

/// The value of the text field.
enum TextValue {
    /// A JSON string.
    Text(String),
    /// Any other JSON value.
    NotText,
}

/// Which wanted fields a key names.
#[derive(Clone, Copy)]
struct Key {
    text: bool,
    id: bool,
    key: bool,
}

impl<'de> DeserializeSeed<'de> for WantedSeed<'_, '_> {
    type Value = Fields;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Fields, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for WantedSeed<'_, '_> {
    type Value = Fields;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Fields, A::Error> {
        let WantedSeed { wanted, mut seen } = self;
        let mut fields = Fields::default();
        while let Some(key) = map.next_key_seed(KeySeed {
            wanted,
            seen: seen.as_deref_mut(),
        })? {
            match key {
                Key {
                    text: false,
                    id: false,
                    key: false,
                } => {
                    map.next_value::<IgnoredAny>()?;
                }
                Key {
                    text: true,
                    id: false,
                    key: false,
                } => fields.text = Some(map.next_value()?),
                Key { text, id, key } => {
                    let raw: &RawValue = map.next_value()?;
                    if text {
                        fields.text = Some(match serde_json::from_str::<String>(raw.get()) {
                            Ok(t) => TextValue::Text(t),
                            Err(_) => TextValue::NotText,
                        });
                    }
                    if id {
                        fields.numeric_id = is_number(raw.get());
                        let (id, lossy) = id_text(raw);
                        fields.id = Some(id);
                        fields.id_lossy |= lossy;
                    }
                    if key {
                        let (key, lossy) = id_text(raw);
                        fields.key = key;
                        fields.id_lossy |= lossy;
                    }
                }
            }
        }
        Ok(fields)
    }
}

/// True if `json` (a valid JSON value) is a number.
fn is_number(json: &str) -> bool {
    json.starts_with(|c: char| c == '-' || c.is_ascii_digit())
}

/// An id (or key) from its raw JSON: a string unescaped, `null` as none, anything else
/// verbatim; and true if the string held a lone surrogate escape (`"\ud800"`, valid
/// JSON syntax but no Unicode text), which is replaced by U+FFFD: the id is kept,
/// lossily, and the record marked lossy, as for invalid UTF-8.
fn id_text(raw: &RawValue) -> (Option<String>, bool) {
    let json = raw.get();
    if json.starts_with('"') {
        match serde_json::from_str::<String>(json) {
            Ok(s) => (Some(s), false),
            Err(_) => (unescape_lossy(json), true),
        }
    } else if json == "null" {
        (None, false)
    } else {
        (Some(json.to_string()), false)
    }
}

/// A JSON string literal (quotes included) unescaped, a `\uXXXX` that is not part of a
/// surrogate pair becoming U+FFFD; `None` if it is not a string literal.
fn unescape_lossy(json: &str) -> Option<String> {
    let inner = json.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<u32> {
        let digits: String = chars.by_ref().take(4).collect();
        (digits.len() == 4).then(|| u32::from_str_radix(&digits, 16).ok())?
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'u' => {
                let unit = hex(&mut chars)?;
                if (0xD800..0xDC00).contains(&unit) && chars.peek() == Some(&'\\') {
                    let mut ahead = chars.clone();
                    ahead.next();
                    if ahead.next() == Some('u') {
                        if let Some(low) = hex(&mut ahead).filter(|l| (0xDC00..0xE000).contains(l))
                        {
                            chars = ahead;
                            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                            continue;
                        }
                    }
                }
                out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Matches an object key against the wanted names without allocating (unless the key
/// is to be noted in `seen`).
struct KeySeed<'a, 's> {
    wanted: Wanted<'a>,
    seen: Option<&'s mut Vec<String>>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_> {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_, '_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> std::result::Result<Key, E> {
        if let Some(seen) = self.seen {
            if !seen.iter().any(|s| s == key) {
                seen.push(key.to_string());
            }
        }
        Ok(Key {
            text: !self.wanted.text.is_empty() && key == self.wanted.text,
            id: key == self.wanted.id,
            key: self.wanted.key == Some(key),
        })
    }
}

impl<'de> de::Deserialize<'de> for TextValue {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

/// Takes a JSON string as text; consumes any other value and reports it as not text.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = TextValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<TextValue, E> {
        Ok(TextValue::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<TextValue, E> {
        Ok(TextValue::Text(v))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_none<E: de::Error>(self) -> std::result::Result<TextValue, E> {
        Ok(TextValue::NotText)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<TextValue, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TextValue::NotText)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<TextValue, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(TextValue::NotText)
    }
}

// The fast path: a hand-written scanner for the common line, one object of strings,
// numbers and literals (nested arrays and objects are checked and skipped). It borrows
// from the line and builds only the output strings, once, where serde_json drives a
// visitor per field. What it is not sure to read exactly as serde_json does (any
// surrogate escape, a number other than a plain integer in a field that is only the
// text, nesting deeper than 64, any syntax error) it gives up on, and the line takes
// the serde path, which stays the reference (and words the errors).

/// Parses one line, already UTF-8 (`lossy` if it was replaced), as [`parse_serde`] does,
/// or returns `None` where it cannot be sure to: the caller then runs [`parse_serde`].
fn parse_fast(json: &str, lossy: bool, wanted: Wanted<'_>) -> Option<Parsed> {
    let b = json.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    // The last occurrence of each wanted field, built into strings only at the end.
    let (mut text, mut id, mut key) = (None, None, None);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let (close, escaped) = scan_string(b, i + 1)?;
            let name = &json[i + 1..close];
            i = skip_ws(b, close + 1);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
            let k = Key {
                text: !wanted.text.is_empty() && key_is(name, escaped, wanted.text),
                id: key_is(name, escaped, wanted.id),
                key: wanted.key.is_some_and(|key| key_is(name, escaped, key)),
            };
            // A field that is the text only is read by serde_json's `deserialize_any`,
            // which refuses a number beyond f64: such a value keeps to plain integers.
            let (value, end) = scan_value(json, i, k.text && !k.id && !k.key)?;
            if k.text {
                text = Some(value);
            }
            if k.id {
                id = Some(value);
            }
            if k.key {
                key = Some(value);
            }
            i = skip_ws(b, end);
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    if skip_ws(b, i) != b.len() {
        return None;
    }
    let text = match text {
        None => None,
        Some(Scanned::Str { inner, escaped }) => Some(TextValue::Text(unescape(inner, escaped)?)),
        Some(Scanned::Other(_)) => Some(TextValue::NotText),
    };
    let numeric_id = matches!(id, Some(Scanned::Other(raw)) if is_number(raw));
    let id = match id {
        None => None,
        Some(v) => Some(v.id_text()?),
    };
    let key = match key {
        None => None,
        Some(v) => v.id_text()?,
    };
    let fields = Fields {
        text,
        id,
        numeric_id,
        id_lossy: false,
        key,
    };
    Some(fields.into_parsed(lossy, wanted.text))
}

/// A value found by the fast path, as a slice of the line.
#[derive(Clone, Copy)]
enum Scanned<'a> {
    /// A string: what lies between its quotes, and whether that holds an escape.
    Str { inner: &'a str, escaped: bool },
    /// Any other value (number, literal, array, object): its exact source text.
    Other(&'a str),
}

impl Scanned<'_> {
    /// The id (or key) it makes, as [`id_text`] has it: `None` for `null`; `None` from
    /// the outer option only if a string does not unescape (not after a scan).
    fn id_text(self) -> Option<Option<String>> {
        match self {
            Scanned::Str { inner, escaped } => unescape(inner, escaped).map(Some),
            Scanned::Other("null") => Some(None),
            Scanned::Other(raw) => Some(Some(raw.to_string())),
        }
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Scans a JSON string whose content starts at `i` (after the opening quote): the index
/// of its closing quote and whether it holds an escape; `None` if it is not closed,
/// holds a control byte or an escape [`escape_at`] refuses.
///
/// Eight bytes at a time (as serde_json's own scan): `memchr2` and a separate check for
/// control bytes cost more on the short strings of a JSONL line. Inlined: it runs for
/// every key and string value.
#[inline(always)]
fn scan_string(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let at = loop {
            let Some(&word) = b.get(i..).and_then(|rest| rest.first_chunk::<8>()) else {
                let rest = b.get(i..)?;
                break i + rest
                    .iter()
                    .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
            };
            let hits = special_bytes(u64::from_le_bytes(word));
            if hits != 0 {
                break i + hits.trailing_zeros() as usize / 8;
            }
            i += 8;
        };
        match b[at] {
            b'"' => return Some((at, escaped)),
            b'\\' => {
                escaped = true;
                i = at + escape_at(b, at)?.1;
            }
            _ => return None,
        }
    }
}

/// A mask with the high bit set of the first byte of `x` (little-endian) that is below
/// 0x20, `"` or `\`, and maybe of later bytes: a borrow only sets a bit above a byte
/// that really is one, so `trailing_zeros` finds the first.
#[inline(always)]
fn special_bytes(x: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    let quote = x ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & (ONES << 7)
}

/// The escape whose backslash is at `at`: the character it stands for and its length
/// in bytes; `None` if it is malformed or a `\u` surrogate (whose rules serde_json
/// and [`id_text`] apply in several ways: the serde path handles them).
fn escape_at(b: &[u8], at: usize) -> Option<(char, usize)> {
    Some(match *b.get(at + 1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let unit = hex_unit(b, at + 2)?;
            if (0xD800..0xDC00).contains(&unit) && b.get(at + 6..at + 8) == Some(b"\\u") {
                // A surrogate pair, as encoders that write ASCII only (Python's `json`
                // by default) spell every character beyond the BMP. A lone or reversed
                // surrogate is left to the full parser and its lossy rule.
                let low = hex_unit(b, at + 8)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                (char::from_u32(c)?, 12)
            } else {
                // `None` for a lone surrogate.
                (char::from_u32(unit)?, 6)
            }
        }
        _ => return None,
    })
}

/// The four hex digits at `at` as a UTF-16 code unit.
fn hex_unit(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?
        .iter()
        .try_fold(0, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}

/// Calls `piece` with the unescaped content of a scanned string, piece by piece (runs
/// without escapes borrowed, each escape decoded), stopping at the first `None`.
fn unescape_pieces(inner: &str, mut piece: impl FnMut(&str) -> Option<()>) -> Option<()> {
    let b = inner.as_bytes();
    let mut start = 0;
    while let Some(off) = memchr::memchr(b'\\', &b[start..]) {
        let at = start + off;
        piece(&inner[start..at])?;
        let (c, len) = escape_at(b, at)?;
        piece(c.encode_utf8(&mut [0; 4]))?;
        start = at + len;
    }
    piece(&inner[start..])
}

/// The unescaped content of a scanned string, built once.
fn unescape(inner: &str, escaped: bool) -> Option<String> {
    if !escaped {
        return Some(inner.to_owned());
    }
    let mut out = String::with_capacity(inner.len());
    unescape_pieces(inner, |p| {
        out.push_str(p);
        Some(())
    })?;
    Some(out)
}

/// True if a scanned key, once unescaped, is `name` (compared without allocating).
#[inline(always)]
fn key_is(inner: &str, escaped: bool, name: &str) -> bool {
    if !escaped {
        return inner == name;
    }
    escaped_key_is(inner, name)
}

/// [`key_is`] for a key with an escape (rare: kept out of line).
#[cold]
fn escaped_key_is(inner: &str, name: &str) -> bool {
    let mut rest = name;
    unescape_pieces(inner, |p| {
        rest = rest.strip_prefix(p)?;
        Some(())
    })
    .is_some()
        && rest.is_empty()
}

/// Scans the value starting at `i`: what it is and the index after it. `plain_numbers`
/// accepts only integers of up to 18 digits (which no f64 overflow can refuse) for a
/// number at this level; nested ones are only checked, as serde_json does.
#[inline]
fn scan_value(json: &str, i: usize, plain_numbers: bool) -> Option<(Scanned<'_>, usize)> {
    let b = json.as_bytes();
    let end = match *b.get(i)? {
        b'"' => {
            let (close, escaped) = scan_string(b, i + 1)?;
            let inner = &json[i + 1..close];
            return Some((Scanned::Str { inner, escaped }, close + 1));
        }
        b'[' | b'{' => skip_container(b, i)?,
        _ => scan_scalar(b, i, plain_numbers)?,
    };
    Some((Scanned::Other(&json[i..end]), end))
}

/// Scans a number, `true`, `false` or `null` at `i`: the index after it. What follows
/// is left to the caller (serde_json too refuses `1x` or `truex` only there).
fn scan_scalar(b: &[u8], i: usize, plain_numbers: bool) -> Option<usize> {
    let word = |w: &[u8]| (b.get(i..i + w.len())? == w).then_some(i + w.len());
    match *b.get(i)? {
        b't' => word(b"true"),
        b'f' => word(b"false"),
        b'n' => word(b"null"),
        b'-' | b'0'..=b'9' => scan_number(b, i, plain_numbers),
        _ => None,
    }
}

/// Scans a JSON number at `i` (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as
/// serde_json's `ignore_integer`): the index after it. `plain` accepts only integers
/// of up to 18 digits.
fn scan_number(b: &[u8], i: usize, plain: bool) -> Option<usize> {
    let digits = |mut j: usize| {
        while let Some(b'0'..=b'9') = b.get(j) {
            j += 1;
        }
        j
    };
    let start = i + usize::from(b.get(i) == Some(&b'-'));
    let mut j = match *b.get(start)? {
        // One leading zero only.
        b'0' if matches!(b.get(start + 1), Some(b'0'..=b'9')) => return None,
        b'0' => start + 1,
        b'1'..=b'9' => digits(start + 1),
        _ => return None,
    };
    if plain {
        let more = matches!(b.get(j), Some(b'.' | b'e' | b'E'));
        return (!more && j - start <= 18).then_some(j);
    }
    if b.get(j) == Some(&b'.') {
        let frac = j + 1;
        j = digits(frac);
        if j == frac {
            return None;
        }
    }
    if let Some(b'e' | b'E') = b.get(j) {
        j += 1;
        if let Some(b'+' | b'-') = b.get(j) {
            j += 1;
        }
        let exp = j;
        j = digits(exp);
        if j == exp {
            return None;
        }
    }
    Some(j)
}

/// Scans the array or object at `i` without building it, checking its syntax as
/// serde_json's `ignore_value` does: the index after it. Nesting deeper than 64 (one
/// bit each of a `u64`, no allocation) is given up on.
fn skip_container(b: &[u8], mut i: usize) -> Option<usize> {
    // Bit 0 is the innermost open container: set for an object.
    let mut stack: u64 = 0;
    let mut depth = 0;
    // At the start of each turn, `i` is where a value starts.
    loop {
        match *b.get(i)? {
            open @ (b'[' | b'{') => {
                if depth == 64 {
                    return None;
                }
                let object = open == b'{';
                stack = stack << 1 | u64::from(object);
                depth += 1;
                i = skip_ws(b, i + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(i) != Some(&close) {
                    if object {
                        i = skip_member_key(b, i)?;
                    }
                    continue;
                }
                // Empty: closed at once.
                i += 1;
                stack >>= 1;
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' => i = scan_string(b, i + 1)?.0 + 1,
            _ => i = scan_scalar(b, i, false)?,
        }
        // After a value inside the innermost open container.
        loop {
            i = skip_ws(b, i);
            let object = stack & 1 == 1;
            match *b.get(i)? {
                b',' => {
                    i = skip_ws(b, i + 1);
                    if object {
                        i = skip_member_key(b, i)?;
                    }
                    break;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            i += 1;
            stack >>= 1;
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
}

/// Scans `"key" :` at `i` inside an object: the index where the value starts.
fn skip_member_key(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = skip_ws(b, scan_string(b, i + 1)?.0 + 1);
    (b.get(i) == Some(&b':')).then(|| skip_ws(b, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open::{ErrorContext, Input};
    use proptest::prelude::{any, prop_oneof, Strategy};
    use std::io::Cursor;

    fn parse(line: &str) -> Parsed {
        parse_line(line.as_bytes(), "text", "id")
    }

    #[test]
    fn lone_surrogate_in_an_id_is_kept_lossily() {
        match parse(r#"{"id": "a\ud800b", "text": "t"}"#) {
            Parsed::Text { id, lossy, .. } => {
                assert_eq!(id.as_deref(), Some("a\u{FFFD}b"));
                assert!(lossy);
            }
            _ => panic!("not a record"),
        }
        assert_eq!(
            unescape_lossy(r#""\ud83d\ude00 \udc00\n\u00e9\"""#).as_deref(),
            Some("\u{1F600} \u{FFFD}\n\u{e9}\"")
        );
        assert_eq!(
            unescape_lossy(r#""\ud800\u0041""#).as_deref(),
            Some("\u{FFFD}A")
        );
        match parse(r#"{"id": "ok", "text": "t"}"#) {
            Parsed::Text { lossy, .. } => assert!(!lossy),
            _ => panic!("not a record"),
        }
    }

    fn text(id: Option<&str>, text: &str) -> Parsed {
        Parsed::Text {
            id: id.map(str::to_string),
            text: text.to_string(),
            lossy: false,
            key: None,
            numeric_id: id.is_some_and(is_number),
        }
    }

    fn skip_reason(p: Parsed) -> SkipReason {
        match p {
            Parsed::Skip { reason, .. } => reason,
            other => panic!("expected a skip, got {other:?}"),
        }
    }

    #[test]
    fn reads_text_and_ids() {
        assert_eq!(
            parse(r#"{"id":"a","text":"hello"}"#),
            text(Some("a"), "hello")
        );
        assert_eq!(parse(r#"{"text":"x","id":17}"#), text(Some("17"), "x"));
        assert_eq!(parse(r#"{"text":"x","id":1.50}"#), text(Some("1.50"), "x"));
        assert_eq!(parse(r#"{"text":"x","id":-3e2}"#), text(Some("-3e2"), "x"));
        assert_eq!(parse(r#"{"text":"x","id":true}"#), text(Some("true"), "x"));
        assert_eq!(
            parse(r#"{"text":"x","id":[1,2]}"#),
            text(Some("[1,2]"), "x")
        );
        assert_eq!(parse(r#"{"text":"x","id":null}"#), text(None, "x"));
        // Beyond f64, still a JSON number: its text is the id (found by the jsonl fuzz
        // target, where serde_json's own `Value` refuses it).
        assert_eq!(
            parse(r#"{"text":"x","id":7.5e00000800000}"#),
            text(Some("7.5e00000800000"), "x")
        );
        assert_eq!(parse(r#"{"text":"x"}"#), text(None, "x"));
        assert_eq!(
            parse(r#"{"text":"a\"b\u00e9\n","id":"q\"1"}"#),
            text(Some("q\"1"), "a\"bé\n")
        );
        assert_eq!(
            parse(r#"{"meta":{"text":"inner"},"text":"outer","list":[{"id":9}]}"#),
            text(None, "outer")
        );
        assert_eq!(parse("  {\"text\":\"t\"}  \r"), text(None, "t"));
    }

    #[test]
    fn escaped_keys_match() {
        assert_eq!(parse(r#"{"te\u0078t":"x"}"#), text(None, "x"));
    }

    #[test]
    fn last_duplicate_field_wins() {
        assert_eq!(parse(r#"{"text":"a","text":"b"}"#), text(None, "b"));
    }

    #[test]
    fn same_field_for_text_and_id() {
        assert_eq!(parse_line(br#"{"k":"v"}"#, "k", "k"), text(Some("v"), "v"));
        assert_eq!(
            skip_reason(parse_line(br#"{"k":5}"#, "k", "k")),
            SkipReason::FieldNotText("k".into())
        );
    }

    #[test]
    fn skips_with_reasons() {
        assert_eq!(skip_reason(parse("")), SkipReason::BlankLine);
        assert_eq!(skip_reason(parse(" \t\r")), SkipReason::BlankLine);
        assert_eq!(
            skip_reason(parse(r#"{"id":3}"#)),
            SkipReason::MissingField("text".into())
        );
        for v in ["1", "null", "[\"a\"]", "{\"a\":\"b\"}", "true"] {
            let line = format!(r#"{{"id":"x","text":{v}}}"#);
            match parse(&line) {
                Parsed::Skip { id, reason } => {
                    assert_eq!(id.as_deref(), Some("x"));
                    assert_eq!(reason, SkipReason::FieldNotText("text".into()));
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        for bad in [
            "{",
            "not json",
            "[1,2]",
            "\"text\"",
            r#"{"text":"a"} x"#,
            "{\"text\":\"\\ud800\"}",
        ] {
            match skip_reason(parse(bad)) {
                SkipReason::MalformedJson(msg) => {
                    assert!(!msg.is_empty());
                    assert!(!msg.contains("line 1"), "{msg}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_object_message_is_helpful() {
        match skip_reason(parse("[1]")) {
            SkipReason::MalformedJson(msg) => assert!(msg.contains("JSON object"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_and_flagged() {
        let p = parse_line(b"{\"text\":\"caf\xE9\"}", "text", "id");
        assert_eq!(p, lossy_cafe());
    }

    /// What `{"text":"caf\xE9"}` (Latin-1, not UTF-8) reads as.
    fn lossy_cafe() -> Parsed {
        Parsed::Text {
            id: None,
            text: "caf\u{FFFD}".into(),
            lossy: true,
            key: None,
            numeric_id: false,
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        // Valid JSON: skipped over without recursion, so only the text is missing.
        assert_eq!(
            skip_reason(parse(&deep)),
            SkipReason::MissingField("text".into())
        );
        let deep_text = format!(
            "{{\"text\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(
            skip_reason(parse(&deep_text)),
            SkipReason::FieldNotText("text".into())
        );
        let unbalanced = format!("{{\"text\":{}", "[".repeat(100_000));
        assert!(matches!(
            skip_reason(parse(&unbalanced)),
            SkipReason::MalformedJson(_)
        ));
    }

    #[test]
    fn reader_yields_one_entry_per_line() {
        let data = b"\xEF\xBB\xBF{\"text\":\"a\"}\r\n\n{bad\n{\"text\":\"b\",\"id\":2}";
        let mut r = JsonlReader::new(
            LineSource::new(
                Input {
                    reader: Box::new(Cursor::new(data.to_vec())),
                    ctx: ErrorContext {
                        source: "d.jsonl".into(),
                        gzip: false,
                        zstd: false,
                    },
                },
                1 << 20,
            ),
            "text",
            "id",
            None,
        );
        let mut entries = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            entries.push(e);
        }
        assert_eq!(entries.len(), 4);
        let first = entries[0].record().unwrap();
        assert_eq!(first.text, "a");
        assert_eq!(first.raw, b"\xEF\xBB\xBF{\"text\":\"a\"}\r\n");
        assert!(matches!(&entries[1], Entry::Skipped(s) if s.reason == SkipReason::BlankLine));
        assert!(
            matches!(&entries[2], Entry::Skipped(s) if s.reason.code() == "malformed_json" && s.location.line == 3)
        );
        let last = entries[3].record().unwrap();
        assert_eq!(last.id.as_deref(), Some("2"));
        assert_eq!(last.raw, b"{\"text\":\"b\",\"id\":2}");
        assert_eq!(last.location.record, 4);
    }

    fn read_all(data: &[u8], key: Option<&str>) -> (Vec<Entry>, Vec<String>) {
        read_fields(data, "text", "id", key)
    }

    fn read_fields(
        data: &[u8],
        text: &str,
        id: &str,
        key: Option<&str>,
    ) -> (Vec<Entry>, Vec<String>) {
        let mut r = JsonlReader::new(
            LineSource::new(
                Input {
                    reader: Box::new(Cursor::new(data.to_vec())),
                    ctx: ErrorContext {
                        source: "k.jsonl".into(),
                        gzip: false,
                        zstd: false,
                    },
                },
                1 << 20,
            ),
            text,
            id,
            key,
        );
        let mut entries = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            entries.push(e);
        }
        (entries, r.fields_seen().to_vec())
    }

    #[test]
    fn an_empty_text_field_reads_ids_only() {
        // Labels: two ids per object, no text; the id rule is the data's (a number keeps
        // its source text, null is absent, a lone surrogate is replaced).
        let data =
            b"{\"a\": 8.50, \"b\": \"x\"}\n{\"a\": \"\\ud800\", \"b\": null, \"\": \"t\"}\n\n";
        let (es, _) = read_fields(data, "", "a", Some("b"));
        let got: Vec<(Option<&str>, Option<&str>, &str, bool)> = es
            .iter()
            .filter_map(Entry::record)
            .map(|r| (r.id.as_deref(), r.key.as_deref(), r.text.as_str(), r.lossy))
            .collect();
        assert_eq!(
            got,
            [
                (Some("8.50"), Some("x"), "", false),
                (Some("\u{FFFD}"), None, "", true)
            ]
        );
        // The blank line is still a skipped entry.
        assert_eq!(es.len(), 3);
        assert!(matches!(
            &es[2],
            Entry::Skipped(Skipped {
                reason: SkipReason::BlankLine,
                ..
            })
        ));
    }

    #[test]
    fn the_key_field_is_read_as_text() {
        let data = br#"{"text":"a","price":"9\u00e9"}
{"text":"b","price":12.50}
{"text":"c"}
{"text":"d","price":null}
{"text":"e","price":[1, 2]}
{"text":"f","price":true}
{"price":"p","text":"g","id":"price"}
{"text":"h","text2":"x","price":{"a":1}}
"#;
        let (es, _) = read_all(data, Some("price"));
        let keys: Vec<Option<&str>> = es
            .iter()
            .map(|e| e.record().unwrap().key.as_deref())
            .collect();
        assert_eq!(
            keys,
            [
                Some("9é"),
                Some("12.50"),
                None,
                None,
                Some("[1, 2]"),
                Some("true"),
                Some("p"),
                Some(r#"{"a":1}"#)
            ]
        );
        // The key may be the text or id field too.
        let (es, _) = read_all(b"{\"id\":7,\"text\":\"t\"}\n", Some("id"));
        let r = es[0].record().unwrap();
        assert_eq!((r.key.as_deref(), r.id.as_deref()), (Some("7"), Some("7")));
        let (es, _) = read_all(b"{\"id\":7,\"text\":\"t\"}\n", Some("text"));
        assert_eq!(es[0].record().unwrap().key.as_deref(), Some("t"));
        assert_eq!(es[0].record().unwrap().text, "t");
        // Without a key field there is no key.
        let (es, _) = read_all(data, None);
        assert!(es.iter().all(|e| e.record().unwrap().key.is_none()));
    }

    #[test]
    fn numeric_ids_are_marked() {
        let data = b"{\"id\":8.50,\"text\":\"a\"}\n{\"id\":\"8.50\",\"text\":\"b\"}\n\
            {\"id\":-1,\"text\":\"c\"}\n{\"id\":true,\"text\":\"d\"}\n{\"text\":\"e\"}\n\
            {\"text\":\"f\",\"id\":3}\n";
        let (es, _) = read_all(data, None);
        let got: Vec<(Option<&str>, bool)> = es
            .iter()
            .map(|e| {
                let r = e.record().unwrap();
                (r.id.as_deref(), r.numeric_id)
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some("8.50"), true),
                (Some("8.50"), false),
                (Some("-1"), true),
                (Some("true"), false),
                (None, false),
                (Some("3"), true)
            ]
        );
    }

    #[test]
    fn fields_seen_are_the_keys_of_the_first_ten_objects() {
        let mut data =
            b"\n{bad\n{\"body\":\"x\",\"id\":1}\n[1]\n{\"id\":2,\"title\":\"t\",\"body\":\"y\"}\n"
                .to_vec();
        for i in 0..8 {
            data.extend_from_slice(format!("{{\"f{i}\":0}}\n").as_bytes());
        }
        data.extend_from_slice(b"{\"late\":1}\n");
        let (es, seen) = read_all(&data, None);
        assert_eq!(es.len(), 14);
        assert_eq!(
            seen,
            ["body", "id", "title", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"]
        );
    }

    /// The wanted fields the fast path is checked with: text and id, with and without a
    /// key field, ids only, one field for all three.
    const WANTED: [Wanted<'static>; 6] = [
        Wanted {
            text: "text",
            id: "id",
            key: None,
        },
        Wanted {
            text: "text",
            id: "id",
            key: Some("k"),
        },
        Wanted {
            text: "",
            id: "id",
            key: Some("k"),
        },
        Wanted {
            text: "",
            id: "",
            key: None,
        },
        Wanted {
            text: "k",
            id: "k",
            key: Some("k"),
        },
        Wanted {
            text: "text",
            id: "text",
            key: Some("id"),
        },
    ];

    /// The fast path's answer for `line` (`None` if it gives up), after checking it is
    /// the serde path's whenever there is one.
    fn fast_checked(line: &[u8], wanted: Wanted<'_>) -> Option<Parsed> {
        let json = String::from_utf8_lossy(line);
        let lossy = std::str::from_utf8(line).is_err();
        let fast = parse_fast(&json, lossy, wanted)?;
        let serde = parse_serde(&json, lossy, wanted, None);
        assert_eq!(
            fast, serde,
            "{:?} for text {:?}, id {:?}, key {:?}",
            json, wanted.text, wanted.id, wanted.key
        );
        Some(fast)
    }

    /// The fast path on `line` with text "text" and id "id", checked against serde.
    fn fast(line: &str) -> Option<Parsed> {
        fast_checked(line.as_bytes(), WANTED[0])
    }

    #[test]
    fn the_fast_path_reads_simple_lines() {
        assert_eq!(
            fast(r#"{"id": "a", "text": "b c"}"#),
            Some(text(Some("a"), "b c"))
        );
        assert_eq!(
            fast(r#"{"id": "0-core-client", "text": "Zero-OS 0-core client"}"#),
            Some(Parsed::Text {
                id: Some("0-core-client".into()),
                text: "Zero-OS 0-core client".into(),
                lossy: false,
                key: None,
                numeric_id: false,
            })
        );
        assert_eq!(
            fast(r#"{"text":"line\none \"quoted\" \\ \/ \t\u00e9\u20ac","id":"q\"1"}"#),
            Some(text(
                Some("q\"1"),
                "line\none \"quoted\" \\ / \t\u{e9}\u{20ac}"
            ))
        );
        // A surrogate pair, as Python's `json.dumps` writes an emoji.
        assert_eq!(
            fast(r#"{"text":"smile \ud83d\ude00!"}"#),
            Some(text(None, "smile \u{1F600}!"))
        );
        assert_eq!(fast(" {\"text\":\"t\"}\t\r"), Some(text(None, "t")));
        assert_eq!(
            fast(r#"{"text":"x","id":-17}"#),
            Some(text(Some("-17"), "x"))
        );
        assert_eq!(
            fast(r#"{"text":"x","id":1.50}"#),
            Some(text(Some("1.50"), "x"))
        );
        assert_eq!(
            fast(r#"{"text":"x","id":7.5e00000800000}"#),
            Some(text(Some("7.5e00000800000"), "x"))
        );
        assert_eq!(fast(r#"{"text":"x","id":null}"#), Some(text(None, "x")));
        assert_eq!(
            fast(r#"{"text":"x","id":true}"#),
            Some(text(Some("true"), "x"))
        );
        assert_eq!(
            fast(r#"{"text":"x","id":[1, {"a": [null]}]}"#),
            Some(text(Some(r#"[1, {"a": [null]}]"#), "x"))
        );
        assert_eq!(
            fast(r#"{"meta":{"text":"inner","n":[1.5e3,-0,{}]},"text":"outer","l":[]}"#),
            Some(text(None, "outer"))
        );
        assert_eq!(fast(r#"{"te\u0078t":"x"}"#), Some(text(None, "x")));
        assert_eq!(fast(r#"{"text":"a","text":"b"}"#), Some(text(None, "b")));
        assert_eq!(
            fast("{\"text\":\"caf\u{e9} \u{1F600}\"}"),
            Some(text(None, "caf\u{e9} \u{1F600}"))
        );
        let skip = |line: &str| fast(line).map(skip_reason);
        assert_eq!(skip("{}"), Some(SkipReason::MissingField("text".into())));
        assert_eq!(
            skip(r#"{"text":12}"#),
            Some(SkipReason::FieldNotText("text".into()))
        );
        assert_eq!(
            skip(r#"{"text":[1]}"#),
            Some(SkipReason::FieldNotText("text".into()))
        );
        assert_eq!(
            fast_checked(br#"{"k":5}"#, WANTED[4]).map(skip_reason),
            Some(SkipReason::FieldNotText("k".into()))
        );
        assert_eq!(
            fast_checked(br#"{"k":"v"}"#, WANTED[4]),
            Some(Parsed::Text {
                id: Some("v".into()),
                text: "v".into(),
                lossy: false,
                key: Some("v".into()),
                numeric_id: false,
            })
        );
        assert_eq!(
            fast_checked(br#"{"id": 8.50, "k": "x", "": "t"}"#, WANTED[2]),
            Some(Parsed::Text {
                id: Some("8.50".into()),
                text: String::new(),
                lossy: false,
                key: Some("x".into()),
                numeric_id: true,
            })
        );
        // Replaced invalid UTF-8 is still read by the fast path, and marked.
        assert_eq!(
            fast_checked(b"{\"text\":\"caf\xE9\"}", WANTED[0]),
            Some(lossy_cafe())
        );
    }

    #[test]
    fn the_fast_path_gives_up_on_what_it_cannot_match() {
        for line in [
            // Not one object, or not JSON: serde_json words the error.
            "",
            "[1]",
            "{",
            r#"{"text":"a"} x"#,
            r#"{"text":"a",}"#,
            r#"{"text":"a" "id":1}"#,
            r#"{"text":"a\x"}"#,
            "{\"text\":\"a\u{1}\"}",
            r#"{"text":"a","id":01}"#,
            r#"{"text":"a","id":1.}"#,
            r#"{"text":"a","id":tru}"#,
            r#"{"text":"a","id":[1,]}"#,
            r#"{"text":"a","id":[1}}"#,
            r#"{"text":"a","id":{"a":1]}"#,
            r#"{"text":"a","id":[1]]}"#,
            r#"{"text":"a","id":{1:2}}"#,
            // Lone or reversed surrogate escapes (the full parser's lossy rule).
            r#"{"text":"\ude00\ud83d"}"#,
            r#"{"text":"\ud83d x"}"#,
            r#"{"text":"\ud83d\u0041"}"#,
            r#"{"text":"a","id":"\ud800"}"#,
            r#"{"text":"a","x":"\udc00"}"#,
            // A number in a text-only field that is not a plain integer of 18 digits.
            r#"{"text":1.5}"#,
            r#"{"text":1e400}"#,
            r#"{"text":1234567890123456789}"#,
        ] {
            assert_eq!(fast(line), None, "{line}");
        }
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(65), "]".repeat(65));
        assert_eq!(fast(&deep), None);
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(64), "]".repeat(64));
        assert!(fast(&deep).is_some());
    }

    /// Pieces of JSON string content: mostly plain text and valid escapes; now and then
    /// surrogates, or what makes a string invalid (a raw quote or control byte, a bad
    /// escape).
    fn string_piece() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            100 => proptest::sample::select(vec![
                "a", "b c", "text", "id", "k", "\u{e9}", "\u{1F600}", "\u{7f}", "\\\"", "\\\\",
                "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u0041", "\\u0000",
                "\\u20AC", "\\u0078",
            ]),
            2 => proptest::sample::select(vec!["\\ud83d\\ude00", "\\ud800", "\\udc00", "\\uD83D"]),
            1 => proptest::sample::select(vec![
                "\\x", "\\u12", "\\uzzzz", "\\", "\"", "\u{1}", "\t", "\n",
            ]),
        ]
    }

    fn string_lit() -> impl Strategy<Value = String> {
        proptest::collection::vec(string_piece(), 0..5).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    fn key_lit() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => proptest::sample::select(vec![
                "\"text\"", "\"id\"", "\"k\"", "\"other\"", "\"\"", "\"te\\u0078t\"",
                "\"\\u0069d\"", "\"\\u006B\"",
            ])
            .prop_map(String::from),
            1 => string_lit(),
        ]
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            30 => proptest::sample::select(vec![
                "0", "-0", "1.5", "1e5", "1E+2", "-3e-2", "0.0", "8.50", "123456789012345678",
                "-123456789012345678", "1234567890123456789", "18446744073709551616",
                "7.5e00000800000", "1e400", "-1e400", "1e-400",
            ])
            .prop_map(String::from),
            20 => proptest::num::i64::ANY.prop_map(|n| n.to_string()),
            // Integers beyond u64, and around where f64 overflows (309 digits).
            8 => proptest::sample::select(vec![19, 20, 308, 309, 310, 400])
                .prop_map(|n| "9".repeat(n)),
            1 => proptest::sample::select(vec![
                "01", "-01", "1.", "-", "1e", "1e-", ".5", "+1", "1.5.3", "0x10", "1 2", "-a",
            ])
            .prop_map(String::from),
        ]
    }

    /// JSON whitespace, and now and then a form feed (which is not).
    fn ws() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            300 => proptest::sample::select(vec!["", "", "", " ", "\t", "\n", "\r", " \r\n "]),
            1 => proptest::strategy::Just("\u{c}"),
        ]
    }

    /// A JSON-ish string, number or literal.
    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            60 => string_lit(),
            40 => number(),
            20 => proptest::sample::select(vec!["true", "false", "null"]).prop_map(String::from),
            1 => proptest::sample::select(vec!["tru", "nul", "True", "nan"]).prop_map(String::from),
        ]
    }

    /// A JSON-ish value, nested up to 3 deep.
    fn value() -> impl Strategy<Value = String> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec((ws(), inner.clone(), ws()), 0..4).prop_map(|els| {
                    let els: Vec<String> = els
                        .into_iter()
                        .map(|(a, v, b)| format!("{a}{v}{b}"))
                        .collect();
                    format!("[{}]", els.join(","))
                }),
                proptest::collection::vec((ws(), key_lit(), ws(), inner, ws()), 0..4).prop_map(
                    |ms| {
                        let ms: Vec<String> = ms
                            .into_iter()
                            .map(|(a, k, b, v, c)| format!("{a}{k}{b}:{a}{v}{c}"))
                            .collect();
                        format!("{{{}}}", ms.join(","))
                    }
                ),
            ]
        })
    }

    /// A line holding one object (members with random keys, duplicates likely).
    fn object_line() -> impl Strategy<Value = String> {
        (
            ws(),
            proptest::collection::vec(
                (
                    ws(),
                    key_lit(),
                    ws(),
                    ws(),
                    prop_oneof![2 => scalar(), 1 => value()],
                    ws(),
                ),
                0..5,
            ),
            ws(),
        )
            .prop_map(|(lead, members, trail)| {
                let ms: Vec<String> = members
                    .into_iter()
                    .map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
                    .collect();
                format!("{lead}{{{}}}{trail}", ms.join(","))
            })
    }

    /// A line as generated, or mutated: truncated, a byte inserted, removed or replaced
    /// (which may leave invalid UTF-8).
    fn any_line() -> impl Strategy<Value = Vec<u8>> {
        (
            object_line(),
            0..12u8,
            proptest::sample::select(b"{}[],:\"\\ 0-.eEtn\x01\xE9x".to_vec()),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(line, how, byte, at)| {
                let mut b = line.into_bytes();
                let at = at.index(b.len() + 1);
                match how {
                    1 => b.truncate(at),
                    2 => b.insert(at, byte),
                    3 if at < b.len() => {
                        b.remove(at);
                    }
                    4 if at < b.len() => b[at] = byte,
                    // A closing bracket of the wrong kind.
                    5 => {
                        let closes: Vec<usize> = (0..b.len())
                            .filter(|&i| matches!(b[i], b']' | b'}'))
                            .collect();
                        if !closes.is_empty() {
                            let i = closes[at % closes.len()];
                            b[i] = if b[i] == b']' { b'}' } else { b']' };
                        }
                    }
                    _ => {}
                }
                b
            })
    }

    /// A valid line the fast path must read: no surrogates, no invalid escape, plain
    /// integers only.
    fn simple_line() -> impl Strategy<Value = String> {
        let piece = proptest::sample::select(vec![
            "a",
            "b c",
            "\u{e9}",
            "\u{1F600}",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u00e9",
            "\\u0000",
            "\\u20AC",
        ]);
        let string =
            proptest::collection::vec(piece, 0..5).prop_map(|p| format!("\"{}\"", p.concat()));
        let value = prop_oneof![
            3 => string,
            1 => (-999_999_999_999_999_999i64..=999_999_999_999_999_999).prop_map(|n| n.to_string()),
            1 => proptest::sample::select(vec!["true", "false", "null", "[]", "{}", "[1,{\"a\":\"b\"}]"])
                .prop_map(String::from),
        ];
        let key = proptest::sample::select(vec![
            "\"text\"",
            "\"id\"",
            "\"k\"",
            "\"other\"",
            "\"te\\u0078t\"",
        ]);
        // JSON whitespace only.
        let ws = || proptest::sample::select(vec!["", "", " ", "\t", "\n", "\r", " \r\n "]);
        (
            proptest::collection::vec((ws(), key, ws(), ws(), value, ws()), 0..5),
            ws(),
        )
            .prop_map(|(members, trail)| {
                let ms: Vec<String> = members
                    .into_iter()
                    .map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
                    .collect();
                format!("{{{}}}{trail}", ms.join(","))
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// The eight-bytes-at-a-time string scan finds what a byte-by-byte one does,
        /// wherever in a word the byte is, next to bytes one off (0x1F and 0x20, 0x7F
        /// to 0xA0).
        #[test]
        fn scan_string_is_a_byte_scan(s in proptest::collection::vec(
            prop_oneof![
                8 => proptest::sample::select(b"a \x21\x7f\x80\x9f\xa0\xdc\xff[]n".to_vec()),
                1 => proptest::sample::select(b"\"\\\x00\x01\x1f\x20\t\n".to_vec()),
                1 => any::<u8>(),
            ],
            0..40,
        ), start in 0..3usize) {
            let mut expected = None;
            let mut escaped = false;
            let mut i = start;
            while let Some(&c) = s.get(i) {
                match c {
                    b'"' => {
                        expected = Some((i, escaped));
                        break;
                    }
                    b'\\' => match escape_at(&s, i) {
                        Some((_, len)) => {
                            escaped = true;
                            i += len;
                        }
                        None => break,
                    },
                    0..0x20 => break,
                    _ => i += 1,
                }
            }
            proptest::prop_assert_eq!(scan_string(&s, start), expected);
        }

        /// Whatever the line, the fast path answers as the serde path does, or not at all.
        #[test]
        fn the_fast_path_agrees_with_serde(line in any_line()) {
            for wanted in WANTED {
                fast_checked(&line, wanted);
            }
        }

        /// Simple valid lines are read by the fast path.
        #[test]
        fn the_fast_path_reads_simple_valid_lines(line in simple_line()) {
            for wanted in WANTED {
                proptest::prop_assert!(fast_checked(line.as_bytes(), wanted).is_some(), "{}", line);
            }
        }
    }
}
