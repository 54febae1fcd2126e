//! The HTML report of a recording: what was recorded, then the sections every trace's report has
//! (`report::analyses`: tasks, tick billing, the effective-quantum CDFs of Etsion fig. 6 and the
//! billing scatter of fig. 4), the same page `smartsim trace html` makes of a simulated run.

use crate::analysis::{Group, Trace};
use crate::report;

/// The whole HTML page (`only` filters the tasks shown by name).
pub fn html_report(
    trace: &Trace,
    file: &str,
    hzs: &[u32],
    group: Group,
    n: usize,
    only: &[String],
) -> String {
    let r = report::report(trace, file, group, 20, only);
    let mut page = report_crate::HtmlReport::new(&format!("klogger report: {file}"));
    let mut about = format!(
        "Kernel {}, CONFIG_HZ {}, {} CPUs; {:.3} s recorded, {} events ({} lost), {} ticks, {} broken switch chains{}.",
        r.kernel,
        r.hz.map_or("unknown".to_string(), |h| h.to_string()),
        r.cpus,
        r.duration_ns as f64 / 1e9,
        r.events,
        r.lost,
        r.ticks,
        r.broken_chains,
        if r.broken_chains_by_reason.is_empty() {
            String::new()
        } else {
            let why: Vec<String> = r.broken_chains_by_reason.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!(" ({})", why.join(", "))
        }
    );
    if trace.left_out.any() {
        about += &format!(" To keep the trace consistent: {}.", trace.left_out.describe());
    }
    if let Some(p) = r.tick_phase_ns {
        about += &format!(
            " The recorded ticks fall {:.3} ms after multiples of the tick period (median).",
            p as f64 / 1e6
        );
    }
    page.section("Recording", &about, None, &[]);
    report_crate::analyses::trace_sections(&mut page, &trace.timeline, group, hzs, n, |s| {
        report::matches(&s.name, only)
    });
    page.render()
}
