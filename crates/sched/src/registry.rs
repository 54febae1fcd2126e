//! The registry: one entry per policy, from which every tool learns what policies exist, how to
//! build each, what its options are, and how it maps onto Linux. `smartsim policies`, hourglass's
//! scenario mapping, `scx_smart --policy` and the tables of docs/scenario.md and ARCHITECTURE.md come from
//! here (a test checks the tables). Each entry is kept in its policy's file, beside the code it
//! describes, so adding a policy is one new file (the policy, its entry, its tests), its `mod` line
//! in `lib.rs` and its line in [`REGISTRY`]; the conformance suite covers it without being named.

use std::fmt;

use crate::linux::FairMeaning;
use crate::partition::Partitioned;
use crate::{Core, Nanos, OptValue, Options, Policy, MAX_CPUS, MAX_TIME};

/// The Linux scheduling class `hourglass --scenario` runs a policy's tasks in: the kernel's nearest
/// counterpart of the policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinuxClass {
    /// The fair class (`SCHED_OTHER`, `SCHED_IDLE`): nice levels from the shares.
    Fair,
    /// `SCHED_FIFO`, priorities from the tasks' priorities.
    Fifo,
    /// `SCHED_RR`, priorities from the tasks' priorities.
    Rr,
    /// `SCHED_DEADLINE` for periodic tasks, the fair class for the others.
    Deadline,
}

impl LinuxClass {
    /// How the class is named in outputs.
    pub fn name(self) -> &'static str {
        match self {
            LinuxClass::Fair => "fair (SCHED_OTHER)",
            LinuxClass::Fifo => "SCHED_FIFO",
            LinuxClass::Rr => "SCHED_RR",
            LinuxClass::Deadline => "SCHED_DEADLINE",
        }
    }
}

/// An option of a policy: a `[scheduler]` key of a scenario.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OptionDoc {
    /// The key.
    pub key: &'static str,
    /// Its default, as a user would write it.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// An option's documentation (for the entries).
pub(crate) const fn opt(key: &'static str, default: &'static str, about: &'static str) -> OptionDoc {
    OptionDoc { key, default, about }
}

/// One policy of the registry.
pub struct Entry {
    /// Its name (`[scheduler] policy`, `--policy`).
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// The file that holds it, in this crate.
    pub source: &'static str,
    /// Its options, with their defaults (besides `partition`, which every policy takes).
    pub options: &'static [OptionDoc],
    /// The Linux class hourglass runs its tasks in.
    pub linux: LinuxClass,
    /// The options that make its shares mean kernel weights (100 = nice 0), as `scx_smart` passes
    /// them; empty when only the ratio of shares matters.
    pub kernel_weights: &'static [(&'static str, i64)],
    /// What its tasks' `share` and `priority` mean, so that Linux's fair class is told the same
    /// ([`crate::linux`]); used when [`Entry::linux`] is [`LinuxClass::Fair`].
    pub fair: FairMeaning,
    /// It never leaves a CPU idle while a runnable task that may run there waits (checked by the
    /// conformance suite).
    pub work_conserving: bool,
    /// It may notify a task that its deadline will not be met (SMART §3.4.2).
    pub notifies: bool,
    /// Builds it for `cpus` CPUs from its options.
    pub build: Builder,
    /// How often it decides, from its options ([`Pace`]): what the run estimate counts before a run.
    pub pace: Pacer,
    /// The names of the kinds of task it tells apart by [`crate::TaskParams::class`] besides its own
    /// name (`rt`: `fifo` and `rr`), which a task's `class` may give; under a class stack, the names by
    /// which a task joins this policy's class ([`classes`]).
    pub classes: &'static [&'static str],
    /// For a policy made of policies (the class stack): the class names its tasks may give, from its
    /// options; `None` = its name and [`Entry::classes`].
    pub class_names: Option<ClassNames>,
}

/// How a policy made of policies tells the class names it serves from its options.
pub type ClassNames = fn(&mut OptReader<'_>) -> Result<Vec<&'static str>, PolicyError>;

/// How an entry builds its policy for a number of CPUs from its options.
pub type Builder = fn(&mut OptReader<'_>, usize) -> Result<Box<dyn Policy>, PolicyError>;

/// How an entry tells its [`Pace`] on a number of CPUs from its options (read as its builder reads
/// them, so that the answer is the policy's own).
pub type Pacer = fn(&mut OptReader<'_>, usize) -> Result<Pace, PolicyError>;

/// The shortest time a policy lets a task run before it decides again: its slice or quantum.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    /// How long, at least [`MIN_SLICE`].
    pub nanos: Nanos,
    /// The option that set it, or `None` when it is the policy's default (or its table's).
    pub key: Option<&'static str>,
}

impl Slice {
    /// The slice `nanos` read from option `key`: named only when the scenario gives the key.
    pub fn of(o: &OptReader<'_>, key: &'static str, nanos: Nanos) -> Slice {
        Slice { nanos, key: o.opts.contains_key(key).then_some(key) }
    }
}

/// How often a policy decides, as the run estimate (`smartsim`'s budget) counts it before a run: one
/// decision per slice end on each busy CPU, and one per CPU each time its own periodic timer fires
/// and reschedules every CPU. Decisions on a task's release, wake-up or completion are counted with
/// the requests.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pace {
    /// Its shortest slice or quantum; `None` when a task runs until it blocks or is preempted.
    pub slice: Option<Slice>,
    /// The period of its own timer that reschedules every CPU (`ts`'s `ts_update`), if it has one.
    pub timer: Option<Nanos>,
    /// Whether its decisions walk its runnable tasks, and how: the estimate counts the tasks
    /// walked beside the events, and the policy counts them as it goes ([`crate::Policy::walked`]).
    pub walks: Walks,
}

/// How a policy's decisions walk its tasks ([`Pace::walks`]); ordered from the cheapest.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Walks {
    /// In constant or logarithmic time (lottery's tree, linux-2.4's goodness order: each walks the
    /// queue only once a task has a CPU affinity, which the estimate does not count, and counts what
    /// it walks).
    #[default]
    Nothing,
    /// Every runnable task at each decision, and, when the requests of its periodic tasks ask for
    /// more than the CPUs, every candidate inserted one by one with a check of the schedule so far
    /// (SMART's working schedule in overload, §4.6): events × tasks².
    TasksSquaredInOverload,
}

/// The pace of a policy without slices or timers of its own.
fn unpaced(_: &mut OptReader<'_>, _: usize) -> Result<Pace, PolicyError> {
    Ok(Pace::default())
}

impl Entry {
    /// The entry of the policy `name`, kept in `source` and built by `build`; by default it has no
    /// options, runs in Linux's fair class with shares that are ratios within a priority
    /// ([`FairMeaning::Shares`]), passes no kernel weights, is work-conserving and does not notify.
    /// Its one line on what it is comes next ([`Entry::about`]).
    pub const fn new(name: &'static str, source: &'static str, build: Builder) -> Entry {
        Entry {
            name,
            about: "",
            source,
            options: &[],
            linux: LinuxClass::Fair,
            kernel_weights: &[],
            fair: FairMeaning::Shares,
            work_conserving: true,
            notifies: false,
            build,
            pace: unpaced,
            classes: &[],
            class_names: None,
        }
    }
    /// What it is, in one line.
    pub const fn about(self, about: &'static str) -> Entry {
        Entry { about, ..self }
    }
    /// Its options, with their defaults.
    pub const fn options(self, options: &'static [OptionDoc]) -> Entry {
        Entry { options, ..self }
    }
    /// The Linux class hourglass runs its tasks in.
    pub const fn linux(self, linux: LinuxClass) -> Entry {
        Entry { linux, ..self }
    }
    /// The options that make its shares kernel weights.
    pub const fn kernel_weights(self, kernel_weights: &'static [(&'static str, i64)]) -> Entry {
        Entry { kernel_weights, ..self }
    }
    /// What its tasks' share and priority mean on Linux's fair class.
    pub const fn fair(self, fair: FairMeaning) -> Entry {
        Entry { fair, ..self }
    }
    /// It may leave a CPU idle while a task waits (the conformance suite then does not check that).
    pub const fn not_work_conserving(self) -> Entry {
        Entry { work_conserving: false, ..self }
    }
    /// It may notify a task that its deadline will not be met.
    pub const fn notifying(self) -> Entry {
        Entry { notifies: true, ..self }
    }
    /// How often it decides (by default: no slice, no timer of its own).
    pub const fn pace(self, pace: Pacer) -> Entry {
        Entry { pace, ..self }
    }
    /// The kinds of task it tells apart by their `class`, besides its own name.
    pub const fn classes(self, classes: &'static [&'static str]) -> Entry {
        Entry { classes, ..self }
    }
    /// The class names it serves come from its options (the class stack).
    pub const fn class_names(self, class_names: ClassNames) -> Entry {
        Entry { class_names: Some(class_names), ..self }
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Every policy, one entry each (each kept in its policy's file, beside the code it describes).
#[rustfmt::skip]
pub const REGISTRY: &[Entry] = &[
    crate::smart::ENTRY,
    crate::wfq::WFQ,
    crate::wfq::WFQ_CREDIT,
    crate::edf::ENTRY,
    crate::fixed::FIFO,
    crate::fixed::RR,
    crate::fixed::RT,
    crate::ts::ENTRY,
    crate::svr4_ts::ENTRY,
    crate::svr4_rt::RT,
    crate::svr4_rt::SYS,
    crate::eevdf::ENTRY,
    crate::cfs::ENTRY,
    crate::lottery::ENTRY,
    crate::linux24::ENTRY,
    crate::cbs::ENTRY,
    crate::stack::ENTRY,
];

impl LinuxClass {
    /// Its name in the tables.
    fn short(self) -> &'static str {
        match self {
            LinuxClass::Fair => "fair",
            LinuxClass::Fifo => "`SCHED_FIFO`",
            LinuxClass::Rr => "`SCHED_RR`",
            LinuxClass::Deadline => "`SCHED_DEADLINE`",
        }
    }
}

/// The registry as a Markdown table, as docs/scenario.md and ARCHITECTURE.md show it (a test checks they
/// do): each policy's name, what it is, its options with their defaults, the Linux class hourglass
/// runs it in, whether it notifies, and its file.
pub fn table_markdown() -> String {
    let mut out = String::from(
        "| policy | what it is | options (default) | on Linux (hourglass) | notifies | file |\n|---|---|---|---|---|---|\n",
    );
    for e in REGISTRY {
        let opts: Vec<String> = e.options.iter().map(|o| format!("`{}` {}", o.key, o.default)).collect();
        out += &format!(
            "| `{}` | {} | {} | {} | {} | `crates/sched/src/{}` |\n",
            e.name,
            e.about,
            if opts.is_empty() { "none".to_string() } else { opts.join(", ") },
            e.linux.short(),
            if e.notifies { "yes" } else { "no" },
            e.source
        );
    }
    out
}

/// The entry of policy `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

/// The names of every policy, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|e| e.name)
}

/// The class names a task's `class` may give under policy `name` with options `opts`: the policy's
/// own name and the kinds it tells apart ([`Entry::classes`]).
pub fn classes(name: &str, opts: &Options) -> Result<Vec<&'static str>, PolicyError> {
    let e = entry(name).ok_or_else(|| PolicyError::Unknown(name.to_string()))?;
    match e.class_names {
        Some(f) => f(&mut OptReader::new(name, opts)),
        None => Ok(std::iter::once(e.name).chain(e.classes.iter().copied()).collect()),
    }
}

/// What goes wrong when a policy is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// No policy of that name.
    Unknown(String),
    /// An option the policy does not know, or a value of the wrong kind.
    BadOption {
        /// The policy.
        policy: String,
        /// The key.
        key: String,
        /// What is wrong.
        msg: String,
    },
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::Unknown(n) => {
                write!(f, "unknown policy `{n}` (known: {})", names().collect::<Vec<_>>().join(", "))
            }
            PolicyError::BadOption { policy, key, msg } => {
                write!(f, "policy `{policy}`, option `{key}`: {msg}")
            }
        }
    }
}

impl std::error::Error for PolicyError {}

/// How tasks are placed on CPUs (the `partition` key of `[scheduler]`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Partition {
    /// One queue for all CPUs: any task on any CPU its affinity allows (the default).
    #[default]
    Global,
    /// Each task is bound to one CPU by its affinity (`cpus = [k]`), and each CPU runs its own copy of
    /// the policy ([`Partitioned`]).
    Affinity,
    /// As `Affinity`, with the CPU of each task chosen by the driver before the run, first fit by
    /// decreasing utilisation ([`crate::partition::first_fit_decreasing`]).
    Ffd,
}

impl Partition {
    /// The rule the options ask for (`partition = "global" | "affinity" | "ffd"`).
    pub fn of(opts: &Options) -> Result<Partition, PolicyError> {
        let bad =
            |msg: String| PolicyError::BadOption { policy: String::new(), key: "partition".into(), msg };
        match opts.get("partition") {
            None => Ok(Partition::Global),
            Some(OptValue::Str(s)) => match s.as_str() {
                "global" | "none" => Ok(Partition::Global),
                "affinity" => Ok(Partition::Affinity),
                "ffd" => Ok(Partition::Ffd),
                _ => Err(bad(format!("`{s}` is not one of global, affinity, ffd"))),
            },
            Some(_) => Err(bad("expected a string: global, affinity or ffd".into())),
        }
    }
}

/// Shortest quantum or slice a policy accepts (`quantum`, `slice`): 1 µs.
pub const MIN_SLICE: Nanos = 1_000;

/// Builds policy `name` for `cpus` CPUs with options (`[scheduler]` keys of a scenario), in the
/// core that drives it: global, or one uniprocessor copy per CPU with `partition`.
pub fn build(name: &str, opts: &Options, cpus: usize) -> Result<Core, PolicyError> {
    let e = entry(name).ok_or_else(|| PolicyError::Unknown(name.to_string()))?;
    let mut o = OptReader::new(name, opts);
    if cpus == 0 || cpus > MAX_CPUS {
        return Err(o.bad("cpus", &format!("{cpus} CPUs: a policy schedules 1 to {MAX_CPUS}")));
    }
    let part = Partition::of(opts).map_err(|e| match e {
        PolicyError::BadOption { key, msg, .. } => o.bad(&key, &msg),
        e => e,
    })?;
    o.note("partition");
    let core = match part {
        Partition::Global => Core::new(name, (e.build)(&mut o, cpus)?, cpus, e.notifies),
        Partition::Affinity | Partition::Ffd => {
            // Each CPU gets its own uniprocessor copy, built from the same options.
            let mut inner = Vec::with_capacity(cpus);
            for _ in 0..cpus {
                let mut oi = OptReader::new(name, opts);
                inner.push((e.build)(&mut oi, 1)?);
                o.used.extend(oi.used);
            }
            let p: Box<dyn Policy> = Box::new(Partitioned::new(inner));
            Core::new(format!("{name} (partitioned)"), p, cpus, e.notifies)
        }
    };
    o.finish()?;
    Ok(core)
}

/// How often policy `name` decides on `cpus` CPUs with options `opts` (see [`Pace`]); an option
/// the policy refuses is refused here as [`build`] refuses it.
pub fn pace(name: &str, opts: &Options, cpus: usize) -> Result<Pace, PolicyError> {
    let e = entry(name).ok_or_else(|| PolicyError::Unknown(name.to_string()))?;
    (e.pace)(&mut OptReader::new(name, opts), cpus.clamp(1, MAX_CPUS))
}

/// Reads options for a policy and remembers which keys were used, so unknown keys are errors.
pub struct OptReader<'a> {
    policy: &'a str,
    opts: &'a Options,
    used: Vec<&'a str>,
    /// Every key asked for, given or not (the registry's option lists are checked against it).
    asked: Vec<&'static str>,
}

impl<'a> OptReader<'a> {
    /// A reader of `opts` for `policy`.
    pub fn new(policy: &'a str, opts: &'a Options) -> Self {
        OptReader { policy, opts, used: Vec::new(), asked: Vec::new() }
    }
    fn bad(&self, key: &str, msg: &str) -> PolicyError {
        PolicyError::BadOption { policy: self.policy.into(), key: key.into(), msg: msg.into() }
    }
    fn note(&mut self, key: &'static str) {
        if !self.asked.contains(&key) {
            self.asked.push(key);
        }
        if let Some((k, _)) = self.opts.get_key_value(key) {
            self.used.push(k.as_str());
        }
    }
    fn get(&mut self, key: &'static str) -> Option<&'a OptValue> {
        self.note(key);
        self.opts.get(key)
    }
    /// A duration option, or its default: at most [`MAX_TIME`] (the bound that keeps a policy's
    /// sums of times from wrapping, see the crate documentation). The only way a policy reads a
    /// time option.
    pub fn time(&mut self, key: &'static str, default: Nanos) -> Result<Nanos, PolicyError> {
        match self.get(key) {
            None => Ok(default),
            Some(OptValue::Time(t)) if *t <= MAX_TIME => Ok(*t),
            Some(OptValue::Time(t)) => Err(self.bad(
                key,
                &format!("{t} ns: a {key} is at most 1000000h (about 114 years, sched::MAX_TIME)"),
            )),
            Some(_) => Err(self.bad(key, "expected a time such as \"100ms\"")),
        }
    }
    /// A quantum or slice option, or its default: at least [`MIN_SLICE`] (a shorter one would make
    /// a run of simulated seconds take billions of decisions), never rounded.
    pub fn slice(&mut self, key: &'static str, default: Nanos) -> Result<Nanos, PolicyError> {
        let t = self.time(key, default)?;
        if t < MIN_SLICE {
            return Err(self.bad(key, &format!("{t} ns: a {key} is at least 1us (MIN_SLICE)")));
        }
        Ok(t)
    }
    /// An integer option in `lo..=hi`, or its default.
    pub fn int(&mut self, key: &'static str, default: i64, lo: i64, hi: i64) -> Result<i64, PolicyError> {
        match self.get(key) {
            None => Ok(default),
            Some(OptValue::Int(i)) if (lo..=hi).contains(i) => Ok(*i),
            Some(_) => Err(self.bad(key, &format!("expected a whole number from {lo} to {hi}"))),
        }
    }
    /// Whether the option is given.
    pub fn has(&mut self, key: &'static str) -> bool {
        self.note(key);
        self.opts.contains_key(key)
    }
    /// A boolean option, or its default.
    pub fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, PolicyError> {
        match self.get(key) {
            None => Ok(default),
            Some(OptValue::Bool(b)) => Ok(*b),
            Some(_) => Err(self.bad(key, "expected true or false")),
        }
    }
    /// The value of option `key` as given, if it is (for a policy that reads a kind of value the
    /// other readers do not: the class stack's `classes` list).
    pub(crate) fn raw(&mut self, key: &'static str) -> Option<&'a OptValue> {
        self.get(key)
    }
    /// The table of options `key` (`[scheduler.<key>]`), if given, marked as used but not as one of
    /// the policy's own options (the class stack's per-class options, keyed by the class's policy).
    pub(crate) fn sub_table(&mut self, key: &'static str) -> Result<Option<&'a Options>, PolicyError> {
        let Some((k, v)) = self.opts.get_key_value(key) else { return Ok(None) };
        self.used.push(k.as_str());
        match v {
            OptValue::Table(t) => Ok(Some(t)),
            _ => Err(self.bad(key, &format!("expected a table of `{key}`'s options: [scheduler.{key}]"))),
        }
    }
    /// The error for option `key`.
    pub(crate) fn error(&self, key: &str, msg: &str) -> PolicyError {
        self.bad(key, msg)
    }
    /// A string option that must be one of `allowed`, or its default (refused otherwise, naming the
    /// allowed values; a value that is not a string is refused too).
    pub fn choice(
        &mut self,
        key: &'static str,
        default: &'static str,
        allowed: &[&'static str],
    ) -> Result<&'static str, PolicyError> {
        let names = || {
            let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
            match quoted.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            }
        };
        match self.get(key) {
            None => Ok(default),
            Some(OptValue::Str(s)) => match allowed.iter().find(|a| **a == s.as_str()) {
                Some(a) => Ok(a),
                None => Err(self.bad(key, &format!("\"{s}\": expected {}", names()))),
            },
            Some(_) => Err(self.bad(key, &format!("expected {}", names()))),
        }
    }
    pub(crate) fn finish(self) -> Result<(), PolicyError> {
        for k in self.opts.keys() {
            if !self.used.contains(&k.as_str()) {
                return Err(self.bad(k, "not an option of this policy"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_entry_builds_global_and_partitioned() {
        let mut seen = Vec::new();
        for e in REGISTRY {
            assert!(!seen.contains(&e.name), "{} twice", e.name);
            seen.push(e.name);
            for part in ["global", "affinity"] {
                let mut o = Options::new();
                o.insert("partition".into(), OptValue::Str(part.into()));
                let core = build(e.name, &o, 3).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                assert_eq!(core.cpus(), 3);
                assert_eq!(core.notifies(), e.notifies);
            }
        }
        assert_eq!(build("nope", &Options::new(), 1).unwrap_err(), PolicyError::Unknown("nope".into()));
    }

    #[test]
    fn every_entry_documents_exactly_the_options_it_reads() {
        for e in REGISTRY {
            let opts = Options::new();
            let mut o = OptReader::new(e.name, &opts);
            (e.build)(&mut o, 2).unwrap();
            let mut asked = o.asked.clone();
            let mut documented: Vec<&str> = e.options.iter().map(|d| d.key).collect();
            asked.sort_unstable();
            documented.sort_unstable();
            assert_eq!(asked, documented, "{}: the options it reads and the ones its entry lists", e.name);
        }
    }

    #[test]
    fn kernel_weight_options_are_options_of_the_policy() {
        for e in REGISTRY {
            let mut opts = Options::new();
            for (k, v) in e.kernel_weights {
                opts.insert(k.to_string(), OptValue::Int(*v));
            }
            build(e.name, &opts, 1).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
    }

    #[test]
    fn a_fair_meanings_option_is_the_policys_and_its_kernel_weight_is_nice_0() {
        // scx_smart passes kernel weights (100 at nice 0) as shares, with the options of
        // `kernel_weights`: for a policy whose shares are nice levels, those must make 100 nice 0.
        for e in REGISTRY {
            let opts: Options =
                e.kernel_weights.iter().map(|(k, v)| (k.to_string(), OptValue::Int(*v))).collect();
            let rule = crate::linux::FairRule::of(e, &opts).unwrap();
            match e.fair.option() {
                Some(key) => {
                    assert!(e.options.iter().any(|o| o.key == key), "{}: {key} is not an option", e.name);
                    assert_eq!(rule, crate::linux::FairRule::Nice { nice0: 100 }, "{}", e.name);
                }
                None => {
                    assert!(e.kernel_weights.is_empty(), "{}: kernel weights without a nice rule", e.name)
                }
            }
        }
    }

    #[test]
    fn a_time_option_beyond_max_time_is_refused_naming_its_key() {
        for e in REGISTRY {
            let doc = |key: &str| e.options.iter().any(|o| o.key == key);
            for key in ["quantum", "slice", "credit", "base_slice", "tick"].into_iter().filter(|k| doc(k)) {
                for (t, ok) in [(MAX_TIME, true), (MAX_TIME + 1, false), (u64::MAX, false)] {
                    let mut o = Options::new();
                    o.insert(key.into(), OptValue::Time(t));
                    match build(e.name, &o, 1) {
                        Ok(_) => assert!(ok, "{} {key} = {t} ns was taken", e.name),
                        Err(err) => {
                            assert!(!ok, "{} {key} = {t} ns: {err}", e.name);
                            let msg = err.to_string();
                            assert!(
                                msg.contains(&format!("option `{key}`")) && msg.contains("1000000h"),
                                "{msg}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_policy_with_a_slice_tells_it_and_names_the_option_that_set_it() {
        const US: Nanos = 1_000;
        for e in REGISTRY {
            let doc = |key: &str| e.options.iter().any(|o| o.key == key);
            let keys: Vec<&str> = ["quantum", "slice", "base_slice"].into_iter().filter(|k| doc(k)).collect();
            let default = pace(e.name, &Options::new(), 4).unwrap();
            if let Some(s) = default.slice {
                assert!(s.key.is_none() && s.nanos >= MIN_SLICE, "{}: {s:?}", e.name);
            }
            for key in keys {
                let mut o = Options::new();
                o.insert(key.into(), OptValue::Time(3 * US));
                if e.name == "eevdf" {
                    o.insert("hrtick".into(), OptValue::Bool(true));
                }
                let p = pace(e.name, &o, 4).unwrap();
                assert_eq!(p.slice, Some(Slice { nanos: 3 * US, key: Some(key) }), "{} {key}", e.name);
                o.insert(key.into(), OptValue::Time(1));
                assert!(pace(e.name, &o, 4).is_err(), "{} {key} = 1 ns", e.name);
            }
        }
        // Without HRTICK, eevdf's slices end on the tick: a short base slice is paced by the tick.
        let mut o = Options::new();
        o.insert("base_slice".into(), OptValue::Time(US));
        assert_eq!(pace("eevdf", &o, 1).unwrap().slice, Some(Slice { nanos: crate::MS, key: None }));
        o.insert("tick".into(), OptValue::Time(2 * US));
        assert_eq!(pace("eevdf", &o, 1).unwrap().slice, Some(Slice { nanos: 2 * US, key: Some("tick") }));
        assert_eq!(pace("fifo", &Options::new(), 1).unwrap(), Pace::default());
        let ts = pace("ts", &Options::new(), 1).unwrap();
        assert_eq!(ts.slice, Some(Slice { nanos: 20 * crate::MS, key: None }));
        assert_eq!(ts.timer, Some(crate::ts::UPDATE));
    }

    #[test]
    fn a_choice_is_one_of_its_strings_or_the_default() {
        const ALLOWED: &[&str] = &["6.12", "6.17"];
        let mut o = Options::new();
        let mut r = OptReader::new("p", &o);
        assert_eq!(r.choice("version", "6.12", ALLOWED), Ok("6.12"), "not given: the default");
        assert_eq!(r.asked, ["version"]);
        o.insert("version".into(), OptValue::Str("6.17".into()));
        let mut r = OptReader::new("p", &o);
        assert_eq!(r.choice("version", "6.12", ALLOWED), Ok("6.17"));
        assert!(r.finish().is_ok(), "a key read by choice is used");
        o.insert("version".into(), OptValue::Str("6.13".into()));
        let err = OptReader::new("p", &o).choice("version", "6.12", ALLOWED).unwrap_err();
        assert_eq!(err.to_string(), "policy `p`, option `version`: \"6.13\": expected \"6.12\" or \"6.17\"");
        o.insert("version".into(), OptValue::Int(6));
        let err = OptReader::new("p", &o).choice("version", "6.12", ALLOWED).unwrap_err();
        assert_eq!(err.to_string(), "policy `p`, option `version`: expected \"6.12\" or \"6.17\"");
    }

    #[test]
    fn unknown_options_and_bad_partitions_are_refused() {
        let mut o = Options::new();
        o.insert("quantum".into(), OptValue::Time(crate::MS));
        let err = build("fifo", &o, 1).unwrap_err();
        assert_eq!(err.to_string(), "policy `fifo`, option `quantum`: not an option of this policy");
        let mut o = Options::new();
        o.insert("partition".into(), OptValue::Str("ring".into()));
        assert!(build("edf", &o, 2).unwrap_err().to_string().contains("`ring` is not one of"));
        assert!(build("edf", &Options::new(), 0).is_err());
    }
}
