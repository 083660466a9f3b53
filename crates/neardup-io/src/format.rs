//! Input formats and how they are recognised from a path or a name.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::Error;

/// The layout of an input (and of the deduplicated output, which keeps the input's).
///
/// With the `clap` feature it is a `clap::ValueEnum` under its [names](Format::name),
/// its variants' first paragraphs as their help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// One JSON object per line; the text is a string field (`text` by default).
    #[cfg_attr(feature = "clap", value(name = "jsonl"))]
    Jsonl,
    /// Comma-separated values with a header row.
    #[cfg_attr(feature = "clap", value(name = "csv"))]
    Csv,
    /// Tab-separated values with a header row, as the format is defined (IANA
    /// `text/tab-separated-values`): no quoting at all; a field ends at a tab or a line
    /// end, a row at `\n` or `\r\n`, so a `"` is an ordinary character. Escapes `\t`,
    /// `\n`, `\r`, `\\` are decoded only with
    /// [`ReadOptions::tsv_escapes`](crate::ReadOptions::tsv_escapes); CSV-style quoting
    /// only with a [`ReadOptions::quote`](crate::ReadOptions::quote) byte.
    #[cfg_attr(feature = "clap", value(name = "tsv"))]
    Tsv,
    /// One document per line, optionally `ID<TAB>TEXT`.
    #[cfg_attr(feature = "clap", value(name = "lines"))]
    Lines,
    /// A directory tree; every regular file is one document.
    ///
    /// A file that starts with a UTF-16 BOM is decoded as UTF-16. Any other file is
    /// **binary** (skipped as [`SkipReason::Binary`](crate::SkipReason::Binary)) if its
    /// first 8 KiB hold a NUL byte (images, archives, UTF-16/32 without a BOM) or are
    /// more than 30 % control bytes (other than tab, line feed, carriage return, form
    /// feed, escape) and invalid UTF-8 (random or compressed bytes, text in a legacy
    /// 8-bit encoding that is mostly non-ASCII); otherwise it is UTF-8 text, decoded
    /// lossily.
    ///
    /// Without a format asked for, a directory whose files all name a format of records
    /// (`.jsonl`, `.csv`, `.tsv`, `.parquet`, ..., optionally `.gz`/`.zst`) is read as a
    /// folder of shards instead, each file its own input
    /// ([`documents::shards`](crate::documents::shards)); asking for this format reads it
    /// one document per file all the same.
    #[cfg_attr(feature = "clap", value(name = "dir"))]
    Dir,
    /// Apache Parquet: a row is a record; `--text-field` and `--id-field` name columns (a
    /// dotted path reaches into a struct). Only those columns are decoded, a batch of rows
    /// at a time; it is read from a file, not standard input.
    #[cfg_attr(feature = "clap", value(name = "parquet"))]
    Parquet,
}

impl Format {
    /// Every format, in the order the command line lists them.
    pub const ALL: [Format; 6] = [
        Format::Jsonl,
        Format::Csv,
        Format::Tsv,
        Format::Lines,
        Format::Dir,
        Format::Parquet,
    ];

    /// Guesses the format of `path` without reading it.
    ///
    /// An existing directory is [`Format::Dir`]. Otherwise the file name decides,
    /// ignoring ASCII case and a trailing `.gz` or `.zst`: `.jsonl`, `.ndjson` and `.json`
    /// are [`Format::Jsonl`]; `.csv` is [`Format::Csv`]; `.tsv` and `.tab` are
    /// [`Format::Tsv`]; `.parquet` and `.pq` are [`Format::Parquet`]; anything else (including `-`, standard input) is
    /// [`Format::Lines`]. [`open`](crate::open) sniffs the content of standard input and
    /// of a file without a known extension ([`Format::from_extension`] is `None`)
    /// instead.
    ///
    /// ```
    /// use neardup_io::Format;
    /// use std::path::Path;
    ///
    /// assert_eq!(Format::detect(Path::new("corpus.jsonl.gz")), Format::Jsonl);
    /// assert_eq!(Format::detect(Path::new("listings.TSV")), Format::Tsv);
    /// assert_eq!(Format::detect(Path::new("notes.txt")), Format::Lines);
    /// ```
    pub fn detect(path: &Path) -> Format {
        if path.is_dir() {
            return Format::Dir;
        }
        Format::from_file_name(path)
    }

    /// Like [`Format::detect`] but from the name alone, without looking at the disk.
    pub fn from_file_name(path: &Path) -> Format {
        Format::from_extension(path).unwrap_or(Format::Lines)
    }

    /// The format a file name's extension names, ignoring ASCII case and a trailing
    /// `.gz` or `.zst`: [`Format::Jsonl`] for `.jsonl`, `.ndjson`, `.json`;
    /// [`Format::Csv`] for `.csv`; [`Format::Tsv`] for `.tsv`, `.tab`; [`Format::Lines`]
    /// for `.txt`, `.text`; [`Format::Parquet`] for `.parquet`, `.pq`.
    /// `None` for any other name (`batch_aa` from `split`, `notes.md`, `-`): a file
    /// that [`open`](crate::open) reads by its content, as it reads standard input.
    ///
    /// ```
    /// use neardup_io::Format;
    /// use std::path::Path;
    ///
    /// assert_eq!(Format::from_extension(Path::new("a.TXT.gz")), Some(Format::Lines));
    /// assert_eq!(Format::from_extension(Path::new("a.jsonl.zst")), Some(Format::Jsonl));
    /// assert_eq!(Format::from_extension(Path::new("batch_aa")), None);
    /// ```
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name
            .strip_suffix(".gz")
            .or_else(|| name.strip_suffix(".zst"))
            .unwrap_or(&name);
        let (_, ext) = name.rsplit_once('.')?;
        match ext {
            "jsonl" | "ndjson" | "json" => Some(Format::Jsonl),
            "csv" => Some(Format::Csv),
            "tsv" | "tab" => Some(Format::Tsv),
            "txt" | "text" => Some(Format::Lines),
            "parquet" | "pq" => Some(Format::Parquet),
            _ => None,
        }
    }

    /// The format's name as the command line spells it (`jsonl`, `csv`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Lines => "lines",
            Format::Dir => "dir",
            Format::Parquet => "parquet",
        }
    }

    /// True for the formats with a header row (CSV and TSV).
    pub fn has_header(self) -> bool {
        matches!(self, Format::Csv | Format::Tsv)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    /// Parses `jsonl`, `csv`, `tsv`, `lines`, `dir` or `parquet` (ASCII case ignored;
    /// `ndjson` and `json` are accepted for `jsonl`, `txt` and `text` for `lines`, `pq`
    /// for `parquet`).
    fn from_str(s: &str) -> Result<Format, Error> {
        match s.to_ascii_lowercase().as_str() {
            "jsonl" | "ndjson" | "json" => Ok(Format::Jsonl),
            "csv" => Ok(Format::Csv),
            "tsv" => Ok(Format::Tsv),
            "lines" | "txt" | "text" => Ok(Format::Lines),
            "dir" => Ok(Format::Dir),
            "parquet" | "pq" => Ok(Format::Parquet),
            _ => Err(Error::UnknownFormat(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Format {
        Format::from_file_name(Path::new(s))
    }

    #[test]
    fn detects_from_extension() {
        assert_eq!(name("a.jsonl"), Format::Jsonl);
        assert_eq!(name("a.ndjson"), Format::Jsonl);
        assert_eq!(name("a.json"), Format::Jsonl);
        assert_eq!(name("dir/a.csv"), Format::Csv);
        assert_eq!(name("a.tsv"), Format::Tsv);
        assert_eq!(name("a.tab"), Format::Tsv);
        assert_eq!(name("a.txt"), Format::Lines);
        assert_eq!(name("README"), Format::Lines);
        assert_eq!(name("-"), Format::Lines);
        assert_eq!(name(""), Format::Lines);
    }

    #[test]
    fn only_known_extensions_name_a_format() {
        let ext = |s: &str| Format::from_extension(Path::new(s));
        assert_eq!(ext("a.jsonl"), Some(Format::Jsonl));
        assert_eq!(ext("a.txt"), Some(Format::Lines));
        assert_eq!(ext("a.text.GZ"), Some(Format::Lines));
        for unknown in [
            "batch_aa", "README", "notes.md", "a.gz", "a.zst", "-", "", ".gz", "x.log",
        ] {
            assert_eq!(ext(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn strips_gz_and_ignores_case() {
        assert_eq!(name("a.jsonl.gz"), Format::Jsonl);
        assert_eq!(name("A.CSV.GZ"), Format::Csv);
        assert_eq!(name("a.tsv.gz"), Format::Tsv);
        assert_eq!(name("a.gz"), Format::Lines);
        assert_eq!(name(".gz"), Format::Lines);
        assert_eq!(name("a.txt.gz"), Format::Lines);
        assert_eq!(name("a.jsonl.zst"), Format::Jsonl);
        assert_eq!(name("A.CSV.ZST"), Format::Csv);
        assert_eq!(name("a.zst"), Format::Lines);
        assert_eq!(name("a.parquet"), Format::Parquet);
        assert_eq!(name("a.PQ"), Format::Parquet);
    }

    #[test]
    fn detects_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Format::detect(dir.path()), Format::Dir);
        let sub = dir.path().join("x.jsonl");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(Format::detect(&sub), Format::Dir);
        assert_eq!(Format::detect(&dir.path().join("missing.csv")), Format::Csv);
    }

    #[test]
    fn parses_names_and_round_trips_display() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("JSONL".parse::<Format>().unwrap(), Format::Jsonl);
        assert_eq!("ndjson".parse::<Format>().unwrap(), Format::Jsonl);
        assert_eq!("PQ".parse::<Format>().unwrap(), Format::Parquet);
        let err = "avro".parse::<Format>().unwrap_err();
        assert!(err.to_string().contains("avro"), "{err}");
    }
}
