//! The command line resolved into plain settings, once, before any work: what the layers
//! below the commands read instead of clap's argument structs.

use neardup_io::documents::InputOptions;

use crate::args::{InputFlags, OnError};

/// The input options, as given (an option left out stays `None`, so the document table
/// can refuse one that does not fit an input's format); what the run sets (the key field,
/// the empty-text test, raw bytes, the skipped list) is set by the run.
impl From<InputFlags> for InputOptions {
    fn from(f: InputFlags) -> Self {
        let mut options = InputOptions::new(f.inputs);
        options.format = f.format;
        options.text_field = f.text_field;
        options.id_field = f.id_field;
        options.text_columns = f.text_columns;
        options.id_column = f.id_column;
        options.max_record_bytes = f.max_record_bytes;
        options.fail_on_error = f.on_error == OnError::Fail;
        options.tsv_escapes = f.tsv_escapes;
        options.quote = f.quote;
        options.delimiter = f.delimiter;
        options.hidden = f.hidden;
        options.globs = f.globs;
        options.follow = f.follow;
        options
    }
}
