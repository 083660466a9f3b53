//! Small HTML helpers: escaping, truncation and number formatting.
//!
//! ```
//! use neardup_report::html::{escape, seconds, thousands};
//! assert_eq!(escape("<b>\"x\"</b>"), "&lt;b&gt;&quot;x&quot;&lt;/b&gt;");
//! assert_eq!(thousands(1_234_567), "1,234,567");
//! assert_eq!(seconds(12.34), "12.3 s");
//! ```

use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values (both quote kinds).
/// Control characters other than tab and newline become U+FFFD, so no input byte can
/// change the document's structure.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text);
    out
}

/// [`escape`], appending to `out`.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// The first `max_chars` characters of `text` and how many characters were cut off.
pub fn truncate_chars(text: &str, max_chars: usize) -> (&str, usize) {
    match text.char_indices().nth(max_chars) {
        None => (text, 0),
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
    }
}

/// `text` truncated to `max_chars` and escaped, with an ellipsis and a note of what was cut.
pub fn truncated(text: &str, max_chars: usize) -> String {
    let (shown, cut) = truncate_chars(text, max_chars);
    let mut out = escape(shown);
    if cut > 0 {
        let _ = write!(
            out,
            "\u{2026} <span class=\"cut\">({} more characters)</span>",
            thousands(cut as u64)
        );
    }
    out
}

/// `n` with its unit, singular for one: "1 pair", "2,140 pairs".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// Groups digits by thousands: 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let lead = match s.len() % 3 {
        0 => 3.min(s.len()),
        r => r,
    };
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    out.push_str(&s[..lead]);
    for group in s.as_bytes()[lead..].chunks(3) {
        out.push(',');
        out.extend(group.iter().map(|&b| b as char));
    }
    out
}

/// Seconds with a precision that suits the magnitude: "0.004 s", "12.3 s".
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "–".to_string()
    } else if s < 10.0 {
        format!("{s:.3} s")
    } else {
        format!("{s:.1} s")
    }
}

/// A similarity (or any value in [0, 1]) with three decimals, or "–" when absent.
pub fn similarity(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.3}"),
        _ => "–".to_string(),
    }
}

/// A two-column table of names and values (both escaped); `numeric` right-aligns values.
pub fn key_value_table(rows: &[(String, String)], numeric: bool) -> String {
    let mut out = String::from("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td{}>{}</td></tr>",
            escape(k),
            if numeric { " class=\"num\"" } else { "" },
            escape(v)
        );
    }
    out.push_str("</tbody></table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
        assert_eq!(escape("a\u{0}b\u{7}c\td\ne"), "a\u{FFFD}b\u{FFFD}c\td\ne");
    }

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé", 3));
        assert_eq!(truncate_chars("héllo", 5), ("héllo", 0));
        assert_eq!(truncate_chars("", 3), ("", 0));
        assert_eq!(
            truncated("<b>bold</b>", 3),
            "&lt;b&gt;\u{2026} <span class=\"cut\">(8 more characters)</span>"
        );
    }

    #[test]
    fn formats_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345), "12,345");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(seconds(0.0042), "0.004 s");
        assert_eq!(seconds(12.34), "12.3 s");
        assert_eq!(similarity(Some(0.8)), "0.800");
        assert_eq!(similarity(None), "–");
    }
}
