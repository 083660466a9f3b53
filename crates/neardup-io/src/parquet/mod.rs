//! Apache Parquet: reading rows as records (the reader behind [`open`](crate::open));
//! writing the rows a caller keeps
//! with the input's schema ([`rewrite`], [`ParquetOutput`]).
//!
//! A row is a record; its text, id and key are columns named by the read options (a
//! dotted path reaches into a struct column). Only those columns are decoded, a batch
//! of rows at a time within one row group, so memory follows a row group's share of the
//! columns read, not the file.

mod encode;
pub(crate) mod read;
mod write;

pub use encode::ParquetWriter;
pub use write::{
    rewrite, schema_of, ExtraColumns, ParquetCompression, ParquetOutput, Rewriter, Rewritten,
    DEFAULT_ROW_GROUP_BYTES, DEFAULT_ROW_GROUP_ROWS,
};
