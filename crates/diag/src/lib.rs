//! # diag: what every binary prints on stderr besides its output
//!
//! Warnings, progress and debugging go through `tracing` to stderr, at a level chosen by one flag
//! that every binary of the workspace takes the same way: `-v` (repeatable: `-v` debug, `-vv`
//! trace), `-q` fewer (warnings only, then errors only, then nothing). A binary with a clap command
//! line flattens [`Verbosity`] into it; one with a command line of its own (hourglass's appendix-A
//! interface) counts its flags and calls [`level`]. The tool's output (stdout) and its errors
//! (plain lines on stderr, which scripts and tests read) do not go through here.
//!
//! One line format for all: `tool: message`, `tool: warning: message`, `tool: debug: message`,
//! without time, target or colour, the shape the tools printed before tracing, so that a person
//! reads the same in every tool and a script's `grep` keeps working.
//!
//! # Standard output that a reader may close
//!
//! The tools print their results with [`out!`] and [`outln!`] instead of `print!` and `println!`,
//! which panic when the reader of the output has gone (`smartsim ... | head -1`, `klogger report
//! ... | true`). Through these, a closed pipe ends the program at once, quietly and with status 0,
//! as ripgrep does; any other error writing standard output (a full disk under `> file`) is said in
//! one line and ends it with status 1 (see [`stdout_failed`]).
//!
//! Why not restore `SIGPIPE`'s default action, as C tools have it? It needs `unsafe` (`signal(2)`
//! through `libc` or `nix`, both `unsafe fn`), which this crate forbids; and it is process-wide: a
//! write to *any* pipe or socket whose reader has gone would kill the process, such as a libsmart
//! client that hung up on `scx_smart`, where a `BrokenPipe` error is the right outcome. Handling the
//! error where standard output is written ends the program only for the output that was asked for.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fmt;
use tracing::{Event, Level, Subscriber};
pub use tracing_subscriber::filter::LevelFilter;

/// The `-v`/`-q` flag for a clap command line (`#[command(flatten)] verbose: Verbosity`): info by
/// default, so that warnings and progress show; its [`Verbosity::tracing_level_filter`] is what
/// [`init`] takes.
pub type Verbosity = clap_verbosity_flag::Verbosity<clap_verbosity_flag::InfoLevel>;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

/// The level of `verbosity` = (number of `-v`) − (number of `-q`): 0 is info (warnings and
/// progress, what hourglass always printed), 1 debug, 2 or more trace; −1 warnings, −2 errors,
/// below that nothing.
pub fn level(verbosity: i8) -> LevelFilter {
    match verbosity {
        i8::MIN..=-3 => LevelFilter::OFF,
        -2 => LevelFilter::ERROR,
        -1 => LevelFilter::WARN,
        0 => LevelFilter::INFO,
        1 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    }
}

/// Sends diagnostics at `level` and above to stderr, each line prefixed with `tool`
/// (`hourglass`, `hourglass bench`...). Does nothing if a subscriber is already set.
pub fn init(tool: &'static str, level: LevelFilter) {
    let _ = TOOL.set(tool);
    let _ = tracing::subscriber::set_global_default(subscriber(tool, level, std::io::stderr));
}

/// The name [`init`] was given, for [`stdout_failed`]'s message.
static TOOL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Prints to standard output, as `print!`, but a reader that has gone ends the program quietly
/// (module doc, "Standard output that a reader may close").
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(::std::format_args!($($arg)*))
    };
}

/// Prints a line to standard output, as `println!`, but a reader that has gone ends the program
/// quietly (module doc, "Standard output that a reader may close").
#[macro_export]
macro_rules! outln {
    () => {
        $crate::write_stdout(::std::format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_stdout(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// Writes `args` to standard output; on an error, [`stdout_failed`]. What [`out!`] and [`outln!`]
/// call.
pub fn write_stdout(args: fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        stdout_failed(&e);
    }
}

/// Ends the program after an error writing standard output: quietly with status 0 when the reader
/// has gone (`BrokenPipe`), else with `tool: writing standard output: ERROR` on stderr and status
/// 1. For a tool that writes to `std::io::stdout()` itself.
pub fn stdout_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    let tool = TOOL.get().copied().map(str::to_string).unwrap_or_else(|| {
        let argv0 = std::env::args_os().next().unwrap_or_default();
        std::path::Path::new(&argv0).file_name().unwrap_or_default().to_string_lossy().into_owned()
    });
    eprintln!("{tool}: writing standard output: {e}");
    std::process::exit(1);
}

/// The subscriber [`init`] installs, writing to `writer`.
fn subscriber<W>(tool: &'static str, level: LevelFilter, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(level)
        .event_format(Prefixed { tool })
        .finish()
}

/// `tool: [level: ]message`, without time, target or colour.
struct Prefixed {
    tool: &'static str,
}

impl<S, N> FormatEvent<S, N> for Prefixed
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let tag = match *event.metadata().level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::INFO => "",
            Level::DEBUG => "debug: ",
            Level::TRACE => "trace: ",
        };
        write!(w, "{}: {tag}", self.tool)?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_keep_the_shape_hourglass_always_printed() {
        let sink = Sink::default();
        let w = sink.clone();
        let s = subscriber("hourglass", LevelFilter::DEBUG, move || w.clone());
        tracing::subscriber::with_default(s, || {
            tracing::warn!("over.toml:8: always overloaded");
            tracing::info!("wrote t.trace ({} records)", 3);
            tracing::debug!("gap threshold {} ns", 20);
            tracing::trace!("not at this level");
        });
        let out = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            out,
            "hourglass: warning: over.toml:8: always overloaded\nhourglass: wrote t.trace (3 records)\n\
             hourglass: debug: gap threshold 20 ns\n"
        );
    }

    #[test]
    fn each_v_adds_a_level_and_each_q_takes_one_away() {
        assert_eq!(level(0), LevelFilter::INFO);
        assert_eq!(level(1), LevelFilter::DEBUG);
        assert_eq!(level(2), LevelFilter::TRACE);
        assert_eq!(level(9), LevelFilter::TRACE);
        assert_eq!(level(-1), LevelFilter::WARN);
        assert_eq!(level(-2), LevelFilter::ERROR);
        assert_eq!(level(-3), LevelFilter::OFF);
    }
}
