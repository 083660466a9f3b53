//! Text normalization before shingling, documented on [`Normalization`].

use std::borrow::Cow;

use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

use crate::error::{by_name, Error};

/// Text normalization before shingling: what counts as "the same text".
///
/// Four levels, each including the one before it:
///
/// | level | what it does | example |
/// |---|---|---|
/// | [`None`](Normalization::None) | nothing: bytes as given | `"Café  "` stays `"Café  "` |
/// | [`Basic`](Normalization::Basic) | Unicode lowercase, runs of whitespace collapsed to one space, trimmed | `" Hello\tWORLD "` → `"hello world"` |
/// | [`Nfkc`](Normalization::Nfkc) (default) | Unicode NFKC (compatibility composition), then basic | `"ＡＩ１２３％"` → `"ai123%"`, `"ﬁ"` → `"fi"`, `"e\u{301}"` (NFD) → `"é"` |
/// | [`Aggressive`](Normalization::Aggressive) | NFKC, diacritics folded (NFD, nonspacing marks dropped, recomposed), punctuation (general category P*) removed, then basic | `"Perché, “così”!"` → `"perche cosi"` |
///
/// Symbols (general category S*: `$ + = < > ^ | ~ ° © €`, emoji) are kept by every level:
/// unlike punctuation, which is mostly typographic variation (quote styles, dashes,
/// ellipses), a symbol carries meaning (`$100` is not `€100`, `1+1=2` is not `11=2`).
///
/// ASCII text takes a byte-by-byte fast path that gives exactly the general path's result
/// (NFKC of ASCII is itself; ASCII has no nonspacing marks).
///
/// ```
/// use neardup::Normalization;
/// assert_eq!(Normalization::Nfkc.apply("Ｃａｆｅ\u{301}  ２４"), "café 24");
/// assert_eq!(Normalization::Aggressive.apply("Café, 24!"), "cafe 24");
/// assert_eq!(Normalization::Basic.apply("ＡＢ"), "ａｂ");
/// ```
///
/// Printed and parsed by its [name](Normalization::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Normalization {
    /// The text as given: case, spacing and Unicode forms all count.
    #[cfg_attr(feature = "clap", value(name = "none"))]
    None,
    /// Unicode lowercase, runs of Unicode whitespace collapsed to one space, trimmed.
    #[cfg_attr(feature = "clap", value(name = "basic"))]
    Basic,
    /// Unicode NFKC, then basic (the default): canonically equivalent text (NFC and NFD)
    /// and compatibility forms (full-width, ligatures, superscripts) become the same.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "nfkc"))]
    Nfkc,
    /// NFKC and basic, with diacritics folded (é → e) and punctuation removed; symbols
    /// ($, €, +) are kept.
    ///
    /// That is [`Nfkc`](Normalization::Nfkc), then NFD with the nonspacing marks (Mn)
    /// dropped and NFC, punctuation (P*) removed, symbols (S*) kept. It also drops the
    /// nonspacing marks of other scripts (Thai vowels above and below, Arabic and Hebrew
    /// vowel points, Devanagari virama).
    #[cfg_attr(feature = "clap", value(name = "aggressive"))]
    Aggressive,
}

impl Normalization {
    /// The default level if `on`, else [`Normalization::None`]: what an on/off switch
    /// such as [`ConfigBuilder::normalize`](crate::ConfigBuilder::normalize) means.
    pub fn default_or_none(on: bool) -> Self {
        if on {
            Normalization::default()
        } else {
            Normalization::None
        }
    }

    /// Every level, weakest first.
    pub const ALL: [Normalization; 4] = [
        Normalization::None,
        Normalization::Basic,
        Normalization::Nfkc,
        Normalization::Aggressive,
    ];

    /// The level's name: `none`, `basic`, `nfkc`, `aggressive`.
    pub fn name(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::Basic => "basic",
            Normalization::Nfkc => "nfkc",
            Normalization::Aggressive => "aggressive",
        }
    }

    /// The text normalized at this level (borrowed when the level is `None`).
    pub fn apply(self, text: &str) -> Cow<'_, str> {
        match self {
            Normalization::None => Cow::Borrowed(text),
            Normalization::Aggressive if text.is_ascii() => {
                Cow::Owned(normalize_ascii::<true>(text.as_bytes()))
            }
            _ if text.is_ascii() => Cow::Owned(normalize_ascii::<false>(text.as_bytes())),
            Normalization::Basic => Cow::Owned(basic(text.chars(), false)),
            Normalization::Nfkc => Cow::Owned(nfkc(text)),
            Normalization::Aggressive => Cow::Owned(aggressive(text)),
        }
    }
}

by_name!(Normalization, Error::InvalidNormalization);

/// The [`Basic`](Normalization::Basic) level: Unicode lowercase, runs of Unicode whitespace
/// collapsed to one space, trimmed.
pub fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return normalize_ascii::<false>(text.as_bytes());
    }
    basic(text.chars(), false)
}

/// NFKC then basic, piece by piece: ASCII runs go straight through; each non-ASCII run,
/// with the ASCII character before it (a mark may compose with it), is NFKC-normalized only
/// if the quick check says it may not be already. Splitting before an ASCII character is
/// exact: it has combining class 0, is never the second of a composition, and is its own
/// NFKC.
fn nfkc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Basic::new(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii() {
            i += 1;
        }
        if i == bytes.len() {
            out.push_ascii(&bytes[start..]);
            break;
        }
        let run = if i > start { i - 1 } else { i };
        out.push_ascii(&bytes[start..run]);
        while i < bytes.len() && !bytes[i].is_ascii() {
            i += 1;
        }
        let piece = &text[run..i];
        if is_nfkc_quick(piece.chars()) == IsNormalized::Yes {
            out.push_chars(piece.chars());
        } else {
            out.push_chars(piece.nfkc());
        }
    }
    out.out
}

/// Builds the basic level's output from pieces.
struct Basic {
    out: String,
    pending_space: bool,
}

impl Basic {
    fn new(capacity: usize) -> Self {
        Basic {
            out: String::with_capacity(capacity),
            pending_space: false,
        }
    }

    fn push_ascii(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if is_ascii_unicode_whitespace(b) {
                self.pending_space = !self.out.is_empty();
            } else {
                if self.pending_space {
                    self.out.push(' ');
                    self.pending_space = false;
                }
                self.out.push(b.to_ascii_lowercase() as char);
            }
        }
    }

    fn push_chars(&mut self, chars: impl Iterator<Item = char>) {
        for c in chars {
            if c.is_whitespace() {
                self.pending_space = !self.out.is_empty();
            } else {
                if self.pending_space {
                    self.out.push(' ');
                    self.pending_space = false;
                }
                self.out.extend(c.to_lowercase());
            }
        }
    }
}

fn aggressive(text: &str) -> String {
    // NFD(NFKC(x)) is NFKD(x): decompose fully, drop the nonspacing marks, recompose.
    let folded: String = text
        .nfkd()
        .filter(|&c| !is_nonspacing_mark(c))
        .nfc()
        .collect();
    basic(folded.chars(), true)
}

fn is_nonspacing_mark(c: char) -> bool {
    !c.is_ascii() && c.general_category() == unicode_properties::GeneralCategory::NonspacingMark
}

fn is_punctuation(c: char) -> bool {
    c.general_category_group() == GeneralCategoryGroup::Punctuation
}

/// Lowercases, collapses whitespace and trims (and removes punctuation if `strip`).
fn basic(chars: impl Iterator<Item = char>, strip: bool) -> String {
    let mut out = String::new();
    let mut pending_space = false;
    for c in chars {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else if strip && is_punctuation(c) {
            continue;
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// What `char::is_whitespace` accepts in ASCII: `\t \n \x0B \x0C \r` and space.
pub(crate) const fn is_ascii_unicode_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// ASCII punctuation in the Unicode sense (P*): `is_ascii_punctuation` less the symbols
/// (S*) `$ + < = > ^ ` | ~`.
pub(crate) const fn is_ascii_unicode_punctuation(b: u8) -> bool {
    b.is_ascii_punctuation()
        && !matches!(
            b,
            b'$' | b'+' | b'<' | b'=' | b'>' | b'^' | b'`' | b'|' | b'~'
        )
}

/// [`basic`] for ASCII text, byte by byte (ASCII whitespace is Unicode whitespace
/// restricted to ASCII, so the result is the same); removes punctuation if `STRIP`.
fn normalize_ascii<const STRIP: bool>(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    normalize_ascii_into::<STRIP>(bytes, &mut out);
    // Only ASCII bytes were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Each ASCII byte as the basic level writes it: lowercased, whitespace as a space.
const NORMALIZED_ASCII: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if is_ascii_unicode_whitespace(c) {
            b' '
        } else {
            c.to_ascii_lowercase()
        };
        b += 1;
    }
    t
};

/// The ASCII bytes the aggressive level drops.
const DROPPED_ASCII: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = is_ascii_unicode_punctuation(b as u8);
        b += 1;
    }
    t
};

/// Replaces `out` with [`normalize_ascii`]'s bytes. Every byte is written and the length
/// advanced by a flag, never a branch: which bytes are spaces is as good as random, and a
/// branch on it was mispredicted once a word.
pub(crate) fn normalize_ascii_into<const STRIP: bool>(bytes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.resize(bytes.len(), 0);
    let mut len = 0;
    // True at the start too, so leading whitespace writes nothing.
    let mut after_space = true;
    for &b in bytes {
        let c = NORMALIZED_ASCII[b as usize];
        out[len] = c;
        let space = c == b' ';
        let dropped = STRIP && DROPPED_ASCII[b as usize];
        len += (!dropped & !(space & after_space)) as usize;
        // A dropped byte leaves a whitespace run unbroken: "a , b" is "a b".
        after_space = (after_space & dropped) | (space & !dropped);
    }
    // A trailing space is the one whitespace run not followed by a kept byte.
    len -= (after_space && len > 0) as usize;
    out.truncate(len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use Normalization::*;

    #[test]
    fn basic_lowercases_collapses_and_trims() {
        assert_eq!(
            normalize("  Hello\t\tWORLD \n\u{00A0}Ünïcode  "),
            "hello world ünïcode"
        );
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" \t\n "), "");
        assert_eq!(normalize("İ"), "i\u{307}");
        assert_eq!(Basic.apply("  A  B "), "a b");
        assert_eq!(None.apply("  A  B "), "  A  B ");
    }

    #[test]
    fn nfkc_makes_nfd_and_nfc_the_same() {
        let nfc = "Perché è così città più";
        let nfd: String = nfc.nfd().collect();
        assert_ne!(nfc, nfd);
        assert_ne!(Basic.apply(nfc), Basic.apply(&nfd));
        assert_eq!(Nfkc.apply(nfc), Nfkc.apply(&nfd));
        assert_eq!(Nfkc.apply(&nfd), "perché è così città più");
    }

    #[test]
    fn nfkc_makes_full_width_half_width() {
        assert_eq!(Nfkc.apply("ＡＩ技術１２３％"), "ai技術123%");
        assert_eq!(Nfkc.apply("ＡＩ技術１２３％"), Nfkc.apply("AI技術123%"));
        assert_eq!(Basic.apply("ＡＩ技術１２３％"), "ａｉ技術１２３％");
        // Half-width katakana become full-width.
        assert_eq!(Nfkc.apply("ｶﾀｶﾅ"), "カタカナ");
    }

    #[test]
    fn nfkc_expands_ligatures_and_compatibility_forms() {
        assert_eq!(Nfkc.apply("ﬁne ﬂow"), "fine flow");
        assert_eq!(Nfkc.apply("x² ½ №"), "x2 1⁄2 no");
        assert_eq!(Nfkc.apply("Ⅻ"), "xii");
        // The non-breaking and ideographic spaces are spaces.
        assert_eq!(Nfkc.apply("a\u{3000}\u{a0}b"), "a b");
    }

    #[test]
    fn aggressive_folds_diacritics_and_removes_punctuation() {
        assert_eq!(Aggressive.apply("Perché, “così”!"), "perche cosi");
        assert_eq!(
            Aggressive.apply("Ça, c'est l'été — naïve…"),
            "ca cest lete naive"
        );
        assert_eq!(Aggressive.apply("Ｃａｆé！"), "cafe");
        let nfd: String = "Ångström".nfd().collect();
        assert_eq!(Aggressive.apply(&nfd), "angstrom");
        // Symbols stay.
        assert_eq!(Aggressive.apply("$5 + €3 = 8°, 100%"), "$5 + €3 = 8° 100");
        // Punctuation between spaces leaves one space.
        assert_eq!(Aggressive.apply("a - b"), "a b");
        // Letters that are not a base plus a mark stay.
        assert_eq!(Aggressive.apply("Łódź straße ø"), "łodz straße ø");
        assert_eq!(Aggressive.apply("日本語、テスト。"), "日本語テスト");
    }

    #[test]
    fn levels_parse_and_print_by_name() {
        crate::error::assert_named(&Normalization::ALL);
        let names = Normalization::ALL.map(|n| n.to_string());
        assert_eq!(names, ["none", "basic", "nfkc", "aggressive"]);
        assert_eq!(
            "nfd".parse::<Normalization>(),
            Err(Error::InvalidNormalization("nfd".into()))
        );
        assert_eq!(Normalization::default(), Nfkc);
    }

    fn general(level: Normalization, text: &str) -> String {
        match level {
            None => text.to_string(),
            Basic => basic(text.chars(), false),
            Nfkc => basic(text.nfkc(), false),
            Aggressive => aggressive(text),
        }
    }

    fn basic_by_definition(text: &str) -> String {
        let mut out = String::new();
        for word in text.split(char::is_whitespace).filter(|w| !w.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn ascii_fast_path_equals_the_general_path(
            text in "[\\x00-\\x7f]{0,40}|[ a-cA-C.,!;\t\n\x0b\x0c\r]{0,24}"
        ) {
            for level in Normalization::ALL {
                proptest::prop_assert_eq!(level.apply(&text), general(level, &text));
            }
        }

        #[test]
        fn nfkc_quick_check_equals_the_general_path(text in "\\PC{0,30}") {
            proptest::prop_assert_eq!(Nfkc.apply(&text), general(Nfkc, &text));
        }

        #[test]
        fn nfkc_by_pieces_equals_the_general_path(
            text in "[a-eAE \t\u{300}-\u{303}\u{327}\u{0344}éÅＡｂﬁ\u{a0}\u{1100}\u{1161}\u{11a8}가ᄀ]{0,40}"
        ) {
            proptest::prop_assert_eq!(Nfkc.apply(&text), general(Nfkc, &text));
        }

        #[test]
        fn basic_matches_its_definition(text in "\\PC{0,30}") {
            proptest::prop_assert_eq!(normalize(&text), basic_by_definition(&text));
            proptest::prop_assert_eq!(Basic.apply(&text), basic_by_definition(&text));
        }

        #[test]
        fn every_level_is_idempotent(text in "\\PC{0,30}") {
            for level in [None, Basic] {
                let once = level.apply(&text).into_owned();
                proptest::prop_assert_eq!(level.apply(&once), once.as_str());
            }
        }
    }
}
