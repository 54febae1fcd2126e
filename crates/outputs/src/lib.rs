//! # outputs: every file a tool writes, planned together before any work
//!
//! A tool that writes files (`smartsim run --trace --jobs --svg --gantt ...`, `smartsim trace
//! gantt FILE OUT`, `hourglass --trace`, `klogger export`...) first names here every file it will
//! write, with the formats the option can write, and every file it reads; [`Plan::check`] then
//! refuses, before the run or the read, any plan in which (in the order they are checked)
//!
//! - an output cannot be reached: its directory is missing, a part of its path is a file
//!   ([`Refusal::Unwritable`]);
//! - two outputs are the same file, or an output is one of the inputs ([`Refusal::SameOutput`],
//!   [`Refusal::OutputIsInput`]), or an output is the tool's standard output when the tool writes
//!   its own report there ([`Plan::stdout`], [`Refusal::IsStdout`]), or is standard error, where
//!   every tool writes its messages ([`Refusal::IsStderr`]);
//! - an output's name claims a format the option does not write, or disagrees with a format option
//!   such as `--jobs-format` ([`Refusal::Extension`], [`Refusal::Disagrees`]);
//! - an output cannot be created or written: it is a directory, the system refuses to open it for
//!   writing ([`Refusal::Unwritable`]).
//!
//! What passes is [`Outputs`]: each output with the [`Format`] its name chose, which the tool then
//! writes in, opening it through [`Output::create`] (an error names the file) and saying so with
//! [`Output::wrote`], the one `wrote PATH (details)` line of every tool on stderr. An output whose
//! reader has gone (a pipe closed: `smartsim trace perfetto t.trace /dev/stdout | head -c 1`) ends
//! the program quietly with status 0, as `diag` does for standard output ([`Output::write_error`]).
//!
//! ## The same file
//!
//! Two paths are the same file when they reach the same device and inode (`./a` and `a`, a
//! symbolic link and its target, two hard links). A path that does not exist yet is the file its
//! creation would make: the canonical path of its directory and its own name (after following a
//! dangling link), so that `out/x` and `./out/../out/x` collide before either exists. Devices,
//! pipes and sockets (`/dev/null`, `/dev/stdout`) are never the same file as another output or an
//! input: writing two outputs to `/dev/null` is harmless. But when the tool writes its own report
//! on standard output ([`Plan::stdout`]), standard output is one of the outputs, by the device and
//! inode of descriptor 1: an output that leads there (`--trace /dev/stdout`, or `--trace f` under
//! `> f`) would mix two contents in one stream, and is refused, whether standard output is a file,
//! a pipe or a socket. A terminal or `/dev/null` (a character device) is where output is read by a
//! person or dropped, not parsed, and is let through.
//!
//! ## Design decision
//!
//! A crate of its own, not a module of `diag` (which every binary also depends on) nor of
//! `report`. `diag` is what the tools say on stderr and knows no files; `report` makes the
//! *content* of outputs, and every tool that writes a file already depends on it, but this check
//! concerns where files go, and a program that writes only traces (a researcher's own, say) should
//! not take the SVG, PNG and PDF renderers with it. So this crate knows only paths, file identities
//! and format names, and depends on `std`, `libc` (an open flag, two error numbers) and
//! `thiserror`. The tools keep their own command lines and messages around it; what is refused,
//! and how it is said, is decided here once.
//!
//! ## Where it is weak
//!
//! - The plan is checked before the work and the files are opened after it: a file that another
//!   process creates, removes or makes unwritable in between is found only when it is written
//!   (and the error names it).
//! - To know that a file that does not exist can be created, [`Plan::check`] creates it and
//!   removes it at once (as `root`, permissions say little); a watcher of the directory sees both.
//! - On a case-insensitive file system, two names that differ in case and do not exist yet are not
//!   seen as the same file.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod format;

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use format::{Format, Kind};

/// A file as a message names it: the option (or argument, or input) and the path as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// `--jobs`, `the scenario`, `OUT`...
    pub label: String,
    /// The path as the user wrote it.
    pub path: PathBuf,
}

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.label, self.path.display())
    }
}

/// Why a plan of outputs is refused. Every message names the option(s) and path(s) at fault; the
/// tools exit with status 2 on it, before any work.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Two outputs are the same file.
    #[error("{first} and {second} are the same file: each output needs a file of its own")]
    SameOutput {
        /// The output named first on the command line.
        first: Named,
        /// The other one.
        second: Named,
    },
    /// An output is one of the inputs.
    #[error("{output} is {input} (the same file): an output may not overwrite an input")]
    OutputIsInput {
        /// The output.
        output: Named,
        /// The input it would overwrite.
        input: Named,
    },
    /// The name's extension claims a format the option does not write.
    #[error("{output}: {}", extension_message(&.output.label, .ext, *.claims, .kind))]
    Extension {
        /// The output.
        output: Named,
        /// Its extension, without the dot, as written.
        ext: String,
        /// What a file of that extension is taken to hold, when it is a format we know.
        claims: Option<&'static str>,
        /// What the option writes.
        kind: Kind,
    },
    /// A format option chose one format and the output's name another.
    #[error(
        "{flag} and {output} disagree: the file name says {}; leave out {} or name the file .{}",
        .named.name(), flag_option(.flag), .chosen.extension()
    )]
    Disagrees {
        /// The output.
        output: Named,
        /// The format option as given, e.g. `--jobs-format jsonl`.
        flag: String,
        /// The format it chose.
        chosen: Format,
        /// The format the name says.
        named: Format,
    },
    /// An output is standard output, where the tool writes its own report.
    #[error("{output} is standard output, where {what} goes: each output needs a file of its own")]
    IsStdout {
        /// The output.
        output: Named,
        /// What the tool writes there ("the run's table or JSON").
        what: String,
    },
    /// An output is standard error, where every tool writes its diagnostics and `wrote` lines.
    #[error(
        "{output} is standard error, where this tool's messages go (`wrote`, warnings): each output needs a \
         file of its own"
    )]
    IsStderr {
        /// The output.
        output: Named,
    },
    /// The output cannot be created or written.
    #[error("{output}: cannot {} it: {why}", if *.exists { "write" } else { "create" })]
    Unwritable {
        /// The output.
        output: Named,
        /// Whether the path exists.
        exists: bool,
        /// What the system said, or what is missing.
        why: String,
    },
}

fn extension_message(label: &str, ext: &str, claims: Option<&'static str>, kind: &Kind) -> String {
    if kind.is_strict() {
        return format!("unknown image format (use a file name ending in {})", kind.suggestion());
    }
    let writes: Vec<&str> = kind.formats().iter().map(|f| f.name()).collect();
    format!(
        "a .{ext} file holds {}, but {label} writes {}: use a file name ending in {}, or none",
        claims.unwrap_or("another format"),
        writes.join(" or "),
        kind.suggestion()
    )
}

/// `--jobs-format` of `--jobs-format jsonl`.
fn flag_option(flag: &str) -> &str {
    flag.split_whitespace().next().unwrap_or(flag)
}

/// An output of a plan, checked: where it goes, in which format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    named: Named,
    format: Format,
}

/// Why writing a planned output failed, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating (or truncating) the file failed.
    #[error("creating {}: {source}", .path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// Writing to it failed.
    #[error("writing {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
}

impl Output {
    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.named.path
    }

    /// The option that named it.
    pub fn label(&self) -> &str {
        &self.named.label
    }

    /// The format its name (or the format option) chose.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Creates (or truncates) the file.
    pub fn create(&self) -> Result<File, WriteError> {
        File::create(self.path()).map_err(|source| WriteError::Create { path: self.path().into(), source })
    }

    /// Writes `bytes` as the whole file.
    pub fn write(&self, bytes: &[u8]) -> Result<(), WriteError> {
        use io::Write;
        self.create()?.write_all(bytes).map_err(|e| self.write_error(e))
    }

    /// An error met while writing to the file, naming it. A reader that has gone (the output is a
    /// pipe, and closed) ends the program here, quietly and with status 0, as a closed standard
    /// output does (`diag`'s doc): what was asked for was taken as far as the reader wanted.
    pub fn write_error(&self, source: io::Error) -> WriteError {
        if reader_gone(&source) {
            std::process::exit(0);
        }
        WriteError::Write { path: self.path().into(), source }
    }

    /// Says on stderr that the file was written: `wrote PATH`, or `wrote PATH (details)`.
    pub fn wrote(&self, details: &str) {
        wrote(self.path(), details);
    }
}

/// Whether `e` (or the error it wraps) says the reader of a pipe has gone.
fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
        || e.get_ref().and_then(|inner| inner.downcast_ref::<io::Error>()).is_some_and(reader_gone)
}

/// Prints the line every tool prints on stderr for each file it wrote: `wrote PATH`, or `wrote
/// PATH (details)` when `details` is not empty.
pub fn wrote(path: &Path, details: &str) {
    eprintln!("{}", wrote_line(path, details));
}

fn wrote_line(path: &Path, details: &str) -> String {
    if details.is_empty() {
        format!("wrote {}", path.display())
    } else {
        format!("wrote {} ({details})", path.display())
    }
}

/// Where an output is in [`Outputs`]; `None` inside for an option that was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(Option<usize>);

/// The outputs of a plan that passed [`Plan::check`].
#[derive(Debug)]
pub struct Outputs {
    list: Vec<Output>,
}

impl Outputs {
    /// The output of `slot`, if its option was given.
    pub fn get(&self, slot: Slot) -> Option<&Output> {
        slot.0.map(|i| &self.list[i])
    }

    /// Every output, in the order they were planned.
    pub fn iter(&self) -> impl Iterator<Item = &Output> {
        self.list.iter()
    }
}

struct Wanted {
    named: Named,
    kind: Kind,
    flag: Option<(String, Format)>,
}

/// The files a tool will read and write, to be checked together ([`Plan::check`]) before it does
/// anything else.
#[derive(Default)]
pub struct Plan {
    inputs: Vec<Named>,
    outputs: Vec<Wanted>,
    directories: Vec<Named>,
    /// What the tool writes on standard output, if anything.
    stdout: Option<String>,
}

impl Plan {
    /// An empty plan.
    pub fn new() -> Plan {
        Plan::default()
    }

    /// A file the tool reads (`label`: how a message names it, e.g. `the scenario`). A path that
    /// does not exist, or `-` for standard input, is no file any output can overwrite.
    pub fn input(&mut self, label: &str, path: &Path) -> &mut Plan {
        if path != Path::new("-") {
            self.inputs.push(Named { label: label.into(), path: path.into() });
        }
        self
    }

    /// A file the tool writes for the option `label`, if given, in one of the formats of `kind`
    /// as its name says.
    pub fn output(&mut self, label: &str, path: Option<&Path>, kind: Kind) -> Slot {
        self.output_as(label, path, kind, None)
    }

    /// As [`Plan::output`], with a format option that chose `flag.1` (`flag.0` is the option as
    /// given, e.g. `--jobs-format jsonl`): it decides for a name without an extension, and must
    /// agree with one that has.
    pub fn output_as(
        &mut self,
        label: &str,
        path: Option<&Path>,
        kind: Kind,
        flag: Option<(&str, Format)>,
    ) -> Slot {
        let Some(path) = path else { return Slot(None) };
        self.outputs.push(Wanted {
            named: Named { label: label.into(), path: path.into() },
            kind,
            flag: flag.map(|(s, f)| (s.to_string(), f)),
        });
        Slot(Some(self.outputs.len() - 1))
    }

    /// The tool writes `what` (e.g. `the run's table or JSON`) on standard output: no output may
    /// lead there (module doc, "The same file").
    pub fn stdout(&mut self, what: &str) -> &mut Plan {
        self.stdout = Some(what.into());
        self
    }

    /// A directory the tool fills (created if missing, with its parents): it must be one, or be
    /// creatable.
    pub fn directory(&mut self, label: &str, path: &Path) -> &mut Plan {
        self.directories.push(Named { label: label.into(), path: path.into() });
        self
    }

    /// Checks the plan: that every output's path can be reached, that no two outputs and no output
    /// and input are the same file, that every output's name says a format its option writes, and
    /// that every output can be written. The first problem found is the refusal.
    pub fn check(self) -> Result<Outputs, Refusal> {
        let ids: Vec<Identity> =
            self.outputs.iter().map(|w| output_identity(&w.named)).collect::<Result<_, _>>()?;
        for (j, b) in ids.iter().enumerate() {
            if let Some(i) = ids[..j].iter().position(|a| a.is_same(b)) {
                return Err(Refusal::SameOutput {
                    first: self.outputs[i].named.clone(),
                    second: self.outputs[j].named.clone(),
                });
            }
        }
        if let Some((what, out)) = self.stdout.as_ref().zip(stream_file(io::stdout().as_fd())) {
            if let Some(w) = self.outputs.iter().find(|w| file_of(&w.named.path) == Some(out)) {
                return Err(Refusal::IsStdout { output: w.named.clone(), what: what.clone() });
            }
        }
        // Every tool writes its messages on standard error, whatever it writes on standard output.
        if let Some(err) = stream_file(io::stderr().as_fd()) {
            if let Some(w) = self.outputs.iter().find(|w| file_of(&w.named.path) == Some(err)) {
                return Err(Refusal::IsStderr { output: w.named.clone() });
            }
        }
        for input in &self.inputs {
            let Some(id) = input_identity(&input.path) else { continue };
            if let Some(k) = ids.iter().position(|o| o.is_same(&id)) {
                return Err(Refusal::OutputIsInput {
                    output: self.outputs[k].named.clone(),
                    input: input.clone(),
                });
            }
        }
        let mut list = Vec::with_capacity(self.outputs.len());
        for w in &self.outputs {
            list.push(Output { named: w.named.clone(), format: choose(w)? });
        }
        for (w, id) in self.outputs.iter().zip(&ids) {
            writable(&w.named, id)?;
        }
        for d in &self.directories {
            directory(d)?;
        }
        Ok(Outputs { list })
    }
}

/// The format of a wanted output, or why its name is refused.
fn choose(w: &Wanted) -> Result<Format, Refusal> {
    match format::choose(&w.named.path, w.kind, w.flag.as_ref().map(|f| f.1)) {
        format::Choice::Write(f) => Ok(f),
        format::Choice::Refused { ext, claims } => {
            Err(Refusal::Extension { output: w.named.clone(), ext, claims, kind: w.kind })
        }
        format::Choice::Disagrees { named } => {
            let (flag, chosen) = w.flag.clone().expect("only a format option disagrees");
            Err(Refusal::Disagrees { output: w.named.clone(), flag, chosen, named })
        }
    }
}

/// Which file a path is, for telling whether two paths are the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    /// An existing file (or directory): its device and inode.
    Inode(u64, u64),
    /// A file that does not exist yet: the canonical path of its directory, joined with its name.
    Name(PathBuf),
    /// A device, pipe or socket: never the same file as anything.
    Special,
}

impl Identity {
    fn is_same(&self, other: &Identity) -> bool {
        !matches!(self, Identity::Special) && self == other
    }
}

/// The device and inode of a standard stream (descriptor 1 or 2), unless it is a character device
/// (a terminal, `/dev/null`) or closed.
fn stream_file(fd: std::os::fd::BorrowedFd<'_>) -> Option<(u64, u64)> {
    use std::os::unix::fs::FileTypeExt;
    let fd = fd.try_clone_to_owned().ok()?;
    let m = File::from(fd).metadata().ok()?;
    (!m.file_type().is_char_device()).then(|| (m.dev(), m.ino()))
}

/// The device and inode of the file `path` leads to, if it exists.
fn file_of(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The identity of an output, or why it cannot be one (its directory is missing, a component of
/// its path is not a directory...).
fn output_identity(named: &Named) -> Result<Identity, Refusal> {
    let unwritable = |exists: bool, why: String| Refusal::Unwritable { output: named.clone(), exists, why };
    match identity(&named.path) {
        Ok(id) => Ok(id),
        Err(Missing::Directory(dir)) => Err(unwritable(
            false,
            format!(
                "its directory {} does not exist",
                if dir.as_os_str().is_empty() { Path::new(".") } else { &dir }.display()
            ),
        )),
        Err(Missing::Io(e)) => Err(unwritable(false, e.to_string())),
    }
}

/// The identity of an input; `None` when it has none (the reader will say why).
fn input_identity(path: &Path) -> Option<Identity> {
    identity(path).ok()
}

/// Why a path has no identity.
enum Missing {
    /// Its directory does not exist.
    Directory(PathBuf),
    /// The system refused to look (not a directory, permission, a loop of links...).
    Io(io::Error),
}

/// The identity of `path`: its inode if it exists, else the name its creation would take.
fn identity(path: &Path) -> Result<Identity, Missing> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() || m.is_dir() => Ok(Identity::Inode(m.dev(), m.ino())),
        Ok(_) => Ok(Identity::Special),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let target = dangling_target(path).unwrap_or_else(|| path.to_path_buf());
            let dir = match target.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let Some(name) = target.file_name() else {
                return Err(Missing::Io(io::Error::from_raw_os_error(libc::EISDIR)));
            };
            match fs::canonicalize(dir) {
                Ok(d) => Ok(Identity::Name(d.join(name))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Missing::Directory(dir.into())),
                Err(e) => Err(Missing::Io(e)),
            }
        }
        Err(e) => Err(Missing::Io(e)),
    }
}

/// Where a dangling symbolic link at `path` leads (the file writing through it would create),
/// following a chain of links; `None` when `path` is no link.
fn dangling_target(path: &Path) -> Option<PathBuf> {
    let mut p = path.to_path_buf();
    let mut followed = false;
    // The kernel's own limit on links in a path.
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).ok()?;
                p = if to.is_absolute() { to } else { p.parent().unwrap_or(Path::new("")).join(to) };
                followed = true;
            }
            _ => return followed.then_some(p),
        }
    }
    None
}

/// Checks that the output can be written: an existing file is opened for writing (not truncated),
/// a device or pipe too but without waiting for a reader, and a file that does not exist is
/// created and removed at once.
fn writable(named: &Named, id: &Identity) -> Result<(), Refusal> {
    let refuse = |exists: bool, e: io::Error| Refusal::Unwritable {
        output: named.clone(),
        exists,
        why: e.to_string(),
    };
    match id {
        Identity::Inode(..) => {
            OpenOptions::new().write(true).open(&named.path).map(drop).map_err(|e| refuse(true, e))
        }
        Identity::Special => OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&named.path)
            .map(drop)
            .map_err(|e| refuse(true, e)),
        // The file the path would create (through a dangling link, its target's).
        Identity::Name(file) => {
            // A trailing slash asks for a directory: the name alone would hide it.
            if named.path.as_os_str().as_encoded_bytes().ends_with(b"/") {
                return Err(refuse(false, io::Error::from_raw_os_error(libc::EISDIR)));
            }
            OpenOptions::new().write(true).create_new(true).open(file).map_err(|e| refuse(false, e))?;
            fs::remove_file(file).map_err(|e| refuse(false, e))
        }
    }
}

/// Checks that a directory to fill is one and can take files, or can be created: the nearest
/// existing ancestor takes a file (created and removed at once).
fn directory(named: &Named) -> Result<(), Refusal> {
    let refuse = |exists: bool, e: io::Error| Refusal::Unwritable {
        output: named.clone(),
        exists,
        why: e.to_string(),
    };
    let mut dir = named.path.as_path();
    let exists = loop {
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => break dir == named.path,
            Ok(_) => return Err(refuse(dir == named.path, io::Error::from_raw_os_error(libc::ENOTDIR))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let up = match dir.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if up == dir {
                    return Err(refuse(false, e));
                }
                dir = up;
            }
            Err(e) => return Err(refuse(dir == named.path, e)),
        }
    };
    let probe = dir.join(format!(".outputs-probe-{}", std::process::id()));
    OpenOptions::new().write(true).create_new(true).open(&probe).map_err(|e| refuse(exists, e))?;
    fs::remove_file(&probe).map_err(|e| refuse(exists, e))
}

#[cfg(test)]
mod tests;
