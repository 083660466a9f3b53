//! The csv reader on arbitrary bytes, with the default options and with options (field
//! names, record-size limit) taken from the input. See `neardup_fuzz` for the checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup_io::Format;

fuzz_target!(|data: &[u8]| {
    neardup_fuzz::reader_target(data, Format::Csv);
});
