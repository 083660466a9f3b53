//! Integration tests of the `neardup` binary, one file per concern, in one test binary.

mod common;

mod annotate;
mod commands;
mod decontaminate;
mod eval;
mod formats_in;
mod formats_out;
mod index;
mod index_safety;
mod input;
mod inputs;
mod matching;
mod memory;
mod outputs;
mod readme;
mod reference;
mod report;
mod serve;
mod sim_plan;
mod unicode;
mod units;
mod usage;
