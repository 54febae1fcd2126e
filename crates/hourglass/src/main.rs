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
            // Errors quote the command line and the scenario: shown as a terminal may show them.
            eprintln!("hourglass: {}\nTry 'hourglass --help'.", diag::visible_lines(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    if let Command::Run(c) | Command::Scenario { base: c, .. } = &cmd {
        diag::init("hourglass", diag::level(c.verbosity));
    }
    // The files are planned before the scenario is read or anything runs.
    let files = match &cmd {
        Command::Run(c) => plan(c, None),
        Command::Scenario { path, base, .. } => plan(base, Some(path)),
        Command::Help | Command::Version => Ok(Files::default()),
    };
    let files = match files {
        Ok(f) => f,
        Err(e) => {
            eprintln!("hourglass: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = match cmd {
        Command::Help => {
            diag::out!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            diag::outln!("hourglass {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Command::Run(cfg) => *cfg,
        Command::Scenario { path, base, duration_given } => {
            match hourglass::scenario::load(&path, *base, duration_given) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("hourglass: {}", diag::visible_lines(&e.to_string()));
                    return ExitCode::from(2);
                }
            }
        }
    };
    run_and_print(&cfg, &files)
}

/// The files of a run, planned.
#[derive(Default)]
struct Files {
    perfetto: Option<outputs::Output>,
    trace: Option<outputs::Output>,
}

/// Plans the files of a run: `--perfetto` and `--trace`, distinct from each other and from the
/// scenario, writable, and named as what they hold.
fn plan(
    c: &hourglass::config::RunConfig,
    scenario: Option<&std::path::Path>,
) -> Result<Files, outputs::Refusal> {
    let mut p = outputs::Plan::new();
    if let Some(s) = scenario {
        p.input("the scenario", s);
    }
    p.stdout("the run's report");
    let perfetto = p.output("--perfetto", c.perfetto.as_deref(), outputs::Kind::JSON);
    let trace = p.output("--trace", c.trace_file.as_deref(), outputs::Kind::TRACE);
    let planned = p.check()?;
    Ok(Files { perfetto: planned.get(perfetto).cloned(), trace: planned.get(trace).cloned() })
}

fn run_and_print(cfg: &hourglass::config::RunConfig, files: &Files) -> ExitCode {
    trace!("configuration: {cfg:?}");
    for m in &cfg.scenario_mapping {
        info!("scenario: {m}");
    }
    if let Err(e) = hourglass::run::check_safety(cfg) {
        eprintln!("hourglass: {e}");
        return ExitCode::from(2);
    }
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
    // The files first, then the results: a reader of the results that stops early (`| head`)
    // costs no file, and a file that cannot be written costs no result.
    let mut failed = false;
    if let Some(o) = &files.perfetto {
        match o
            .create()
            .and_then(|f| hourglass::output::to_perfetto(&r).write(f).map_err(|e| o.write_error(e)))
        {
            Ok(()) => o.wrote("open it in ui.perfetto.dev"),
            Err(e) => {
                eprintln!("hourglass: --perfetto: {e}");
                failed = true;
            }
        }
    }
    if let Some(o) = &files.trace {
        match o.create().and_then(|f| hourglass::output::write_trace(&r, f).map_err(|e| o.write_error(e))) {
            Ok(n) => o.wrote(&format!("{n} records; smartsim trace report reads it")),
            Err(e) => {
                eprintln!("hourglass: --trace: {e}");
                failed = true;
            }
        }
    }
    diag::out!("{}", hourglass::output::render(&r, cfg.format));
    if failed {
        return ExitCode::from(1);
    }
    if r.watchdog.is_some() {
        return ExitCode::from(3);
    }
    ExitCode::SUCCESS
}
