//! Arbitrary bytes behind the gzip magic: the decoder's errors must be clean `Gzip`
//! errors naming the input, never a panic or a hang, whatever the format behind it.
//! Half the inputs are valid gzip members of arbitrary bytes (so the readers behind the
//! decoder are reached too), possibly cut short or followed by garbage.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use neardup_io::{Error, Format, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let format = [Format::Jsonl, Format::Csv, Format::Tsv, Format::Lines][selector as usize % 4];
    let mut opts = ReadOptions::default().with_format(format);
    if selector & 0x80 != 0 {
        // Sniff the format (JSONL or lines) like standard input.
        opts.format = None;
    }
    let input = if selector & 0x40 != 0 {
        // A valid member of `rest`, then cut or extended by the next selector bits.
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(rest).unwrap();
        let mut gz = enc.finish().unwrap();
        match selector & 0x30 {
            0x10 => gz.truncate(gz.len() * 2 / 3),
            0x20 => gz.extend_from_slice(&rest[..rest.len().min(8)]),
            0x30 => gz.extend_from_slice(&gz.clone()), // two members
            _ => {}
        }
        gz
    } else {
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(rest);
        gz
    };
    let Some(out) = neardup_fuzz::read(&input, &opts, true) else {
        return;
    };
    if let Some(e) = &out.error {
        assert!(matches!(e, Error::Gzip { line: Some(_), .. }), "{e:?}");
        assert!(e.to_string().starts_with("fuzz:"), "{e}");
    }
    if selector & 0x70 == 0x40 {
        // An intact member: read exactly like the plain bytes.
        assert!(out.error.is_none(), "{:?}", out.error);
        if !rest.starts_with(&[0x1f, 0x8b]) {
            let plain = neardup_fuzz::read(rest, &opts, false).expect("plain opens too");
            assert_eq!(plain.entries, out.entries);
            assert_eq!(plain.header, out.header);
        }
    }
});
