//! Encoding Parquet row groups side by side: a [`ParquetWriter`] gathers rows into a row
//! group, hands the finished group to a worker of rayon's pool to encode and compress,
//! and goes on gathering the next while it runs; the groups are written in order.
//!
//! Compressing the pages is most of a Parquet output's cost (zstd ≈ 60 % of writing the
//! PyPI summaries' survivors), and arrow-rs's `ArrowWriter` does it on the caller's
//! thread, so dedup's write stage ran on one core. The row groups are independent, so
//! they are encoded as arrow-rs's own parallel example does (`ArrowColumnWriter`s per
//! group), with at most as many groups in flight as the pool has threads.

use std::collections::VecDeque;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::errors::ParquetError;
use parquet::file::writer::SerializedFileWriter;

use super::write::ParquetOutput;
use crate::error::{Error, Result};

/// One row group's encoded columns, in the schema's leaf order.
type Chunks = std::result::Result<Vec<ArrowColumnChunk>, ParquetError>;

/// A Parquet file written batch by batch to any writer (an
/// [`OutputFile`](crate::OutputFile), say), with errors naming the output.
///
/// Row groups end at the options' row count or at
/// [`DEFAULT_ROW_GROUP_BYTES`](super::DEFAULT_ROW_GROUP_BYTES) of Arrow data, whichever
/// comes first, and are encoded on rayon's pool while the caller goes on; called from a
/// thread of that pool, the writer encodes on the caller's thread instead (waiting there
/// for the pool could wait for itself).
pub struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    name: String,
    /// Rows gathered for the next row group, and their count and Arrow bytes.
    gathered: Vec<RecordBatch>,
    rows: usize,
    bytes: usize,
    row_group_rows: usize,
    row_group_bytes: usize,
    /// Row groups being encoded, oldest first, and how many were started.
    encoding: VecDeque<mpsc::Receiver<Chunks>>,
    started: usize,
}

impl<W: Write + Send> ParquetWriter<W> {
    /// Starts a file of `schema` on `out`, written as `options` say; errors name `name`.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] if the header cannot be written.
    pub fn create(out: W, name: &str, schema: SchemaRef, options: &ParquetOutput) -> Result<Self> {
        // The ArrowWriter writes the header and the schema's metadata (the Arrow schema
        // itself among it, so readers get back the input's Arrow types) and hands over.
        let (file, factory) = ArrowWriter::try_new(out, schema.clone(), Some(options.properties()))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(|e| write_error(name, &e))?;
        Ok(ParquetWriter {
            file,
            factory,
            schema,
            name: name.to_string(),
            gathered: Vec::new(),
            rows: 0,
            bytes: 0,
            row_group_rows: options.row_group_rows(),
            row_group_bytes: super::DEFAULT_ROW_GROUP_BYTES,
            encoding: VecDeque::new(),
            started: 0,
        })
    }

    /// Writes a batch of rows (a row group is encoded whenever one is full).
    ///
    /// # Errors
    ///
    /// [`Error::Write`] if the batch does not have the file's schema or a row group
    /// cannot be encoded or written.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.schema().fields() != self.schema.fields() {
            return Err(write_error(
                &self.name,
                &"a batch's columns are not the file's",
            ));
        }
        let mut batch = batch.clone();
        while batch.num_rows() > 0 {
            let room = self.row_group_rows - self.rows;
            let part = batch.slice(0, room.min(batch.num_rows()));
            batch = batch.slice(part.num_rows(), batch.num_rows() - part.num_rows());
            self.rows += part.num_rows();
            self.bytes += part.get_array_memory_size();
            self.gathered.push(part);
            if self.rows >= self.row_group_rows || self.bytes >= self.row_group_bytes {
                self.start_row_group()?;
            }
        }
        Ok(())
    }

    /// Writes the last row group and the footer, and hands the output back.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] if they cannot be written.
    pub fn finish(mut self) -> Result<W> {
        self.start_row_group()?;
        while !self.encoding.is_empty() {
            self.write_oldest()?;
        }
        self.file
            .into_inner()
            .map_err(|e| write_error(&self.name, &e))
    }

    /// Sends the gathered rows to be encoded as a row group, then writes finished groups
    /// until no more than the pool's threads are in flight.
    fn start_row_group(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let batches = std::mem::take(&mut self.gathered);
        (self.rows, self.bytes) = (0, 0);
        let writers = self
            .factory
            .create_column_writers(self.started)
            .map_err(|e| write_error(&self.name, &e))?;
        self.started += 1;
        let schema = self.schema.clone();
        let in_pool = rayon::current_thread_index().is_some();
        if in_pool || rayon::current_num_threads() < 2 {
            // Encoded here, so written at once: nothing is held for later.
            return self.write_group(encode(writers, &schema, &batches));
        }
        let (done, result) = mpsc::sync_channel(1);
        rayon::spawn(move || {
            // A panic in the encoder is an error of this file, not an abort of the
            // pool (rayon aborts on a panic in a spawned task).
            let chunks =
                std::panic::catch_unwind(AssertUnwindSafe(|| encode(writers, &schema, &batches)))
                    .unwrap_or_else(|_| {
                        Err(ParquetError::General(
                            "the row group's encoder panicked".into(),
                        ))
                    });
            // The writer may have given up on an earlier error: nobody listens.
            let _ = done.send(chunks);
        });
        self.encoding.push_back(result);
        while self.encoding.len() > rayon::current_num_threads().max(1) {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest row group in flight and writes it to the file.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(result) = self.encoding.pop_front() else {
            return Ok(());
        };
        let chunks = result.recv().unwrap_or_else(|_| {
            Err(ParquetError::General(
                "the row group's encoder stopped".into(),
            ))
        });
        self.write_group(chunks)
    }

    /// Appends an encoded row group to the file.
    fn write_group(&mut self, chunks: Chunks) -> Result<()> {
        let bad = |e: ParquetError| write_error(&self.name, &e);
        let mut group = self.file.next_row_group().map_err(bad)?;
        for chunk in chunks.map_err(bad)? {
            chunk.append_to_row_group(&mut group).map_err(bad)?;
        }
        group.close().map_err(bad)?;
        Ok(())
    }
}

/// Encodes and compresses one row group's batches, column by column.
fn encode(
    mut writers: Vec<ArrowColumnWriter>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Chunks {
    for batch in batches {
        let mut leaves_of = writers.iter_mut();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            for leaf in compute_leaves(field, column)? {
                leaves_of
                    .next()
                    .ok_or_else(|| ParquetError::General("more leaves than columns".into()))?
                    .write(&leaf)?;
            }
        }
    }
    writers.into_iter().map(ArrowColumnWriter::close).collect()
}

pub(super) fn write_error(name: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Write {
        path: name.to_string(),
        error: std::io::Error::other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::*;

    /// `rows` rows of an id and a text, given to the writer `batch` rows at a time.
    fn write_rows(rows: i64, batch: i64, options: &ParquetOutput) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
        ]));
        let mut w = ParquetWriter::create(Vec::new(), "out", schema.clone(), options).unwrap();
        for start in (0..rows).step_by(batch as usize) {
            let ids = start..(start + batch).min(rows);
            let text = StringArray::from_iter(ids.clone().map(|i| {
                (i % 7 != 0).then(|| format!("text {i} {}", "x".repeat(i as usize % 50)))
            }));
            let columns: Vec<ArrayRef> =
                vec![Arc::new(Int64Array::from_iter_values(ids)), Arc::new(text)];
            w.write(&RecordBatch::try_new(schema.clone(), columns).unwrap())
                .unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn row_groups_encoded_side_by_side_are_the_file_one_thread_writes() {
        let options = ParquetOutput::new().row_group_size(1000);
        // From this thread the groups go to the global pool, several at once; inside a
        // pool of one thread each is encoded where it is gathered.
        let spread = write_rows(10_500, 700, &options);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| write_rows(10_500, 700, &options));
        assert_eq!(
            spread, one,
            "the same bytes whichever thread encoded a group"
        );
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&spread).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let groups: Vec<i64> = reader
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        assert_eq!(
            groups,
            [vec![1000; 10], vec![500]].concat(),
            "batches split at the group size"
        );
        let ids: Vec<i64> = reader
            .build()
            .unwrap()
            .flat_map(|b| {
                let b = b.unwrap();
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(
            ids,
            (0..10_500).collect::<Vec<i64>>(),
            "every row once, in order"
        );
    }

    #[test]
    fn a_batch_of_another_schema_is_refused_naming_the_output() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let other = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let mut w =
            ParquetWriter::create(Vec::new(), "kept.parquet", schema, &ParquetOutput::new())
                .unwrap();
        let batch =
            RecordBatch::try_new(other, vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef])
                .unwrap();
        let e = w.write(&batch).unwrap_err().to_string();
        assert!(e.contains("kept.parquet") && e.contains("columns"), "{e}");
    }
}
