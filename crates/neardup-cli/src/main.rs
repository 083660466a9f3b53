//! The `neardup` command: find near-duplicate documents.

mod annotate_output;
mod args;
mod containment;
mod decontaminate;
mod decontaminate_output;
mod decontaminate_page;
mod dedup_output;
mod errors;
mod eval;
mod index_args;
mod index_cmd;
mod index_settings;
mod keep_by;
mod labels;
mod output;
mod parquet_output;
mod per_input;
mod plan;
mod plan_cmd;
mod progress;
mod ready;
mod report_run;
mod results;
mod run;
mod serve_cmd;
mod settings;
mod sim;
mod spill;
mod summary;
mod trim_memory;
mod units_output;
mod units_write;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use neardup_io::documents::DocumentsError;

/// Exit codes: 0 success, 2 bad usage (from clap too), 3 bad input, 4 I/O failure.
const EXIT_USAGE: u8 = 2;
const EXIT_INPUT: u8 = 3;
const EXIT_IO: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The server stops on SIGTERM/SIGINT by itself, after the requests in flight.
    if !matches!(cli.command, Command::Serve(_)) {
        clean_up_on_signals();
    }
    let threads = match &cli.command {
        Command::Pairs(a) => a.run.batch.runtime.threads,
        Command::Clusters(a) => a.run.batch.runtime.threads,
        Command::Dedup(a) => a.run.batch.runtime.threads,
        Command::Annotate(a) => a.run.batch.runtime.threads,
        Command::Eval(a) => a.runtime.threads,
        Command::Decontaminate(a) => a.runtime.threads,
        Command::Sim(_) | Command::Plan(_) => Some(1),
        Command::Index(c) => c.threads(),
        Command::Serve(_) => None,
    };
    if let Some(n) = threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
        {
            summary::to_stderr(&format!("neardup: cannot start {n} threads: {e}\n"));
            return ExitCode::from(EXIT_IO);
        }
    }
    let result = match &cli.command {
        Command::Pairs(a) => {
            run::resolve(run::Mode::Pairs, a.clone().into()).and_then(|r| run::run(&r))
        }
        Command::Clusters(a) => {
            run::resolve(run::Mode::Clusters, a.clone().into()).and_then(|r| run::run(&r))
        }
        Command::Dedup(a) if a.units.unit.is_some() => {
            let prefix = a.annotate.annotate_prefix.as_deref().unwrap_or_default();
            let annotate = a.annotate.annotate.then_some(prefix);
            units_output::run(&a.clone().into(), &a.units, annotate)
        }
        Command::Annotate(a) if a.units.unit.is_some() => {
            let prefix = a.annotate_prefix.as_deref().unwrap_or_default();
            units_output::run(&a.clone().into(), &a.units, Some(prefix))
        }
        Command::Dedup(a) => {
            run::resolve(run::Mode::Dedup, a.clone().into()).and_then(|r| run::run(&r))
        }
        Command::Annotate(a) => {
            run::resolve(run::Mode::Dedup, a.clone().into()).and_then(|r| run::run(&r))
        }
        Command::Eval(a) => {
            let s = a.clone().into();
            eval::resolve(&s).and_then(|c| eval::run(&s, &c).and_then(|o| print(&o)))
        }
        Command::Sim(a) => {
            let s = a.clone().into();
            sim::resolve(&s).and_then(|c| sim::run(&s, &c).and_then(|o| print(&o)))
        }
        Command::Plan(a) => {
            let s = a.clone().into();
            plan_cmd::resolve(&s).and_then(|c| plan_cmd::run(&s, &c).and_then(|o| print(&o)))
        }
        Command::Decontaminate(a) => decontaminate::run(a),
        Command::Index(c) => c.clone().resolve().and_then(|s| index_cmd::run(&s)),
        Command::Serve(a) => {
            let s = a.clone().into();
            serve_cmd::resolve(&s).and_then(|c| serve_cmd::run(&s, &c))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            summary::to_stderr(&format!("neardup: {}\n", errors::message(&e)));
            ExitCode::from(exit_code(&e))
        }
    }
}

/// On SIGINT or SIGTERM: deletes the temporary files and directories of outputs not yet
/// in place (the targets stay as they were), then exits with 128 + the signal's number
/// (130, 143), as a shell reports a process killed by it.
#[cfg(unix)]
fn clean_up_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            neardup_io::abandon_outputs();
            std::process::exit(128 + signal);
        }
    });
}

#[cfg(not(unix))]
fn clean_up_on_signals() {}

fn print(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<neardup_io::Error>()
                .is_some_and(neardup_io::Error::is_broken_pipe)
            || c.downcast_ref::<DocumentsError>()
                .is_some_and(DocumentsError::is_broken_pipe)
    })
}

fn index_exit_code(e: &neardup_index::Error) -> u8 {
    use neardup_index::Error as E;
    match e {
        E::Io { .. } | E::Locked { .. } => EXIT_IO,
        E::Corrupt { .. }
        | E::UnsupportedFormat { .. }
        | E::Damaged { .. }
        | E::CounterExhausted(_)
        | E::EmptyId { .. } => EXIT_INPUT,
        _ => EXIT_USAGE,
    }
}

/// The document table's errors: an option that does not fit a format is a usage error,
/// as is the core's limit on documents; records that are not what was asked for are bad
/// input.
fn documents_exit_code(e: &DocumentsError) -> u8 {
    match e {
        DocumentsError::OptionNotForFormat(_) | DocumentsError::TooManyDocuments(_) => EXIT_USAGE,
        DocumentsError::Read(io) if io.io_error().is_none() => EXIT_INPUT,
        _ if e.io_error().is_some() => EXIT_IO,
        _ => EXIT_INPUT,
    }
}

fn exit_code(e: &anyhow::Error) -> u8 {
    for c in e.chain() {
        if let Some(e) = c.downcast_ref::<DocumentsError>() {
            return documents_exit_code(e);
        }
        if c.downcast_ref::<errors::BadRecord>().is_some() {
            return EXIT_INPUT;
        }
        if c.downcast_ref::<errors::Usage>().is_some() {
            return EXIT_USAGE;
        }
        if c.downcast_ref::<neardup::Error>().is_some() {
            return EXIT_USAGE;
        }
        if c.downcast_ref::<index_cmd::Damaged>().is_some() {
            return EXIT_INPUT;
        }
        if let Some(e) = c.downcast_ref::<neardup_server::Error>() {
            use neardup_server::Error as E;
            match e {
                E::Io { .. } => return EXIT_IO,
                E::Index(e) => return index_exit_code(e),
                // Insecure, Config: the command line asks for what cannot work.
                _ => return EXIT_USAGE,
            }
        }
        if let Some(e) = c.downcast_ref::<neardup_index::Error>() {
            return index_exit_code(e);
        }
        if let Some(io) = c.downcast_ref::<neardup_io::Error>() {
            return if io.io_error().is_some() {
                EXIT_IO
            } else {
                EXIT_INPUT
            };
        }
        if c.downcast_ref::<std::io::Error>().is_some() {
            return EXIT_IO;
        }
    }
    EXIT_INPUT
}
