//! Microbenchmarks.
use std::process::ExitCode;
/// Entry.
pub fn main(_a: &[String]) -> ExitCode {
    ExitCode::SUCCESS
}
