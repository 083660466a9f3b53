//! The command line resolved into plain settings, once, before any work: what the layers
//! below the commands read instead of clap's argument structs.

use std::path::PathBuf;

use neardup_io::Format;

use crate::args::{InputFlags, OnError};

/// Where documents come from and how they are read: the input options, as given (an
/// option left out is `None`, so a reader can refuse one that does not fit its format),
/// plus what the run sets.
#[derive(Debug, Clone)]
pub struct InputSettings {
    pub inputs: Vec<PathBuf>,
    pub format: Option<Format>,
    pub text_field: Option<String>,
    pub id_field: Option<String>,
    pub text_columns: Option<String>,
    pub id_column: Option<String>,
    pub max_record_bytes: usize,
    /// `--on-error fail`: a malformed record stops the run.
    pub fail_on_error: bool,
    pub tsv_escapes: bool,
    pub quote: Option<u8>,
    pub delimiter: Option<u8>,
    pub hidden: bool,
    pub globs: Vec<String>,
    pub follow: bool,
    /// The field (JSONL) or column (CSV/TSV) whose value each record carries as its key
    /// (set from --keep-by).
    pub key_field: Option<String>,
    /// The shingler the documents will be compared with, when reading may skip as
    /// `empty` a record it gives no shingles (set by the run).
    pub empty_under: Option<neardup::Shingler>,
}

impl From<InputFlags> for InputSettings {
    fn from(f: InputFlags) -> Self {
        InputSettings {
            inputs: f.inputs,
            format: f.format,
            text_field: f.text_field,
            id_field: f.id_field,
            text_columns: f.text_columns,
            id_column: f.id_column,
            max_record_bytes: f.max_record_bytes,
            fail_on_error: f.on_error == OnError::Fail,
            tsv_escapes: f.tsv_escapes,
            quote: f.quote,
            delimiter: f.delimiter,
            hidden: f.hidden,
            globs: f.globs,
            follow: f.follow,
            key_field: None,
            empty_under: None,
        }
    }
}

#[cfg(test)]
impl InputSettings {
    /// The inputs with every other option at its default.
    pub fn new(inputs: Vec<PathBuf>) -> Self {
        InputSettings {
            inputs,
            format: None,
            text_field: None,
            id_field: None,
            text_columns: None,
            id_column: None,
            max_record_bytes: neardup_io::DEFAULT_MAX_RECORD_BYTES,
            fail_on_error: false,
            tsv_escapes: false,
            quote: None,
            delimiter: None,
            hidden: false,
            globs: Vec::new(),
            follow: false,
            key_field: None,
            empty_under: None,
        }
    }
}
