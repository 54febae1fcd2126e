//! `hourglass`: thin binary over the library (see `hourglass --help`).

#![forbid(unsafe_code)]

use hourglass::cli::{self, Command};
use std::process::ExitCode;
use tracing::{info, trace, warn};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.first().map(|s| s.as_str()) {
        Some("analyze") => return hourglass::analyze::main(&argv[1..]),
        Some("bench") => return hourglass::bench::main(&argv[1..]),
        _ => {}
    }
    let cmd = match cli::parse(&argv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hourglass: {e}\nTry 'hourglass --help'.");
            return ExitCode::from(2);
        }
    };
    if let Command::Run(c) | Command::Scenario { base: c, .. } = &cmd {
        diag::init("hourglass", diag::level(c.verbosity));
    }
    let cfg = match cmd {
        Command::Help => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("hourglass {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Command::Run(cfg) => *cfg,
        Command::Scenario { path, base, duration_given } => {
            match hourglass::scenario::load(&path, *base, duration_given) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("hourglass: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    run_and_print(&cfg)
}

fn run_and_print(cfg: &hourglass::config::RunConfig) -> ExitCode {
    trace!("configuration: {cfg:?}");
    for m in &cfg.scenario_mapping {
        info!("scenario: {m}");
    }
    if let Err(e) = hourglass::run::check_safety(cfg) {
        eprintln!("hourglass: {e}");
        return ExitCode::from(2);
    }
    // Output files are created before the run, so that a bad path costs nothing but this line.
    let open = |opt: &str, p: &Option<std::path::PathBuf>| -> Result<Option<std::fs::File>, String> {
        let Some(p) = p else { return Ok(None) };
        if p.is_dir() {
            return Err(format!("{opt} {}: is a directory", p.display()));
        }
        std::fs::File::create(p).map(Some).map_err(|e| format!("{opt} {}: {e}", p.display()))
    };
    let (perfetto, trace_file) = match (open("--perfetto", &cfg.perfetto), open("--trace", &cfg.trace_file)) {
        (Ok(p), Ok(t)) => (p, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("hourglass: {e}");
            return ExitCode::from(2);
        }
    };
    if cfg.format != hourglass::config::Format::Json {
        info!(
            "running {} thread(s) for {} (nothing is printed until the end)...",
            cfg.threads.len(),
            hourglass::units::format_time(cfg.duration)
        );
    }
    let r = match hourglass::run::run(cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hourglass: {e}");
            return ExitCode::from(1);
        }
    };
    for w in &r.warnings {
        warn!("{w}");
    }
    print!("{}", hourglass::output::render(&r, cfg.format));
    if let (Some(f), Some(p)) = (perfetto, &cfg.perfetto) {
        if let Err(e) = hourglass::output::to_perfetto(&r).write(f) {
            eprintln!("hourglass: --perfetto {}: {e}", p.display());
            return ExitCode::from(1);
        }
        info!("wrote {} (open it in ui.perfetto.dev)", p.display());
    }
    if let (Some(f), Some(p)) = (trace_file, &cfg.trace_file) {
        match hourglass::output::write_trace(&r, f) {
            Ok(n) => {
                info!("wrote {} ({n} records; smartsim trace report reads it)", p.display())
            }
            Err(e) => {
                eprintln!("hourglass: --trace {}: {e}", p.display());
                return ExitCode::from(1);
            }
        }
    }
    if r.watchdog.is_some() {
        return ExitCode::from(3);
    }
    ExitCode::SUCCESS
}
