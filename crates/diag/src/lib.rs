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

use std::borrow::Cow;
use std::fmt;
use std::fmt::Write as _;
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

/// `text` as a person should see it on a terminal (and in a drawing or a page, under the markup
/// escaping of `report::escape`): each character [`is_hidden`] says is one is written as an
/// escape, the rest is kept as it is. An ASCII control character (U+0000 to U+001F, U+007F) becomes
/// `\xNN` (two lowercase hex digits: ESC is `\x1b`, a line feed `\x0a`); any other becomes
/// `\u{N}` (lowercase hex, as Rust writes it: the C1 control U+009B is `\u{9b}`, the right-to-left
/// override `\u{202e}`). Text with none of them is returned as it is, without a copy, so output
/// for ordinary names does not change.
///
/// A backslash is not doubled: a name that holds the four characters `\x1b` reads the same as one
/// that holds an escape character. The result is for reading; the exact name is in the trace and in
/// every `--format json`. The output holds no character that XML 1.0 forbids.
///
/// ```
/// assert_eq!(diag::visible("audio"), "audio");
/// assert_eq!(diag::visible("evil\u{1b}[2J"), "evil\\x1b[2J");
/// assert_eq!(diag::visible("abc\u{202e}fed"), "abc\\u{202e}fed");
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    escape_where(text, is_hidden)
}

/// As [`visible`], keeping line feeds: for a message of several lines (an error, a warning).
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && is_hidden(c))
}

/// Whether [`visible`] writes `c` as an escape: every character that shows nothing of itself, or
/// something other than itself, so that a name holding one could pass for another (`au\u{200b}dio`
/// for `audio`). That is each character of Unicode's general categories
///
/// - Cc, a control character (U+0000 to U+001F, U+007F to U+009F: escape sequences, line breaks,
///   tabs, bells, backspaces);
/// - Cf, a format character (the bidirectional marks, embeddings, overrides and isolates that
///   reorder the text around them; the zero-width space, joiners, the byte order mark, the soft
///   hyphen, tags...);
/// - Co, a private-use character (drawn by whatever font claims it);
/// - Cn, a code point not assigned (in the Unicode version of `unicode-properties`; the
///   noncharacters U+FFFE and U+FFFF, which XML forbids, among them);
/// - Zl and Zp, the line and paragraph separators (U+2028, U+2029);
///
/// and each default-ignorable code point ([`DEFAULT_IGNORABLE`]: those a renderer shows as nothing
/// when it has no glyph for them, such as the combining grapheme joiner U+034F, the Hangul fillers
/// U+115F and U+3164, and the variation selectors).
///
/// The general category comes from the `unicode-properties` crate (its tables follow Unicode's
/// releases); the default-ignorable code points are not among its properties, and are the short
/// list of Unicode's DerivedCoreProperties.txt.
pub fn is_hidden(c: char) -> bool {
    use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        G::Control | G::Format | G::PrivateUse | G::Unassigned | G::LineSeparator | G::ParagraphSeparator
    ) || DEFAULT_IGNORABLE.iter().any(|r| r.contains(&c))
}

/// Unicode's default-ignorable code points (the property Default_Ignorable_Code_Point of
/// DerivedCoreProperties.txt of Unicode 16.0), as ranges. Most are also of
/// category Cf or Cn; [`is_hidden`] takes them all.
pub const DEFAULT_IGNORABLE: &[std::ops::RangeInclusive<char>] = &[
    '\u{00ad}'..='\u{00ad}',
    '\u{034f}'..='\u{034f}',
    '\u{061c}'..='\u{061c}',
    '\u{115f}'..='\u{1160}',
    '\u{17b4}'..='\u{17b5}',
    '\u{180b}'..='\u{180f}',
    '\u{200b}'..='\u{200f}',
    '\u{202a}'..='\u{202e}',
    '\u{2060}'..='\u{206f}',
    '\u{3164}'..='\u{3164}',
    '\u{fe00}'..='\u{fe0f}',
    '\u{feff}'..='\u{feff}',
    '\u{ffa0}'..='\u{ffa0}',
    '\u{fff0}'..='\u{fff8}',
    '\u{1bca0}'..='\u{1bca3}',
    '\u{1d173}'..='\u{1d17a}',
    '\u{e0000}'..='\u{e0fff}',
];

fn escape_where(text: &str, hidden: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
        } else if c.is_ascii() {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
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
        // The message may quote a name from outside (module doc): formatted first, then made visible.
        let mut message = String::new();
        ctx.field_format().format_fields(Writer::new(&mut message), event)?;
        writeln!(w, "{}: {tag}{}", self.tool, visible_lines(&message))
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
    fn names_from_outside_reach_stderr_visible() {
        let sink = Sink::default();
        let w = sink.clone();
        let s = subscriber("scx_smart", LevelFilter::DEBUG, move || w.clone());
        tracing::subscriber::with_default(s, || {
            tracing::debug!("dispatch 7 ({}) on CPU 0", "top\u{1b}[2J\u{202e}");
            tracing::warn!("two\nlines\r");
        });
        let out = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            out,
            "scx_smart: debug: dispatch 7 (top\\x1b[2J\\u{202e}) on CPU 0\nscx_smart: warning: two\nlines\\x0d\n"
        );
    }

    #[test]
    fn every_hidden_character_is_escaped_and_nothing_else() {
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            let s = c.to_string();
            let v = visible(&s);
            if is_hidden(c) {
                assert!(v.starts_with('\\') && v.chars().all(|x| x.is_ascii_graphic()), "{c:?} → {v}");
            } else {
                assert_eq!(v, s);
            }
        }
        assert_eq!(visible("\u{0}\u{7f}\u{85}\t"), "\\x00\\x7f\\u{85}\\x09");
        // The invisible ones a look-alike name is made of: format characters, default-ignorable
        // letters and marks, private use, tags, a musical format control, separators.
        for c in [
            '\u{200b}',
            '\u{feff}',
            '\u{ad}',
            '\u{34f}',
            '\u{e0001}',
            '\u{180e}',
            '\u{115f}',
            '\u{3164}',
            '\u{1d173}',
            '\u{2060}',
            '\u{fe0f}',
            '\u{e000}',
            '\u{e0100}',
            '\u{2028}',
            '\u{2029}',
            '\u{fffe}',
        ] {
            assert!(is_hidden(c), "{c:?}");
        }
        assert_eq!(visible("au\u{200b}dio"), "au\\u{200b}dio");
        // Combining marks and other scripts' letters are shown as they are.
        assert!(matches!(
            visible("e\u{301} \u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940} 한"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(visible("video ✓ ünïcode"), Cow::Borrowed(_)), "no copy for ordinary text");
        assert_eq!(visible_lines("a\nb\u{1b}"), "a\nb\\x1b");
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
