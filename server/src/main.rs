//! `taxi-fiscal`: the one binary of the system. Subcommands live in `cli/`; this file only turns
//! their outcome into an exit status and a one-line error on stderr.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

mod cli;

// See `mimalloc` in Cargo.toml: the sync exchange allocates heavily on all cores.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, the whole cause chain: what was wrong, never a backtrace.
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("erro: {msg}");
            ExitCode::from(2)
        }
    }
}
