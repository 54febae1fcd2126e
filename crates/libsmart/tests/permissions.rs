//! Permission checks across processes (own harness: the test binary re-executes itself as the child
//! processes, selected by its first argument).
//!
//! * A child without `CAP_SYS_NICE` (dropped from its bounding set before `exec`, so even root loses it)
//!   is refused by the library when it raises share or priority, may lower both, and when it bypasses
//!   the library and writes a raised share into its slot, the scheduler clamps it.
//! * A second process that names the first process's thread in its own region is ignored: the first
//!   process's constraint stays what the first process set.

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
        // Run as a test: ignore the harness's own arguments (--nocapture, filters).
        _ => {
            let filter = args.iter().skip(1).find(|a| !a.starts_with('-'));
            let tests: [(&str, fn()); 2] = [
                ("without_cap_sys_nice_a_process_can_only_lower_its_importance", unprivileged),
                ("another_process_cannot_set_this_process_constraints", forger),
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
