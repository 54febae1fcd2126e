//! One meaning for a scenario: the nice level or `SCHED_IDLE` hourglass runs each task of a
//! fair-class policy at gives the CPU-share ratios the simulated policy gives, computed from weights
//! (no thread runs), or the scenario is refused naming a task and its key, for a reason checked here
//! on its own terms. The simulator's side comes from the policy itself where it has weights (`eevdf`:
//! its own allocation, task by task, at each admission), from the rule its documentation states where
//! it has shares (`smart`, `wfq`, `wfq-credit`, `lottery`: the highest priority present divides the CPU
//! by share among its tasks with a share, else its first task of share 0 takes it), and from Solaris's
//! relation of nice and user priority for `ts`.

use hourglass::config::RunConfig;
use hourglass::sys::Priority;
use proptest::prelude::*;
use sched::eevdf::{IDLE_WEIGHT, WEIGHTS};
use sched::{OptValue, Options, TaskId, TaskParams};

/// A task of a generated scenario.
#[derive(Clone, Debug)]
struct Task {
    share: u32,
    priority: i32,
    /// Its start, in seconds.
    start: u64,
}

/// A generated scenario: a policy, `nice0_share` (eevdf), the tasks (cpu hogs).
#[derive(Clone, Debug)]
struct Case {
    policy: &'static str,
    nice0: Option<u32>,
    tasks: Vec<Task>,
}

impl Case {
    fn toml(&self) -> String {
        let mut s = format!("[machine]\nduration = \"3s\"\n[scheduler]\npolicy = \"{}\"\n", self.policy);
        if let Some(n) = self.nice0 {
            s += &format!("nice0_share = {n}\n");
        }
        for (i, t) in self.tasks.iter().enumerate() {
            s += &format!(
                "[[task]]\nname = \"t{i}\"\nmodel = \"cpu\"\nshare = {}\npriority = {}\nstart = \"{}s\"\n",
                t.share, t.priority, t.start
            );
        }
        s
    }

    fn opts(&self) -> Options {
        self.nice0.map(|n| ("nice0_share".to_string(), OptValue::Int(n.into()))).into_iter().collect()
    }

    fn top(&self) -> i32 {
        self.tasks.iter().map(|t| t.priority).max().unwrap()
    }
}

/// The kernel's weight of a thread's level.
fn weight(p: Priority) -> u64 {
    match p {
        Priority::Nice(n) => WEIGHTS[(i32::from(n) + 20) as usize],
        Priority::Idle => IDLE_WEIGHT,
        p => panic!("a fair-class policy's task at {p:?}"),
    }
}

/// How far a kernel weight lies from the exact 1.25 step of its nice level (the table's rounding).
fn table_rounding() -> f64 {
    (-20..=19)
        .map(|n: i32| ((WEIGHTS[(n + 20) as usize] as f64 / 1024.0).ln() + f64::from(n) * 1.25f64.ln()).abs())
        .fold(0.0, f64::max)
}

/// The split of one CPU the weights `w` give the tasks of `live`.
fn split(w: &[f64], live: &[usize]) -> Vec<f64> {
    let total: f64 = live.iter().map(|&i| w[i]).sum();
    live.iter().map(|&i| w[i] / total).collect()
}

/// `eevdf`: the simulated policy's own allocation of one CPU to each admitted task, after each
/// admission instant (all runnable), beside the split Linux gives the same tasks with weights `w`;
/// the first instant where they differ, if any.
fn eevdf_differs(case: &Case, w: &[f64]) -> Option<String> {
    let mut core = sched::build("eevdf", &case.opts(), 1).unwrap();
    let mut order: Vec<usize> = (0..case.tasks.len()).collect();
    order.sort_by_key(|&i| (case.tasks[i].start, i));
    let mut live = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let t = &case.tasks[i];
        let now = t.start * 1_000_000_000;
        let p = TaskParams { priority: t.priority, share: t.share, ..TaskParams::default() };
        core.admit(TaskId(i as u32), &p, now);
        core.wake(TaskId(i as u32), now);
        live.push(i);
        if order.get(k + 1).is_some_and(|&j| case.tasks[j].start == t.start) {
            continue;
        }
        let linux = split(w, &live);
        for (&j, l) in live.iter().zip(linux) {
            let sim = core.availability(TaskId(j as u32), now).allocation_rate / 100.0;
            if (sim - l).abs() > 1e-9 {
                return Some(format!("at {}s task {j}: simulated {sim}, Linux {l}", t.start));
            }
        }
    }
    None
}

/// Linux's own rule for `eevdf`'s tasks, written out here: share 0 or a priority below the highest
/// `SCHED_IDLE`, else the nice level nearest −log₁.₂₅(share / nice0_share), within −20..19.
fn eevdf_linux_weights(case: &Case) -> Vec<f64> {
    let (top, nice0) = (case.top(), f64::from(case.nice0.unwrap_or(1)));
    (case.tasks.iter())
        .map(|t| {
            if t.share == 0 || t.priority < top {
                return IDLE_WEIGHT as f64;
            }
            let n = (-(f64::from(t.share) / nice0).ln() / 1.25f64.ln()).round().clamp(-20.0, 19.0);
            WEIGHTS[(n as i32 + 20) as usize] as f64
        })
        .collect()
}

/// Shares: the simulator's split of one CPU among `live` (the highest priority present divides it by
/// share among its tasks with a share; without any, its first task of share 0 takes it), or `None`
/// when it gives the CPU to one of several tasks of share 0 by arrival, which no weights say.
fn shares_split(case: &Case, live: &[usize]) -> Option<Vec<f64>> {
    let top = live.iter().map(|&i| case.tasks[i].priority).max()?;
    let at_top = |zero: bool| {
        live.iter().filter(move |&&i| case.tasks[i].priority == top && (case.tasks[i].share == 0) == zero)
    };
    let total: f64 = at_top(false).map(|&i| f64::from(case.tasks[i].share)).sum();
    if total > 0.0 {
        let share = |i: usize| {
            if case.tasks[i].priority == top {
                f64::from(case.tasks[i].share) / total
            } else {
                0.0
            }
        };
        return Some(live.iter().map(|&i| share(i)).collect());
    }
    match at_top(true).count() {
        1 => Some(live.iter().map(|&i| f64::from(u8::from(case.tasks[i].priority == top))).collect()),
        _ => None,
    }
}

/// Shares: whether Linux's split with weights `w` says what the simulator's does, for every set of
/// tasks that may want the CPU together: the tasks the simulator gives the CPU get it in the ratio of
/// their shares, to within the kernel's resolution (levels 1.25× apart, so ½ level each, and the
/// table's rounding); those it gives none are `SCHED_IDLE`, below them. Returns the first set where
/// it does not.
fn shares_differ(case: &Case, levels: &[Priority], w: &[f64]) -> Option<String> {
    let n = case.tasks.len();
    let tolerance = 1.25f64.ln() + 2.0 * table_rounding() + 1e-12;
    for set in 1..(1u32 << n) {
        let live: Vec<usize> = (0..n).filter(|&i| set & (1 << i) != 0).collect();
        let Some(sim) = shares_split(case, &live) else {
            return Some(format!("{live:?}: the simulator serves tasks of share 0 by arrival"));
        };
        let linux = split(w, &live);
        let served: Vec<usize> = (0..live.len()).filter(|&k| sim[k] > 0.0).collect();
        for &a in &served {
            for &b in &served {
                let (s, l) = ((sim[a] / sim[b]).ln(), (linux[a] / linux[b]).ln());
                if (s - l).abs() > tolerance {
                    return Some(format!(
                        "{live:?}: tasks {} and {}: simulated {s}, Linux {l}",
                        live[a], live[b]
                    ));
                }
            }
            for k in (0..live.len()).filter(|&k| sim[k] == 0.0) {
                if levels[live[k]] != Priority::Idle || levels[live[a]] == Priority::Idle {
                    return Some(format!(
                        "{live:?}: task {} gets nothing simulated, not below task {}",
                        live[k], live[a]
                    ));
                }
            }
        }
    }
    None
}

/// Shares: what the simulator's order needs that two classes of Linux (nice levels, then one
/// `SCHED_IDLE` weight) cannot say, found on its own terms: more than two groups (a priority's tasks
/// with a share; each task of share 0), a second group of unequal shares, two tasks of share 0 at one
/// priority, or first-group shares further apart than the kernel's weights.
fn shares_unsayable(case: &Case) -> bool {
    let mut prios: Vec<i32> = case.tasks.iter().map(|t| t.priority).collect();
    prios.sort_unstable();
    prios.dedup();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for &p in prios.iter().rev() {
        let at: Vec<u32> = case.tasks.iter().filter(|t| t.priority == p).map(|t| t.share).collect();
        let with: Vec<u32> = at.iter().copied().filter(|&s| s > 0).collect();
        let zeros = at.len() - with.len();
        if zeros > 1 {
            return true;
        }
        groups.extend((!with.is_empty()).then_some(with));
        groups.extend((zeros == 1).then(|| vec![0]));
    }
    let spread = |g: &[u32]| {
        let (lo, hi) = (g.iter().min().unwrap(), g.iter().max().unwrap());
        f64::from(*hi) / f64::from((*lo).max(1))
    };
    // Shares 1.25^39.5 apart round to 40 levels: one more than nice 19 to -20 (the bound itself is
    // irrational; the margin is for the rounding of the two computations of it, nothing more).
    groups.len() > 2
        || groups.get(1).is_some_and(|g| g.iter().any(|&s| s != g[0]))
        || spread(&groups[0]) > 1.25f64.powf(39.5) * (1.0 - 1e-9)
}

/// Whether the scenario's meaning fits Linux's by the same token as [`shares_unsayable`] near its
/// edge: first-group shares within 1.25^38.5 of each other always fit; between that and 1.25^39.5 the
/// rounding decides.
fn shares_surely_sayable(case: &Case) -> bool {
    !shares_unsayable(case) && {
        let top = case.top();
        let g: Vec<u32> =
            case.tasks.iter().filter(|t| t.priority == top && t.share > 0).map(|t| t.share).collect();
        g.is_empty()
            || f64::from(*g.iter().max().unwrap()) / f64::from(*g.iter().min().unwrap()) < 1.25f64.powf(38.5)
    }
}

/// `ts`: the Solaris user priority (`ts` clamps to −60..60) that has no nice level n of −20..19 as
/// −3n.
fn ts_unsayable(t: &Task) -> bool {
    let upri = t.priority.clamp(-60, 60);
    upri % 3 != 0 || !(-20..=19).contains(&(-upri / 3))
}

/// The keys a refusal names, `(task, key)`, from its diagnostics
/// (`file:line:1: task[i].key (task "ti"): ...`).
fn refused(err: &workload::ScenarioError) -> Vec<(usize, String)> {
    (err.diagnostics.iter())
        .map(|d| {
            assert_eq!(d.file, "m.toml");
            let (task, rest) =
                d.field.strip_prefix("task[").and_then(|f| f.split_once("].")).expect(&d.field);
            let (key, name) = rest.split_once(' ').expect(&d.field);
            assert_eq!(name, format!("(task \"t{task}\")"));
            assert!(["share", "priority", "start"].contains(&key), "{}", d.field);
            (task.parse().unwrap(), key.to_string())
        })
        .collect()
}

/// Checks one case: mapped with the simulator's meaning, or refused for a reason that holds.
fn check(case: &Case) -> Result<(), TestCaseError> {
    let got = hourglass::scenario::load_str(&case.toml(), "m.toml", RunConfig::new(0), false);
    match got {
        Ok(cfg) => {
            let levels: Vec<Priority> = cfg.threads.iter().map(|t| t.priority).collect();
            let w: Vec<f64> = levels.iter().map(|&p| weight(p) as f64).collect();
            match case.policy {
                "eevdf" => {
                    prop_assert_eq!(&w, &eevdf_linux_weights(case));
                    prop_assert_eq!(eevdf_differs(case, &w), None);
                }
                "ts" => {
                    for (t, l) in case.tasks.iter().zip(&levels) {
                        let Priority::Nice(n) = *l else { panic!("a ts task at {l:?}") };
                        prop_assert_eq!(t.priority.clamp(-60, 60), -3 * i32::from(n), "{:?}", t);
                    }
                }
                _ => prop_assert_eq!(shares_differ(case, &levels, &w), None),
            }
        }
        Err(e) => {
            let named = refused(&e);
            prop_assert!(!named.is_empty());
            match case.policy {
                "eevdf" => {
                    // Linux's rule would give some task another share than the simulated policy does.
                    prop_assert!(eevdf_differs(case, &eevdf_linux_weights(case)).is_some(), "{}", e);
                    prop_assert!(named.iter().all(|(_, k)| k == "start"), "{}", e);
                }
                "ts" => {
                    for (i, key) in &named {
                        prop_assert!(key == "priority" && ts_unsayable(&case.tasks[*i]), "{}", e);
                    }
                }
                _ => {
                    prop_assert!(shares_unsayable(case), "{}", e);
                    prop_assert!(named.iter().all(|(_, k)| k == "share" || k == "priority"), "{}", e);
                }
            }
        }
    }
    Ok(())
}

const POLICIES: [&str; 6] = ["smart", "wfq", "wfq-credit", "lottery", "eevdf", "ts"];

/// A share: often small, sometimes 0, sometimes huge.
fn share() -> impl Strategy<Value = u32> {
    prop_oneof![3 => 1..=8u32, 1 => Just(0u32), 1 => 1..=100_000u32, 1 => any::<u32>()]
}

fn task(priorities: impl Strategy<Value = i32>) -> impl Strategy<Value = Task> {
    (share(), priorities, 0..3u64).prop_map(|(share, priority, start)| Task { share, priority, start })
}

fn case() -> impl Strategy<Value = Case> {
    let nice0 =
        prop_oneof![Just(None), (1..=1000u32).prop_map(Some), any::<u32>().prop_map(|n| Some(n.max(1)))];
    let priorities = prop_oneof![3 => -2..=2i32, 1 => -70..=70i32];
    (0..POLICIES.len(), nice0, proptest::collection::vec(task(priorities), 1..=6))
        .prop_map(|(p, nice0, tasks)| Case {
            policy: POLICIES[p],
            nice0: nice0.filter(|_| POLICIES[p] == "eevdf"),
            tasks,
        })
        .prop_filter("a scenario needs a task with a share", |c| c.tasks.iter().any(|t| t.share > 0))
}

/// Cases whose meaning Linux can be told, by construction: eevdf's tasks starting together, ts's
/// priorities multiples of 3 within the nice range, shares in two groups at most.
fn sayable() -> impl Strategy<Value = Case> {
    case().prop_map(|mut c| {
        match c.policy {
            "eevdf" => c.tasks.iter_mut().for_each(|t| t.start = 0),
            "ts" => c.tasks.iter_mut().for_each(|t| t.priority = 3 * t.priority.clamp(-19, 20)),
            _ => {
                // The highest priority's shares within 1 : 1000; the others one priority below it, of
                // one share; or, with nothing below it, one task of share 0 beside its shares.
                let top = c.top();
                for t in &mut c.tasks {
                    t.share = t.share.clamp(1, 1000);
                    if t.priority < top {
                        (t.priority, t.share) = (top - 1, 1);
                    }
                }
                let n = c.tasks.len();
                if n > 1 && c.tasks.iter().all(|t| t.priority == top) {
                    c.tasks[n - 1].share = 0;
                }
            }
        }
        c
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Any shares, priorities, starts, policies and `nice0_share`: hourglass's levels give the
    /// simulated policy's CPU-share ratios, or the scenario is refused naming the task and key whose
    /// meaning Linux cannot be told (and it cannot).
    #[test]
    fn hourglass_gives_the_simulators_share_ratios_or_refuses_naming_the_key(c in case()) {
        check(&c)?;
        if matches!(c.policy, "smart" | "wfq" | "wfq-credit" | "lottery") && shares_surely_sayable(&c) {
            let got = hourglass::scenario::load_str(&c.toml(), "m.toml", RunConfig::new(0), false);
            prop_assert!(got.is_ok(), "{}", got.unwrap_err());
        }
    }

    /// What Linux can be told is never refused.
    #[test]
    fn a_scenario_whose_meaning_linux_can_be_told_runs(c in sayable()) {
        let got = hourglass::scenario::load_str(&c.toml(), "m.toml", RunConfig::new(0), false);
        prop_assert!(got.is_ok(), "{}\n{}", c.toml(), got.unwrap_err());
        check(&c)?;
    }
}

/// A periodic task of a deadline policy: `exec`, `period` and `deadline` in ns.
#[derive(Clone, Debug)]
struct DlTask {
    exec: u64,
    period: u64,
    deadline: u64,
}

/// A generated `edf` scenario: periodic tasks (some with a deadline before, at or beyond their
/// period, some with periods or deadlines the kernel refuses) beside a cpu task.
fn dl_case() -> impl Strategy<Value = Vec<DlTask>> {
    let time = prop_oneof![3 => 1_000_000..=100_000_000u64, 1 => 1..=200_000u64, 1 => 1..=10_000_000_000u64];
    let task = (time.clone(), time.clone(), time).prop_map(|(a, b, c)| {
        let period = a.max(2);
        // exec below the period (the validator's rule); the deadline anywhere.
        DlTask { exec: (b % period).max(1), period, deadline: c }
    });
    proptest::collection::vec(task, 1..=4)
}

fn dl_toml(tasks: &[DlTask]) -> String {
    let mut s = "[machine]\nduration = \"1s\"\n[scheduler]\npolicy = \"edf\"\n".to_string();
    for (i, t) in tasks.iter().enumerate() {
        s += &format!(
            "[[task]]\nname = \"t{i}\"\nmodel = \"periodic\"\nexec = \"{}ns\"\nperiod = \"{}ns\"\ndeadline = \"{}ns\"\n",
            t.exec, t.period, t.deadline
        );
    }
    s + "[[task]]\nname = \"bg\"\nmodel = \"cpu\"\n"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Under a deadline policy, each periodic task is given to the kernel with the scenario's own
    /// deadline and period (1024 ns <= runtime <= deadline <= period, within the kernel's periods),
    /// and its mapping line says so; or the scenario is refused, naming only the keys the kernel
    /// would refuse, for a reason that holds.
    #[test]
    fn a_deadline_task_gets_its_own_deadline_or_is_refused_at_the_key(tasks in dl_case()) {
        let src = dl_toml(&tasks);
        let (lo, hi) = hourglass::sys::deadline_periods();
        let beyond = |t: &DlTask| t.deadline > t.period || t.deadline < 1024;
        let bad_period = |t: &DlTask| t.period < lo || t.period > hi;
        let parsed = workload::parse_str(&src, "m.toml");
        prop_assume!(parsed.is_ok());
        match hourglass::scenario::load_str(&src, "m.toml", RunConfig::new(0), false) {
            Ok(cfg) => {
                for (i, t) in tasks.iter().enumerate() {
                    prop_assert!(!beyond(t) && !bad_period(t), "{:?} accepted", t);
                    let r = cfg.threads[i].reservation.expect("a reservation");
                    prop_assert_eq!((r.deadline, r.period), (t.deadline, t.period));
                    prop_assert!(1024 <= r.amount && r.amount <= r.deadline, "{:?}", r);
                    let line = cfg.scenario_mapping.iter().find(|l| l.starts_with(&format!("task \"t{i}\""))).unwrap();
                    prop_assert_eq!(
                        line.contains(&format!(", deadline {}", workload::format_time(t.deadline))),
                        t.deadline != t.period,
                        "{}", line
                    );
                }
                prop_assert_eq!(cfg.threads[tasks.len()].reservation, None);
            }
            Err(e) => {
                prop_assert!(tasks.iter().any(|t| beyond(t) || bad_period(t)), "{}", e);
                for d in &e.diagnostics {
                    let (i, key) = d.field.strip_prefix("task[").and_then(|f| f.split_once("].")).expect(&d.field);
                    let t = &tasks[i.parse::<usize>().unwrap()];
                    match key.split(' ').next().unwrap() {
                        "deadline" => prop_assert!(beyond(t), "{}", d),
                        "period" => prop_assert!(bad_period(t), "{}", d),
                        other => prop_assert!(false, "refused at {}: {}", other, d),
                    }
                }
            }
        }
    }
}

/// A generated machine: `machine.cpus`, the policy's `partition`, each cpu task's `cpus` (an
/// affinity, as a bit set of the machine's CPUs), and `--cpu` if given.
#[derive(Clone, Debug)]
struct CpuCase {
    cpus: u32,
    partition: Option<&'static str>,
    affinity: Vec<Option<u32>>,
    given: Option<hourglass::config::CpuChoice>,
}

fn cpu_case() -> impl Strategy<Value = CpuCase> {
    use hourglass::config::CpuChoice;
    let given =
        prop_oneof![3 => Just(None), 1 => Just(Some(CpuChoice::All)), 1 => Just(Some(CpuChoice::One(0)))];
    let partition = prop_oneof![2 => Just(None), 1 => Just(Some("global")), 1 => Just(Some("affinity")), 1 => Just(Some("ffd"))];
    (
        1..=4u32,
        partition,
        proptest::collection::vec(proptest::option::weighted(0.3, any::<u32>()), 1..=3),
        given,
    )
        .prop_map(|(cpus, partition, affinity, given)| CpuCase {
            cpus,
            partition,
            affinity: affinity.into_iter().map(|a| a.map(|m| (m % ((1 << cpus) - 1)) + 1)).collect(),
            given,
        })
}

impl CpuCase {
    fn toml(&self) -> String {
        let mut s =
            format!("[machine]\nduration = \"1s\"\ncpus = {}\n[scheduler]\npolicy = \"edf\"\n", self.cpus);
        if let Some(p) = self.partition {
            s += &format!("partition = \"{p}\"\n");
        }
        for (i, a) in self.affinity.iter().enumerate() {
            s += &format!("[[task]]\nname = \"t{i}\"\nmodel = \"cpu\"\n");
            if let Some(mask) = a {
                let list: Vec<String> =
                    (0..self.cpus).filter(|c| mask & (1 << c) != 0).map(|c| c.to_string()).collect();
                s += &format!("cpus = [{}]\n", list.join(", "));
            }
        }
        s
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// `machine.cpus` runs as the simulator's machine or is refused at a key that cannot be followed:
    /// one CPU pinned, as many CPUs as hourglass may use unpinned (global, as Linux schedules), or
    /// `--cpu`'s choice with a warning when it differs; otherwise the scenario names `machine.cpus`,
    /// `scheduler.partition` or a task's `cpus`, each for a reason that holds.
    #[test]
    fn machine_cpus_is_followed_or_refused_naming_the_key(c in cpu_case()) {
        use hourglass::config::CpuChoice;
        let src = c.toml();
        let parsed = workload::parse_str(&src, "m.toml");
        prop_assume!(parsed.is_ok());
        let host = hourglass::sys::allowed_cpus().len();
        let n = c.cpus as usize;
        let mut base = RunConfig::new(0);
        if let Some(g) = c.given {
            base.cpu = match g { CpuChoice::One(_) => base.cpu, all => all };
            base.cpu_given = true;
        }
        let partitioned = matches!(c.partition, Some("affinity" | "ffd"));
        let part_of = |a: &Option<u32>| a.is_some_and(|m| m.count_ones() < c.cpus);
        match hourglass::scenario::load_str(&src, "m.toml", base.clone(), false) {
            Ok(cfg) => {
                let line = cfg.scenario_mapping.iter().find(|l| l.starts_with("machine.cpus = ")).unwrap();
                if c.given.is_some() {
                    prop_assert_eq!(cfg.cpu, base.cpu);
                    let same = match cfg.cpu { CpuChoice::One(_) => n == 1, CpuChoice::All => n == host };
                    prop_assert_eq!(cfg.scenario_warnings.iter().any(|w| w.starts_with("--cpu replaces machine.cpus")), !same);
                } else if n == 1 {
                    prop_assert!(matches!(cfg.cpu, CpuChoice::One(_)), "{}", line);
                } else {
                    prop_assert_eq!(cfg.cpu, CpuChoice::All);
                    prop_assert_eq!(n, host);
                    prop_assert!(!partitioned && !c.affinity.iter().any(part_of), "{}", src);
                }
            }
            Err(e) => {
                prop_assert!(c.given.is_none() && n > 1, "{}", e);
                for d in &e.diagnostics {
                    match d.field.as_str() {
                        "machine.cpus" => prop_assert_ne!(n, host),
                        "scheduler.partition" => prop_assert!(partitioned),
                        f => {
                            let i: usize = f.strip_prefix("task[").and_then(|f| f.split_once("].cpus")).expect(f).0.parse().unwrap();
                            prop_assert!(part_of(&c.affinity[i]), "{}", d);
                        }
                    }
                }
            }
        }
    }
}
