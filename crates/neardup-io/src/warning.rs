//! Warnings: things a reader read as asked but that look like a mistake in the input.

use std::fmt;

/// Something in the input that was read, but that may not mean what it seems: the
/// caller should show it to the user. Collected by the reader and taken with
/// [`Reader::take_warnings`](crate::Reader::take_warnings).
///
/// ```
/// use neardup_io::{Warning, WarningKind};
///
/// let w = Warning {
///     source: "listings.csv".into(),
///     line: 7,
///     kind: WarningKind::LongQuotedField { lines: 250, to_end: false },
/// };
/// assert_eq!(
///     w.to_string(),
///     "listings.csv:7: a quoted field opened here runs 250 lines; is a quote stray?"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The input as given (`-` for standard input).
    pub source: String,
    /// The 1-based line the warning is about.
    pub line: u64,
    /// What looks wrong.
    pub kind: WarningKind,
}

/// What a [`Warning`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// CSV (or TSV read with a quote byte): a quoted field that opens on
    /// [`Warning::line`] spans more than [`LONG_QUOTED_FIELD_LINES`] lines, or is never
    /// closed (`to_end`; that record is also skipped as
    /// [`SkipReason::UnclosedQuote`](crate::SkipReason::UnclosedQuote)). Usually a stray
    /// quote at the start of an unquoted field, which makes the parser read the rows
    /// after it as one field.
    LongQuotedField {
        /// The lines the field spans, from the line of its opening quote.
        lines: u64,
        /// True if the field is still open at the end of the input.
        to_end: bool,
    },
}

/// A quoted field spanning more lines than this is reported as a
/// [`WarningKind::LongQuotedField`].
pub const LONG_QUOTED_FIELD_LINES: u64 = 100;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.source, self.line)?;
        match &self.kind {
            WarningKind::LongQuotedField { lines, to_end } => {
                let end = if *to_end {
                    " to the end of the input"
                } else {
                    ""
                };
                write!(
                    f,
                    "a quoted field opened here runs {lines} lines{end}; is a quote stray?"
                )
            }
        }
    }
}
