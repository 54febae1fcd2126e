//! Permission checks across processes (own harness: the test binary re-executes itself as the child
//! processes, selected by its first argument).
//!
//! * A child without `CAP_SYS_NICE` (dropped from its bounding set before `exec`, so even root loses it)
//!   is refused by the library when it raises share or priority, may lower both, and when it bypasses
//!   the library and writes a raised share into its slot, the scheduler clamps it.
//! * A second process that names the first process's thread in its own region is ignored: the first
//!   process's constraint stays what the first process set.
//! * A process that scribbles random words over its whole region (header, slot count, claims
//!   counter, every slot, sequence numbers held odd, other processes' thread ids) as fast as it can
//!   neither stalls the scheduler (each poll checks at most `MAX_TID_CHECKS_PER_POLL` thread ids)
//!   nor changes another process's constraint.
//! * A flood of connections that never register, or send garbage, is refused, and a process can
//!   register once it has passed.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;

use common::{Server, HANG};
use libsmart::{layout, Options, Smart};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child-unprivileged") => child_unprivileged(),
        Some("child-forger") => child_forger(args[2].parse().unwrap()),
        Some("child-victim") => child_victim(),
        Some("child-scribbler") => child_scribbler(args[2].parse().unwrap()),
        // Run as a test: ignore the harness's own arguments (--nocapture, filters).
        _ => {
            let filter = args.iter().skip(1).find(|a| !a.starts_with('-'));
            let tests: [(&str, fn()); 4] = [
                ("without_cap_sys_nice_a_process_can_only_lower_its_importance", unprivileged),
                ("another_process_cannot_set_this_process_constraints", forger),
                ("a_process_scribbling_on_its_region_stalls_nothing_and_touches_nobody", scribbler),
                ("a_flood_of_connections_is_refused_and_registration_works_after_it", flood),
            ];
            let mut ran = 0;
            for (name, f) in tests {
                if filter.is_some_and(|p| !name.contains(p.as_str())) {
                    continue;
                }
                println!("test {name} ...");
                f();
                println!("test {name} ... ok");
                ran += 1;
            }
            println!("test result: ok. {ran} passed");
        }
    }
}

// ---- children -------------------------------------------------------------------------------------

fn child_setup() -> &'static Smart {
    // A watchdog: a stuck child dies within 5 s and the parent's read sees end of file.
    unsafe { libc::alarm(5) };
    // The socket comes from $SMART_SOCKET, as for any application.
    Smart::register_with(Options { slots: 4, ..Options::default() }).expect("child: register")
}

fn wait_for_parent() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn errno_of(r: Result<(), libsmart::Error>) -> i32 {
    r.err().map_or(0, |e| e.errno())
}

fn child_unprivileged() {
    let smart = child_setup();
    let tid = smart.attach_thread().unwrap();
    println!("privileged {}", smart.privileged() as u32);
    println!("raise-share {}", errno_of(smart.set_share(5)));
    println!("raise-priority {}", errno_of(smart.set_priority(3)));
    println!("lower-share {}", errno_of(smart.set_share(0)));
    println!("lower-priority {}", errno_of(smart.set_priority(-1)));
    // Bypass the library: write a raised share and priority into our own slot directly.
    let slot = (0..4).map(|i| smart.region().slot(i)).find(|s| s.tid.load(Ordering::Relaxed) == tid).unwrap();
    slot.write(|s| {
        s.share.store(7, Ordering::Relaxed);
        s.priority.store(9, Ordering::Relaxed);
        s.flags.fetch_or(layout::FLAG_SHARE | layout::FLAG_PRIORITY, Ordering::Relaxed);
    });
    println!("tid {tid}");
    std::io::stdout().flush().unwrap();
    wait_for_parent();
}

fn child_forger(victim: u32) {
    let smart = child_setup();
    // A legitimate slot of its own, with a constraint.
    smart.set_time_constraint(libsmart::now() + 1_000_000_000, None, None).unwrap();
    // And a slot that claims the victim's thread, with an urgent constraint and a big share.
    let s = (0..4).map(|i| smart.region().slot(i)).find(|s| s.tid.load(Ordering::Relaxed) == 0).unwrap();
    s.tid.store(victim, Ordering::Relaxed);
    s.write(|s| {
        s.generation.fetch_add(1, Ordering::Relaxed);
        s.deadline.store(42, Ordering::Relaxed);
        s.flags.store(layout::FLAG_CONSTRAINT, Ordering::Relaxed);
    });
    smart.region().header().claims.fetch_add(1, Ordering::Release);
    println!("ready {}", unsafe { libc::gettid() });
    std::io::stdout().flush().unwrap();
    wait_for_parent();
}

/// The deadline the victim sets: far ahead, recognisable.
const VICTIM_DEADLINE_FROM_NOW: u64 = 3_600_000_000_000;
const VICTIM_ESTIMATE: u64 = 7_000_000;

fn child_victim() {
    let smart = child_setup();
    unsafe { libc::alarm(60) };
    let deadline = libsmart::now() + VICTIM_DEADLINE_FROM_NOW;
    smart.set_time_constraint(deadline, Some(VICTIM_ESTIMATE), None).unwrap();
    println!("tid {}", unsafe { libc::gettid() });
    println!("deadline {deadline}");
    std::io::stdout().flush().unwrap();
    wait_for_parent();
}

fn child_scribbler(victim: u32) {
    unsafe { libc::alarm(60) };
    let smart = Smart::register_with(Options { slots: layout::MAX_SLOTS, ..Options::default() })
        .expect("scribbler: register");
    let me = smart.attach_thread().unwrap();
    let r = smart.region();
    // Every word of the region, header included, as 64-bit atomics (the region is 128-byte aligned).
    let words = layout::region_size(r.nslots()) / 8;
    let base = r.header() as *const layout::Header as *const std::sync::atomic::AtomicU64;
    // SAFETY: the mapping is `words` u64s long and lives as long as `smart` (the whole process).
    let region = unsafe { std::slice::from_raw_parts(base, words) };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    std::thread::spawn(move || {
        wait_for_parent();
        s2.store(true, Ordering::Relaxed);
    });
    println!("ready {me}");
    std::io::stdout().flush().unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rounds = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for (k, w) in region.iter().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Slot words 0 (seq, tid) get thread ids that matter a third of the time: the victim's,
            // our own, or 0; otherwise anything, odd sequence numbers included.
            let v = match (
                k * 8 >= layout::HEADER_SIZE && (k * 8 - layout::HEADER_SIZE) % layout::SLOT_SIZE == 0,
                x % 6,
            ) {
                (true, 0) => u64::from(victim) << 32 | (x & 0xffff_fffe),
                (true, 1) => u64::from(me) << 32 | (x & 0xffff_ffff),
                (true, 2) => x & 0xffff_ffff,
                _ => x,
            };
            w.store(v, Ordering::Relaxed);
        }
        r.header().claims.fetch_add(1, Ordering::Release);
        rounds += 1;
    }
    println!("rounds {rounds}");
    std::io::stdout().flush().unwrap();
}

// ---- the parent's tests -------------------------------------------------------------------------------

fn spawn_child(
    server: &Server,
    args: &[&str],
    drop_cap_sys_nice: bool,
) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(args).env("SMART_SOCKET", &server.path).stdin(Stdio::piped()).stdout(Stdio::piped());
    if drop_cap_sys_nice {
        // SAFETY: prctl is async-signal-safe; runs in the child between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(
                    libc::PR_CAPBSET_DROP,
                    libsmart::server::CAP_SYS_NICE as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("spawn the child");
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

fn read_kv(out: &mut BufReader<std::process::ChildStdout>, key: &str) -> i64 {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let (k, v) = line.trim().split_once(' ').unwrap_or_else(|| panic!("child said {line:?}, expected {key}"));
    assert_eq!(k, key, "child said {line:?}");
    v.parse().unwrap()
}

fn finish(mut child: Child) {
    drop(child.stdin.take());
    let st = child.wait().unwrap();
    assert!(st.success(), "child failed: {st}");
}

fn unprivileged() {
    let server = Server::start();
    let (child, mut out) = spawn_child(&server, &["child-unprivileged"], true);
    let pid = child.id();
    assert_eq!(read_kv(&mut out, "privileged"), 0, "the scheduler saw CAP_SYS_NICE in the child");
    assert_eq!(read_kv(&mut out, "raise-share"), libc::EPERM as i64);
    assert_eq!(read_kv(&mut out, "raise-priority"), libc::EPERM as i64);
    assert_eq!(read_kv(&mut out, "lower-share"), 0);
    assert_eq!(read_kv(&mut out, "lower-priority"), 0);
    let tid = read_kv(&mut out, "tid") as u32;
    assert!(server.wait_until(HANG, move |r| r.is_registered(tid)));
    let (q, procs, clamped) = server.with(move |r| (r.lookup(tid), r.processes(), r.stats().clamped));
    let q = q.unwrap();
    // It wrote share 7, priority 9 into its slot; the scheduler gives it the defaults.
    assert_eq!((q.share, q.priority), (Some(libsmart::DEFAULT_SHARE), Some(libsmart::DEFAULT_PRIORITY)));
    assert!(clamped >= 1);
    let me = procs.iter().find(|p| p.pid == pid).unwrap();
    assert!(!me.privileged);
    finish(child);
    // Its registration goes away with it.
    assert!(server.wait_until(HANG, move |r| !r.is_registered(tid)));
    assert!(server.with(|r| r.stats().exited) >= 1);
}

fn forger() {
    let server = Server::start();
    let smart =
        Smart::register_with(Options { socket: Some(server.path.clone()), slots: 4, ..Options::default() })
            .expect("parent: register");
    let me = smart.attach_thread().unwrap();
    let deadline = libsmart::now() + 5_000_000_000;
    smart.set_time_constraint(deadline, Some(1_000_000), None).unwrap();
    assert!(server.wait_until(HANG, move |r| r.is_registered(me)));

    let (child, mut out) = spawn_child(&server, &["child-forger", &me.to_string()], false);
    let child_tid = read_kv(&mut out, "ready") as u32;
    assert!(server.wait_until(HANG, move |r| r.stats().foreign_tids >= 1));
    let (mine, theirs) = server.with(move |r| (r.lookup(me), r.constraint(child_tid)));
    let mine = mine.unwrap();
    // Our thread still answers with our constraint and our pid; the child's own slot works.
    assert_eq!(mine.pid, std::process::id());
    assert_eq!(mine.constraint.map(|c| c.deadline), Some(deadline));
    assert_eq!(theirs.map(|c| c.deadline > 42), Some(true));
    finish(child);
}

fn scribbler() {
    let server = Server::start();
    let (victim, mut vout) = spawn_child(&server, &["child-victim"], false);
    let vtid = read_kv(&mut vout, "tid") as u32;
    let deadline = read_kv(&mut vout, "deadline") as u64;
    let vpid = victim.id();
    assert!(server.wait_until(HANG, move |r| r.is_registered(vtid)));

    let (scrib, mut sout) = spawn_child(&server, &["child-scribbler", &vtid.to_string()], false);
    read_kv(&mut sout, "ready");
    // Poll one step at a time while it scribbles: each poll stays within its budget of /proc checks,
    // and the victim's thread answers with the victim's constraint every time.
    let mut max_checks = 0;
    for _ in 0..300 {
        let (checks, q) = server.with(move |r| {
            let before = r.stats().tid_checks;
            r.poll();
            (r.stats().tid_checks - before, r.lookup(vtid))
        });
        max_checks = max_checks.max(checks);
        assert!(
            checks <= u64::from(libsmart::server::MAX_TID_CHECKS_PER_POLL),
            "one poll checked {checks} thread ids"
        );
        let q = q.expect("the victim's thread lost its registration");
        assert_eq!(q.pid, vpid);
        let c = q.constraint.expect("the victim's constraint is gone");
        assert_eq!((c.deadline, c.cpu_estimate), (deadline, Some(VICTIM_ESTIMATE)));
    }
    let st = server.with(|r| r.stats());
    assert!(st.foreign_tids > 0, "the scribbler never named the victim's thread: {st:?}");
    assert!(st.scans_deferred > 0, "16384 rewritten slots never overran one poll's budget: {st:?}");
    assert!(max_checks > 0, "{st:?}");
    let mut scrib = scrib;
    drop(scrib.stdin.take());
    let rounds = read_kv(&mut sout, "rounds");
    assert!(rounds > 0);
    let st = scrib.wait().unwrap();
    assert!(st.success(), "scribbler failed: {st}");
    // It is gone; the victim is still served.
    assert!(server.wait_until(HANG, move |r| r.processes().len() == 1));
    let q = server.with(move |r| r.lookup(vtid)).unwrap();
    assert_eq!(q.constraint.map(|c| c.deadline), Some(deadline));
    finish(victim);
}

fn flood() {
    use libsmart::server::{HELLO_TIMEOUT, MAX_PENDING};
    use std::os::unix::net::UnixStream;
    let server = Server::start();
    // Connections that say nothing, more than the registry keeps waiting...
    let silent: Vec<UnixStream> =
        (0..MAX_PENDING + 64).map(|_| UnixStream::connect(&server.path).unwrap()).collect();
    // ... and connections that send garbage: random bytes, a wrong magic, a hello without a region.
    let mut noisy = Vec::new();
    for k in 0..16u64 {
        let mut c = UnixStream::connect(&server.path).unwrap();
        let junk = (k.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_le_bytes();
        c.write_all(&junk).unwrap();
        noisy.push(c);
    }
    for magic in [0u64, u64::MAX] {
        let c = UnixStream::connect(&server.path).unwrap();
        let hello = libsmart::proto::Hello { magic, version: layout::VERSION, flags: 0 };
        libsmart::proto::send(std::os::fd::AsRawFd::as_raw_fd(&c), &hello, None).unwrap();
        noisy.push(c);
    }
    let refused = 64 + 18;
    assert!(
        server.wait_until(HANG, move |r| r.stats().refused >= refused),
        "refused: {:?}",
        server.with(|r| r.stats())
    );
    // Past the registration timeout, the silent ones are dropped and a process registers.
    std::thread::sleep(HELLO_TIMEOUT + std::time::Duration::from_millis(200));
    server.with(|r| {
        r.poll();
    });
    let (victim, mut vout) = spawn_child(&server, &["child-victim"], false);
    let vtid = read_kv(&mut vout, "tid") as u32;
    assert!(server.wait_until(HANG, move |r| r.is_registered(vtid)));
    let st = server.with(|r| r.stats());
    assert_eq!(st.registered, 1, "{st:?}");
    assert!(st.refused >= (MAX_PENDING + 64 + 18) as u64, "{st:?}");
    drop(silent);
    drop(noisy);
    finish(victim);
}
