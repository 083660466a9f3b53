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
use crate::line_source::{line_content, take_raw, LineSource, NextLine};
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
                raw: take_raw(&mut self.buf),
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
    let text_field = wanted.text;
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
    let mut de = serde_json::Deserializer::from_str(json);
    let seed = WantedSeed { wanted, seen };
    let fields = match seed.deserialize(&mut de).and_then(|f| de.end().map(|()| f)) {
        Ok(fields) => fields,
        Err(e) => {
            return Parsed::Skip {
                id: None,
                reason: SkipReason::MalformedJson(json_message(&e)),
            }
        }
    };
    let numeric_id = fields.numeric_id;
    let lossy = lossy || fields.id_lossy;
    let id = fields.id.flatten();
    match fields.text {
        Some(TextValue::Text(text)) => Parsed::Text {
            id,
            text,
            lossy,
            key: fields.key,
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
            key: fields.key,
            numeric_id,
        },
        None => Parsed::Skip {
            id,
            reason: SkipReason::MissingField(text_field.to_string()),
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open::{ErrorContext, Input};
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
        assert_eq!(
            p,
            Parsed::Text {
                id: None,
                text: "caf\u{FFFD}".into(),
                lossy: true,
                key: None,
                numeric_id: false,
            }
        );
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
}
