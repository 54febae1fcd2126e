//! The hostile-input suite (`scripts/test` runs it): every case in `tests/hostile/*.toml` runs one of
//! the project's binaries on bad or extreme input, under a time limit and a memory limit, and its
//! outcome is checked: a clear refusal (exit 2, the file, line, key or option named on stderr, no
//! panic) or a run that succeeds with the expected warning. No case may panic, abort, be killed by a
//! signal, run past its time limit or use more than 1 GiB.
//!
//! A case file:
//!
//! ```toml
//! [files]                      # written into every case's directory (${dir})
//! "ok.toml" = "[machine]\n..."
//!
//! [[case]]
//! name = "window of zero"      # unique in the suite
//! bin = "smartsim"             # smartsim, hourglass or klogger
//! args = ["run", "${dir}/ok.toml", "--window", "0s"]
//! files = { "x.toml" = "..." } # more files for this case (the same name replaces a shared one)
//! symlinks = { "l.svg" = "g.svg" }  # symbolic links made after the files: name = target
//! hardlinks = { "h.toml" = "x.toml" } # hard links to the case's files: name = existing file
//! exit = 2                     # expected exit status (default 2)
//! stderr = ["--window"]        # each must appear on stderr
//! stdout = []                  # each must appear on stdout
//! absent = ["\u001b"]         # each must appear on neither stdout nor stderr (a raw ESC, say)
//! root = false                 # needs root (skipped, and said, otherwise)
//! seconds = 20                 # time limit (default 20)
//! ```
//!
//! In `args` and file contents, `${dir}` is the case's own directory, `${repeat:N:TEXT}` is TEXT N
//! times and `${seq:N:TEXT}` is TEXT N times with each `#` replaced by 0, 1, ... N-1 (TEXT may not
//! hold `}`), for inputs too large to write out; in file contents `${hex:HEX}` is raw bytes.

#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod sys;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::Deserialize;

/// Most memory a case may use (maximum resident set), bytes.
const MEMORY_LIMIT: u64 = 1 << 30;
/// Address-space limit set on every case, so that a runaway allocation fails fast instead of
/// taking the machine; above [`MEMORY_LIMIT`] so that the resident figure is what is judged.
const ADDRESS_LIMIT: u64 = 4 << 30;
/// Bytes of a case's stdout or stderr that are kept and searched.
const OUTPUT_KEPT: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    case: Vec<Case>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    bin: String,
    args: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
    #[serde(default)]
    hardlinks: BTreeMap<String, String>,
    #[serde(default = "two")]
    exit: i32,
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    root: bool,
    #[serde(default = "twenty")]
    seconds: u64,
}

fn two() -> i32 {
    2
}

fn twenty() -> u64 {
    20
}

const USAGE: &str = "\
hostile: runs the hostile-input suite (tests/hostile/*.toml) against the project's binaries.

Usage: hostile [--bin-dir DIR] [--cases DIR] [--only TEXT] [--list] [-v]

  --bin-dir DIR   where smartsim, hourglass and klogger are (default target/release)
  --cases DIR     the case files (default tests/hostile)
  --only TEXT     run the cases whose name holds TEXT
  --list          print the cases and exit
  -v, --verbose   also print each case as it passes, with its time and memory (-q: less)

Each case runs under a time limit (its `seconds`, default 20) and a memory limit (1 GiB resident,
4 GiB of address space); a case fails if the binary panics, aborts, is killed, overruns a limit,
exits otherwise than expected or leaves out an expected message. Exit status: 0 if every case
passed, 1 if any failed, 2 on a bad case file or option.
";

struct Opts {
    bin_dir: PathBuf,
    cases: PathBuf,
    only: Option<String>,
    list: bool,
    /// Number of -v less number of -q.
    verbosity: i8,
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        bin_dir: "target/release".into(),
        cases: "tests/hostile".into(),
        only: None,
        list: false,
        verbosity: 0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--bin-dir" => o.bin_dir = val("--bin-dir")?.into(),
            "--cases" => o.cases = val("--cases")?.into(),
            "--only" => o.only = Some(val("--only")?),
            "--list" => o.list = true,
            "-v" | "--verbose" => o.verbosity = o.verbosity.saturating_add(1),
            "-q" | "--quiet" => o.verbosity = o.verbosity.saturating_sub(1),
            "-h" | "--help" => {
                diag::out!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown option {a:?}")),
        }
    }
    Ok(o)
}

/// Expands `${dir}`, `${repeat:N:TEXT}` and `${seq:N:TEXT}` in an argument.
fn expand(s: &str, dir: &Path) -> Result<String, String> {
    let b = expand_bytes(s, dir)?;
    String::from_utf8(b).map_err(|_| format!("{s:?} expands to bytes that are not UTF-8"))
}

/// Expands a file's content: as [`expand`], and `${hex:HEX}` is the bytes HEX spells (for binary
/// recordings).
fn expand_bytes(s: &str, dir: &Path) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.extend_from_slice(&rest.as_bytes()[..i]);
        let tail = &rest[i + 2..];
        let j = tail.find('}').ok_or_else(|| format!("unclosed ${{ in {s:?}"))?;
        let key = &tail[..j];
        if key == "dir" {
            out.extend_from_slice(dir.display().to_string().as_bytes());
        } else if let Some(h) = key.strip_prefix("hex:") {
            if h.len() % 2 != 0 {
                return Err("odd number of hex digits in ${hex:...}".to_string());
            }
            for k in (0..h.len()).step_by(2) {
                let b = u8::from_str_radix(&h[k..k + 2], 16)
                    .map_err(|_| format!("bad hex {:?}", &h[k..k + 2]))?;
                out.push(b);
            }
        } else if let Some(r) = key.strip_prefix("repeat:") {
            let (n, text) =
                r.split_once(':').ok_or_else(|| format!("${{repeat:N:TEXT}} expected, got {key:?}"))?;
            let n: usize = n.parse().map_err(|_| format!("bad count in {key:?}"))?;
            if n.saturating_mul(text.len()) > 256 << 20 {
                return Err(format!("{key:?} is over 256 MiB"));
            }
            out.extend_from_slice(text.repeat(n).as_bytes());
        } else if let Some(r) = key.strip_prefix("seq:") {
            let (n, text) =
                r.split_once(':').ok_or_else(|| format!("${{seq:N:TEXT}} expected, got {key:?}"))?;
            let n: usize = n.parse().map_err(|_| format!("bad count in {key:?}"))?;
            if n.saturating_mul(text.len() + 8) > 256 << 20 {
                return Err(format!("{key:?} is over 256 MiB"));
            }
            for i in 0..n {
                out.extend_from_slice(text.replace('#', &i.to_string()).as_bytes());
            }
        } else {
            return Err(format!("unknown ${{{key}}}"));
        }
        rest = &tail[j + 1..];
    }
    out.extend_from_slice(rest.as_bytes());
    Ok(out)
}

/// How a case ended.
struct Outcome {
    /// Exit status, or None if killed by a signal.
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    max_rss: u64,
    elapsed: Duration,
    stdout: String,
    stderr: String,
}

fn read_kept(p: &Path) -> String {
    use std::io::Read;
    let mut v = Vec::new();
    if let Ok(f) = std::fs::File::open(p) {
        let _ = f.take(OUTPUT_KEPT).read_to_end(&mut v);
    }
    String::from_utf8_lossy(&v).into_owned()
}

fn run_case(bin: &Path, args: &[String], dir: &Path, limit: Duration) -> Result<Outcome, String> {
    let out = std::fs::File::create(dir.join(".stdout")).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(dir.join(".stderr")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).stdout(out).stderr(err);
    cmd.env("RUST_BACKTRACE", "0");
    sys::limit_and_detach(&mut cmd, ADDRESS_LIMIT);
    let start = Instant::now();
    let child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let pid = child.id();
    let mut timed_out = false;
    loop {
        match sys::try_wait_with_usage(pid) {
            Ok(Some(end)) => {
                return Ok(Outcome {
                    code: end.status.code(),
                    signal: end.status.signal(),
                    timed_out,
                    max_rss: end.max_rss,
                    elapsed: start.elapsed(),
                    stdout: read_kept(&dir.join(".stdout")),
                    stderr: read_kept(&dir.join(".stderr")),
                });
            }
            Ok(None) => {}
            Err(e) => return Err(format!("wait4: {e}")),
        }
        if !timed_out && start.elapsed() > limit {
            timed_out = true;
            // The child leads its own session and group (`sys::limit_and_detach`).
            let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What is wrong with an outcome, if anything.
fn judge(c: &Case, o: &Outcome) -> Vec<String> {
    let mut bad = Vec::new();
    if o.timed_out {
        bad.push(format!("ran past its limit of {} s (killed)", c.seconds));
    } else if let Some(s) = o.signal {
        bad.push(format!("killed by signal {s}"));
    }
    if o.max_rss > MEMORY_LIMIT {
        bad.push(format!("used {} MiB (at most {} MiB)", o.max_rss >> 20, MEMORY_LIMIT >> 20));
    }
    for p in ["panicked at", "memory allocation of", "RUST_BACKTRACE"] {
        if o.stderr.contains(p) {
            bad.push(format!("stderr shows a panic or abort ({p:?})"));
        }
    }
    if !o.timed_out && o.code != Some(c.exit) && o.signal.is_none() {
        bad.push(format!("exit status {:?}, expected {}", o.code, c.exit));
    }
    for s in &c.stderr {
        if !o.stderr.contains(s.as_str()) {
            bad.push(format!("stderr lacks {s:?}"));
        }
    }
    for s in &c.stdout {
        if !o.stdout.contains(s.as_str()) {
            bad.push(format!("stdout lacks {s:?}"));
        }
    }
    for s in &c.absent {
        for (name, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if text.contains(s.as_str()) {
                bad.push(format!("{name} holds {s:?}"));
            }
        }
    }
    if c.exit != 0 && o.stderr.trim().is_empty() {
        bad.push("refused without a word on stderr".into());
    }
    bad
}

/// A case with the files its case file shares.
type Loaded = (BTreeMap<String, String>, Case);

fn load(dir: &Path) -> Result<Vec<Loaded>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut all = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let f: CaseFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        for c in f.case {
            if !["smartsim", "hourglass", "klogger"].contains(&c.bin.as_str()) {
                return Err(format!("{}: case {:?}: unknown bin {:?}", p.display(), c.name, c.bin));
            }
            if !names.insert(c.name.clone()) {
                return Err(format!("{}: case {:?} is named twice", p.display(), c.name));
            }
            all.push((f.files.clone(), c));
        }
    }
    Ok(all)
}

fn main() -> ExitCode {
    let opts = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("hostile: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    diag::init("hostile", diag::level(opts.verbosity));
    let cases = match load(&opts.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hostile: {e}");
            return ExitCode::from(2);
        }
    };
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|(_, c)| opts.only.as_ref().is_none_or(|o| c.name.contains(o.as_str())))
        .collect();
    if opts.list {
        for (_, c) in &cases {
            // A reader that stops early (`| head`) ends the list (and the program, quietly).
            diag::outln!("{:10} {}", c.bin, c.name);
        }
        return ExitCode::SUCCESS;
    }
    let bin_dir = match std::fs::canonicalize(&opts.bin_dir) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("hostile: --bin-dir {}: {e}", opts.bin_dir.display());
            return ExitCode::from(2);
        }
    };
    let root = nix::unistd::geteuid().is_root();
    let base = std::env::temp_dir().join(format!("hostile-{}", std::process::id()));
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    let (mut slowest, mut biggest) = ((Duration::ZERO, String::new()), (0u64, String::new()));
    let t0 = Instant::now();
    for (k, (shared, c)) in cases.iter().enumerate() {
        if c.root && !root {
            skipped += 1;
            continue;
        }
        let dir = base.join(format!("{k:04}"));
        let prepared = (|| -> Result<Outcome, String> {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let mut files = shared.clone();
            files.extend(c.files.clone());
            for (name, content) in &files {
                std::fs::write(dir.join(name), expand_bytes(content, &dir)?)
                    .map_err(|e| format!("{name}: {e}"))?;
            }
            for (name, target) in &c.symlinks {
                std::os::unix::fs::symlink(expand(target, &dir)?, dir.join(name))
                    .map_err(|e| format!("symlink {name}: {e}"))?;
            }
            for (name, target) in &c.hardlinks {
                std::fs::hard_link(dir.join(target), dir.join(name))
                    .map_err(|e| format!("hard link {name}: {e}"))?;
            }
            let args = c.args.iter().map(|a| expand(a, &dir)).collect::<Result<Vec<_>, _>>()?;
            run_case(&bin_dir.join(&c.bin), &args, &dir, Duration::from_secs(c.seconds))
        })();
        let problems = match &prepared {
            Ok(o) => {
                if o.elapsed > slowest.0 {
                    slowest = (o.elapsed, c.name.clone());
                }
                if o.max_rss > biggest.0 {
                    biggest = (o.max_rss, c.name.clone());
                }
                judge(c, o)
            }
            Err(e) => vec![format!("could not run: {e}")],
        };
        if problems.is_empty() {
            if let Ok(o) = &prepared {
                tracing::debug!("ok {} in {:.2} s, {} MiB", c.name, o.elapsed.as_secs_f64(), o.max_rss >> 20);
            }
            passed += 1;
            let _ = std::fs::remove_dir_all(&dir);
        } else {
            eprintln!(
                "FAIL {} ({} {})",
                c.name,
                c.bin,
                c.args.join(" ").chars().take(200).collect::<String>()
            );
            for p in &problems {
                eprintln!("     {p}");
            }
            if let Ok(o) = &prepared {
                let tail: String =
                    o.stderr.chars().rev().take(600).collect::<Vec<_>>().into_iter().rev().collect();
                eprintln!("     stderr: {}", tail.trim_end().replace('\n', "\n             "));
            }
            failed.push(c.name.clone());
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    diag::outln!(
        "hostile inputs: {} cases, {passed} passed, {} failed, {skipped} skipped (need root) in {:.1} s; \
         slowest {:.2} s ({}), largest {} MiB ({})",
        cases.len(),
        failed.len(),
        t0.elapsed().as_secs_f64(),
        slowest.0.as_secs_f64(),
        slowest.1,
        biggest.0 >> 20,
        biggest.1
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
