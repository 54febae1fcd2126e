//! The dissertation's §6.2 microbenchmarks, each compared with the paper (Nieh 1999, ch. 6).
//! The conditions are the ones the project set for each figure; nothing here is tuned per run.

use smartsim::papers::{self, Metric, Run};

fn run(id: &str) -> (Run, Vec<Metric>) {
    let e = papers::EXPERIMENTS.iter().find(|e| e.id == id).expect("experiment exists");
    papers::run(e).expect("experiment runs")
}

fn metric<'a>(ms: &'a [Metric], name: &str) -> &'a Metric {
    ms.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}"))
}

/// Fig. 6-1: C1, C2, C3 with shares 3:2:1 finish within 1 % of the ideal 676, 846, 1014 s.
#[test]
fn fig_6_1_conventional_shares_finish_within_one_percent_of_ideal() {
    let (_, ms) = run("smart-6.2.1");
    for c in ["C1", "C2", "C3"] {
        let m = metric(&ms, &format!("{c} finish s"));
        let ideal = m.ideal.unwrap();
        assert!((m.ours - ideal).abs() <= 0.01 * ideal, "{c}: finished at {} s, ideal {ideal} s", m.ours);
    }
    // and the slopes are 3:2:1, then 2:1
    assert!((metric(&ms, "C1:C3 slope, all three running").ours - 3.0).abs() < 0.03);
    assert!((metric(&ms, "C2:C3 slope, after C1").ours - 2.0).abs() < 0.02);
}

/// Fig. 6-2: R1 and R2 in underload miss no deadline.
#[test]
fn fig_6_2_underload_misses_no_deadline() {
    let (run, _) = run("smart-6.2.2.1-fig6-2");
    assert_eq!(run.missed("R1"), 0.0);
    assert_eq!(run.missed("R2"), 0.0);
    assert_eq!(run.met("R1"), 2000.0);
    assert_eq!(run.met("R2"), 888.0);
}

/// Fig. 6-3: on a nearly 100 % loaded system R1 misses at most 1 % (paper: 3 of 1999), R3 none.
#[test]
fn fig_6_3_nearly_full_load_r1_misses_at_most_one_percent_r3_none() {
    let (run, _) = run("smart-6.2.2.1-fig6-3");
    assert!(run.missed("R1") <= 20.0, "R1 missed {}", run.missed("R1"));
    assert_eq!(run.missed("R3"), 0.0);
    assert_eq!(run.met("R3"), 1000.0);
}

/// Figs. 6-4 and 6-5: in overload, deadlines met are within 5 % of the ideal 1000/1166/1333 or between
/// the paper's 999/1100/1331 and the ideal.
#[test]
fn fig_6_4_and_6_5_proportional_sharing_in_overload() {
    let (_, ms) = run("smart-6.2.2.2");
    for r in ["R1", "R2", "R3"] {
        let m = metric(&ms, &format!("{r} deadlines met"));
        let (paper, ideal) = (m.paper.unwrap(), m.ideal.unwrap());
        let within = (m.ours - ideal).abs() <= 0.05 * ideal;
        let between = m.ours >= paper.min(ideal) && m.ours <= paper.max(ideal);
        assert!(within || between, "{r}: met {} (paper {paper}, ideal {ideal})", m.ours);
    }
    // During the overloaded first 40 s, consumption follows the shares 3:2:1 (paper 2.80 : 2.02 : 1).
    assert!((metric(&ms, "R1:R3 slope, 0-40 s").ours - 3.0).abs() < 0.3);
    assert!((metric(&ms, "R2:R3 slope, 0-40 s").ours - 2.0).abs() < 0.2);
}

/// Figs. 6-6 and 6-7: a real-time task asking less than its share misses nothing, and the CPU is
/// split within 3 points of the paper's 48/52 % and 72/28 %.
#[test]
fn fig_6_6_and_6_7_real_time_within_its_share() {
    for (id, rt, conv) in [("smart-6.2.3.1-fig6-6", "R1", "C1"), ("smart-6.2.3.1-fig6-7", "R2", "C2")] {
        let (run, ms) = run(id);
        assert_eq!(run.missed(rt), 0.0, "{id}: {rt} missed deadlines");
        for t in [rt, conv] {
            let m = metric(&ms, &format!("{t} CPU %"));
            let paper = m.paper.unwrap();
            assert!((m.ours - paper).abs() <= 3.0, "{id}: {t} got {:.1} %, paper {paper} %", m.ours);
        }
    }
}

/// §6.2.3.2: a latency tolerance of the conventional task does not make the real-time task miss more.
/// (The paper's 192 → 0 misses is not reproduced: see the README and the experiment's notes.)
#[test]
fn section_6_2_3_2_latency_tolerance_does_not_hurt() {
    let (tol0, _) = run("smart-6.2.3.2-tol0");
    let (tol100, _) = run("smart-6.2.3.2-tol100");
    assert!(tol100.missed("R1") <= tol0.missed("R1"));
}

/// Figs. 6-8 and 6-9: two overloaded real-time tasks and a conventional one with equal shares each get
/// about a third, and the real-time ones meet about half their deadlines (ideal 1000, paper 985/998).
#[test]
fn fig_6_8_and_6_9_overload_with_a_conventional_task() {
    let (run, _) = run("smart-6.2.3.3");
    for r in ["R1", "R2"] {
        assert!((run.met(r) - 1000.0).abs() <= 50.0, "{r} met {}", run.met(r));
    }
    assert!((run.finish_s("C1") - 120.0).abs() <= 6.0, "C1 finished at {}", run.finish_s("C1"));
}

/// The fluid ideal reproduces the ideals the dissertation derives in the text.
#[test]
fn fluid_ideal_matches_the_papers_ideals() {
    // §6.2.1 prints 676, 846, 1014 s; exactly, the middle phase lasts (338 − 676·2/6)·3/2 = 169 s, not
    // the 170 s the text rounds to, so C2's ideal finish is 845 s.
    // The dissertation's ideals assume each request needs the most the scenario allows: the ideal
    // of the scenario alone (not of a run's draws).
    let nominal = |id: &str| smartsim::ideal::ideal(&run(id).0.scenario);
    let idx = |id: &str, name: &str| run(id).0.scenario.tasks.iter().position(|t| t.name == name).unwrap();
    let i = nominal("smart-6.2.1");
    for (c, want) in [("C1", 676.0), ("C2", 845.0), ("C3", 1014.0)] {
        let got = i.finish(idx("smart-6.2.1", c));
        assert!((got - want).abs() < 0.5, "{c}: {got}");
    }
    let i = nominal("smart-6.2.2.2");
    for (t, want) in [("R1", 20000.0), ("R2", 23333.0), ("R3", 26667.0)] {
        let got = i.total(idx("smart-6.2.2.2", t));
        assert!((got - want).abs() < 1.0, "{t}: {got}");
    }
    // Deadlines met: 1000, 1166, 1333 (R2: 40 s × 2/6 / 20 ms + 500 requests in underload).
    for (t, want) in [("R1", 1000.0), ("R2", 1166.0), ("R3", 1333.0)] {
        let got = i.met_at(idx("smart-6.2.2.2", t), 82.0);
        assert!((got - want).abs() <= 1.0, "{t}: {got}");
    }
    let i = nominal("smart-6.2.2.1-fig6-2");
    assert!((i.total(0) - 60000.0).abs() < 1.0);
    assert!((i.total(1) - 17760.0).abs() < 1.0);
}

/// The ideal of each figure is computed from the run's own draws, ends at the requested duration,
/// and where it is a bound (it meets every request) no run of ours is above it at any sample.
#[test]
fn ideal_curves_serve_the_runs_draws_and_bound_ours_where_they_are_a_bound() {
    let mut bounds = 0;
    for e in papers::EXPERIMENTS.iter().filter(|e| !e.figures.is_empty()) {
        let (r, _) = papers::run(e).expect("runs");
        let end = r.scenario.machine.duration as f64 / 1e9;
        let tl = &r.result.timeline;
        assert_eq!(*tl.at.last().unwrap() as f64 / 1e9, end, "{}: our curves cover the duration", e.id);
        for (i, t) in r.scenario.tasks.iter().enumerate() {
            let cpu = &r.ideal.cpu[i];
            assert_eq!(cpu.last().unwrap().0, end, "{} {}: the ideal ends at the duration", e.id, t.name);
            assert!(cpu.iter().all(|p| p.0 <= end));
            let workload::Model::Periodic(_) = t.model else { continue };
            let met = &r.ideal.met[i];
            assert_eq!(met.last().unwrap().0, end, "{} {}", e.id, t.name);
            // The ideal CPU is what the requests drew, no more: at most the sum of their draws, and
            // all of it but the part after the end where every request is met.
            let drawn: f64 = r.draws[i].iter().map(|d| d.exec as f64 / 1e6).sum();
            let after_end: f64 = r.draws[i]
                .iter()
                .filter(|d| d.deadline as f64 / 1e9 > end)
                .map(|d| d.exec as f64 / 1e6)
                .sum();
            assert!(r.ideal.total(i) <= drawn + 1e-6, "{} {}: {} > {drawn}", e.id, t.name, r.ideal.total(i));
            let ours_met = r.met(&t.name);
            if r.ideal.all_met[i] {
                bounds += 1;
                assert!(r.ideal.total(i) >= drawn - after_end - 1e-3, "{} {}", e.id, t.name);
                // Every request met in the ideal: ours is at or below it at every sample.
                for (k, at) in tl.at.iter().enumerate() {
                    let s = *at as f64 / 1e9;
                    let ours = tl.met[k][i] as f64;
                    assert!(
                        ours <= r.ideal.met_at(i, s),
                        "{} {} at {s} s: ours {ours} > ideal",
                        e.id,
                        t.name
                    );
                }
                assert!(ours_met <= r.ideal.met_at(i, end));
            }
        }
    }
    assert!(bounds >= 6, "the bound was checked for {bounds} tasks");
    // Fig. 6-9: R1 and R2 draw 38-41 ms (39.5 on average), so their third of 120 s serves more than
    // the 1000 requests of 40 ms the dissertation counts, and ours (1000 each) is below it.
    let (r, _) = run("smart-6.2.3.3");
    for (i, name) in [(0, "R1"), (1, "R2")] {
        let ideal = r.ideal.met_at(i, 125.0);
        assert!(ideal > 1000.0 && ideal < 1030.0, "{name}: ideal {ideal}");
        assert!(r.met(name) <= ideal, "{name}: ours {} above the ideal {ideal}", r.met(name));
    }
}

/// The report's "ideal of our draws" column: every count of deadlines met carries it, it is the
/// ideal the figures draw, and where that ideal meets every request ours does not exceed it.
#[test]
fn the_ideal_of_our_draws_is_printed_for_every_count_of_deadlines_met() {
    for e in papers::EXPERIMENTS {
        let (r, ms) = papers::run(e).unwrap();
        for m in ms.iter().filter(|m| m.name.contains(" met")) {
            let task = m.name.split(' ').next().unwrap();
            let i = r.scenario.tasks.iter().position(|t| t.name == task).unwrap();
            let drawn = m.drawn.unwrap_or_else(|| panic!("{} {}: no ideal of our draws", e.id, m.name));
            let by = if m.name.contains("first 40 s") { 40.0 } else { f64::INFINITY };
            assert_eq!(drawn, r.ideal.met_at(i, by), "{} {}", e.id, m.name);
            if r.ideal.all_met[i] {
                assert!(m.ours <= drawn, "{} {}: ours {} > {drawn}", e.id, m.name, m.ours);
            }
        }
    }
}

/// Fig. 4-1's scenario: A and B telling SMART their period (`period`) or not (`interarrival`).
fn figure_4_1_scenario(spacing: &str) -> workload::Scenario {
    let src = format!(
        r#"
[machine]
duration = "10s"
hz = 0
[scheduler]
policy = "smart"
quantum = "40ms"
[[task]]
name = "A"
model = "periodic"
exec = "40ms"
{spacing} = "80ms"
deadline = "40ms"
estimate = "exact"
start = "200ms"
[[task]]
name = "B"
model = "periodic"
exec = "40ms"
{spacing} = "80ms"
deadline = "80ms"
estimate = "exact"
start = "200ms"
[[task]]
name = "C"
model = "cpu"
share = 2
latency_tolerance = "100ms"
"#
    );
    workload::parse_str(&src, "fig4-1.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// A run of fig. 4-1's scenario: its result, and who ran at the instants `at` after A and B arrive
/// (200 ms), and A's notifications (instant, deadline), both counted from their arrival.
fn figure_4_1_run(
    scn: &workload::Scenario,
    at: &[u64],
) -> (smartsim::SimResult, Vec<String>, Vec<(u64, u64)>) {
    use std::{cell::RefCell, rc::Rc};
    let t0 = 200_000_000;
    let mut sim = smartsim::simulator(scn, None).unwrap();
    let records = Rc::new(RefCell::new(Vec::new()));
    let sink = records.clone();
    sim.trace_to(move |r| sink.borrow_mut().push(r));
    let r = sim.run();
    let records = records.take();
    let ran = at
        .iter()
        .map(|&t| {
            records
                .iter()
                .find_map(|rec| match *rec {
                    trace::Record::Run { task, start, end, .. } if start <= t0 + t && t0 + t < end => {
                        Some(scn.tasks[task as usize].name.clone())
                    }
                    _ => None,
                })
                .unwrap_or_default()
        })
        .collect();
    let notified = records
        .iter()
        .filter_map(|rec| match *rec {
            trace::Record::Notify { task: 0, at, deadline } => Some((at - t0, deadline - t0)),
            _ => None,
        })
        .collect();
    (r, ran, notified)
}

/// Fig. 4-1, the dissertation's worked example of SMART (§4.5): real-time A and B, each 40 ms every 80
/// ms with deadlines out of phase (A's 40 ms after its release, B's 80 ms), and conventional C, shares
/// 1:1:2, quantum 40 ms, C with a bias of 100 ms when A and B arrive. C runs alone first (from 0 to 200
/// ms) to build that bias: its latency tolerance caps the bias table's steps at 100 ms. From A and B's
/// arrival: the BVFTs are A = B = V + 40, C = V + 70 ((bias + quantum)/2), so A runs first, by the
/// earlier deadline, then B; at 80 ms C, whose BVFT is now the earliest; at 120 ms A_2 (due at 120 ms)
/// cannot be met, so B runs and A is notified; in the steady state C gets twice A's CPU.
///
/// The example holds when A and B give SMART time constraints without a period (`interarrival`: each
/// request on its own). Told their period, eq. 9 counts A's next request (its fraction F = 1/2 of the
/// CPU from its deadline on) in B's feasibility test: at time 0, A's 40 ms, B's 40 ms and 20 ms of A's
/// future make 100 ms of demand by B's deadline at 80 ms, and SMART rejects B at once. The dissertation's
/// figure does not show that, so its example is of requests without a period; we assert both.
#[test]
fn figure_4_1_worked_example() {
    const MS: u64 = 1_000_000;
    let at = [0, 40 * MS, 80 * MS, 120 * MS];
    let (r, ran, notified) = figure_4_1_run(&figure_4_1_scenario("interarrival"), &at);
    assert_eq!(ran, ["A", "B", "C", "B"], "fig. 4-1(b): A, B, C, then B while A_2 is dropped");
    assert_eq!(
        notified.first(),
        Some(&(120 * MS, 120 * MS)),
        "A is told at 120 ms that A_2 (due then) is lost"
    );
    // The steady state: A and B the same CPU (within a quantum) over the 9.8 s after their arrival, and C
    // twice A's, less its bias, within a quantum: the bias delays C, it does not take its share
    // (2480, 2480 and 4840 ms when written).
    let cpu = |n: &str| r.task(n).unwrap().cpu_ns;
    let c_after = cpu("C") - 200 * MS;
    assert!(cpu("A").abs_diff(cpu("B")) <= 40 * MS, "A {} B {}", cpu("A"), cpu("B"));
    let lag = (2 * cpu("A")).abs_diff(c_after);
    assert!(lag.abs_diff(100 * MS) <= 40 * MS, "C {c_after} A {}", cpu("A"));
    // Told their periods, B is rejected at once (eq. 9 with A's future demand) and A runs next at 80 ms.
    let (_, ran, _) = figure_4_1_run(&figure_4_1_scenario("period"), &at);
    assert_eq!(ran, ["A", "C", "A", "B"]);
}
