//! Application and scheduler in one process: registration, constraints read back, priority and
//! share, notifications delivered to the right thread, slots freed at thread exit, and regions that
//! name someone else's thread ignored.

mod common;

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use common::{Server, HANG};
use libsmart::{layout, proto, region::Region, Options, Smart};
use sched::TimeConstraint;

static SERVER: OnceLock<Server> = OnceLock::new();

fn setup() -> (&'static Server, &'static Smart) {
    let server = SERVER.get_or_init(Server::start);
    let opts = Options { socket: Some(server.path.clone()), slots: 8, ..Options::default() };
    (server, Smart::register_with(opts).expect("register with the test server"))
}

fn wait_registered(server: &Server, tid: u32) {
    assert!(server.wait_until(HANG, move |r| r.is_registered(tid)), "tid {tid} never indexed");
}

#[test]
fn a_constraint_is_read_back_by_the_scheduler_without_a_poll() {
    let (server, smart) = setup();
    let tid = smart.attach_thread().unwrap();
    wait_registered(server, tid);
    assert_eq!(server.with(move |r| r.constraint(tid)), None);

    let d = libsmart::now() + 40_000_000;
    smart.set_time_constraint(d, Some(10_000_000), Some(0)).unwrap();
    // No poll in between is needed: the lookup reads the slot itself.
    let got = server.with(move |r| r.constraint(tid));
    let want = TimeConstraint {
        deadline: d,
        cpu_estimate: Some(10_000_000),
        notify_time: Some(0),
        period: None,
        release: None,
    };
    assert_eq!(got, Some(want));

    let c = TimeConstraint {
        deadline: d + 1,
        cpu_estimate: None,
        notify_time: None,
        period: Some(40_000_000),
        release: None,
    };
    smart.set_constraint(&c).unwrap();
    assert_eq!(server.with(move |r| r.constraint(tid)), Some(c));
    // The scheduler records the sequence it read.
    let seq = smart.region().slot(slot_index(smart, tid)).seen_seq.load(Ordering::Acquire);
    assert!(seq >= 2 && seq % 2 == 0, "seen_seq {seq}");

    smart.clear_time_constraint().unwrap();
    assert_eq!(server.with(move |r| r.constraint(tid)), None);
    // Bad arguments are refused before anything is written.
    assert_eq!(smart.set_time_constraint(d, Some(0), None).unwrap_err().errno(), libc::EINVAL);
    assert_eq!(server.with(move |r| r.constraint(tid)), None);
}

fn slot_index(smart: &Smart, tid: u32) -> u32 {
    (0..smart.region().nslots()).find(|&i| smart.region().slot(i).tid.load(Ordering::Relaxed) == tid).unwrap()
}

#[test]
fn constraints_stream_from_another_thread_while_the_scheduler_reads() {
    // A worker sets a new constraint every few microseconds; the scheduler side reads concurrently
    // and must only ever see values the worker wrote (deadline, estimate = deadline/2). The worker
    // writes until the reader has seen 20 different values (or 10 s pass, on a machine that stops
    // one of the two for that long), so neither has to be scheduled within some time of the other.
    let (server, smart) = setup();
    let (tx, rx) = mpsc::channel();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop_w = stop.clone();
    let worker = std::thread::spawn(move || {
        let tid = smart.attach_thread().unwrap();
        tx.send(tid).unwrap();
        let t0 = Instant::now();
        let mut d = 1000u64;
        while !stop_w.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(10) {
            d += 2;
            smart.set_time_constraint(d, Some(d / 2), None).unwrap();
        }
        d
    });
    let tid = rx.recv().unwrap();
    wait_registered(server, tid);
    let (seen, distinct) = server.with(move |r| {
        let (mut seen, mut distinct, mut last) = (0u32, 0u32, 0u64);
        let t0 = Instant::now();
        while distinct < 20 && t0.elapsed() < Duration::from_secs(10) {
            if let Some(c) = r.constraint(tid) {
                assert_eq!(c.cpu_estimate, Some(c.deadline / 2), "torn constraint {c:?}");
                assert!(c.deadline >= last, "went backwards: {} after {last}", c.deadline);
                seen += 1;
                distinct += (c.deadline != last) as u32;
                last = c.deadline;
            }
        }
        (seen, distinct)
    });
    stop.store(true, Ordering::Relaxed);
    let last = worker.join().unwrap();
    assert!(distinct >= 20, "read {seen} constraints, {distinct} distinct (writer reached {last})");
}

#[test]
fn priority_and_share_requests_reach_the_scheduler() {
    let (server, smart) = setup();
    std::thread::spawn(move || {
        let tid = smart.attach_thread().unwrap();
        wait_registered(server, tid);
        assert_eq!(server.with(move |r| r.lookup(tid).map(|q| (q.priority, q.share))), Some((None, None)));
        // The tests run as root with CAP_SYS_NICE (the permission test drops it in a child).
        assert!(smart.privileged(), "the test process should hold CAP_SYS_NICE");
        smart.set_share(3).unwrap();
        smart.set_priority(2).unwrap();
        let q = server.with(move |r| r.lookup(tid)).unwrap();
        assert_eq!((q.priority, q.share, q.pid), (Some(2), Some(3), std::process::id()));
        let p = q.params(&sched::TaskParams::default());
        assert_eq!((p.priority, p.share), (2, 3));
        // Lowering is always allowed.
        smart.set_share(0).unwrap();
        smart.set_priority(-5).unwrap();
        let q = server.with(move |r| r.lookup(tid)).unwrap();
        assert_eq!((q.priority, q.share), (Some(-5), Some(0)));
    })
    .join()
    .unwrap();
}

static HANDLER_TID: AtomicU32 = AtomicU32::new(0);
static HANDLER_DEADLINE: AtomicU64 = AtomicU64::new(0);

extern "C" fn record(deadline: u64) {
    // Async-signal-safe: a system call and two atomic stores.
    HANDLER_TID.store(unsafe { libc::gettid() } as u32, Ordering::SeqCst);
    HANDLER_DEADLINE.store(deadline, Ordering::SeqCst);
}

#[test]
fn a_notification_is_a_signal_to_the_right_thread_and_a_counter() {
    let (server, smart) = setup();
    assert_eq!(smart.signal(), libsmart::default_signal());
    libsmart::on_notify(Some(record)).unwrap();
    let (signals_before, _) = libsmart::signals_received();

    // Two threads with slots; the scheduler notifies only the second.
    let (go_a, wait_a) = mpsc::channel::<()>();
    let (go_b, wait_b) = mpsc::channel::<()>();
    let (tids_tx, tids) = mpsc::channel();
    let spawn = |wait: mpsc::Receiver<()>, tx: mpsc::Sender<u32>| {
        std::thread::spawn(move || {
            tx.send(smart.attach_thread().unwrap()).unwrap();
            wait.recv().unwrap();
            smart.take_notification().unwrap()
        })
    };
    let a = spawn(wait_a, tids_tx.clone());
    let b = spawn(wait_b, tids_tx);
    let (t1, t2) = (tids.recv().unwrap(), tids.recv().unwrap());
    wait_registered(server, t1);
    wait_registered(server, t2);
    let _ = (t1, t2);
    // Which is which does not matter: notify whichever is `b`'s by asking the threads afterwards;
    // here we notify t2 and expect the handler to run on t2.
    let deadline = 123_456_789u64;
    assert!(server.with(move |r| r.notify(t2, deadline, false).unwrap()));
    let t0 = Instant::now();
    while HANDLER_DEADLINE.load(Ordering::SeqCst) != deadline && t0.elapsed() < HANG {
        std::thread::sleep(Duration::from_micros(100));
    }
    assert_eq!(HANDLER_DEADLINE.load(Ordering::SeqCst), deadline, "handler never ran");
    assert_eq!(HANDLER_TID.load(Ordering::SeqCst), t2, "the signal went to another thread");
    let (signals, last) = libsmart::signals_received();
    assert_eq!((signals - signals_before, last), (1, deadline));

    go_a.send(()).unwrap();
    go_b.send(()).unwrap();
    let (na, nb) = (a.join().unwrap(), b.join().unwrap());
    // t2 is whichever thread sent its tid second; exactly one of them holds the notification.
    let (got, none) = if nb.is_some() { (nb, na) } else { (na, nb) };
    assert_eq!(none, None);
    let n = got.expect("nobody saw the notification through the counter");
    assert_eq!((n.deadline, n.count, n.passed), (deadline, 1, false));
    assert_eq!(server.with(|r| r.stats().notifications), 1);
    libsmart::on_notify(None).unwrap();
}

#[test]
fn availability_written_by_the_scheduler_is_read_by_the_thread() {
    let (server, smart) = setup();
    std::thread::spawn(move || {
        let tid = smart.attach_thread().unwrap();
        wait_registered(server, tid);
        assert_eq!(smart.availability().unwrap(), None);
        assert!(server.with(move |r| r.registered_tids().any(|t| t == tid)));
        let a = sched::Availability { consumption_rate: 55.0, allocation_rate: 50.0 };
        assert!(server.with(move |r| r.set_availability(tid, &a)));
        let got = smart.availability().unwrap().unwrap();
        assert_eq!((got.consumption_rate, got.allocation_rate), (55.0, 50.0));
    })
    .join()
    .unwrap();
}

#[test]
fn a_thread_that_exits_gives_back_its_slot() {
    let (server, smart) = setup();
    let tid = std::thread::spawn(move || {
        let tid = smart.attach_thread().unwrap();
        smart.set_time_constraint(libsmart::now() + 1_000_000, None, None).unwrap();
        wait_registered(server, tid);
        assert!(server.with(move |r| r.constraint(tid)).is_some());
        tid
    })
    .join()
    .unwrap();
    // Once the thread has exited, its slot no longer answers for it.
    assert_eq!(server.with(move |r| r.constraint(tid)), None);
    assert!(server.wait_until(HANG, move |r| !r.is_registered(tid)));
    // More threads than slots over time is fine: slots are reused (8 slots, 20 threads in turn).
    for _ in 0..20 {
        std::thread::spawn(move || smart.set_time_constraint(1, None, None).unwrap()).join().unwrap();
    }
}

#[test]
fn a_region_naming_another_process_thread_is_ignored() {
    let (server, _) = setup();
    // Some other process's thread: a child `sleep`.
    let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
    let victim = child.id();
    // A region built by hand whose slot claims the victim's tid, sent to the scheduler.
    let region = Region::create(4, 0).unwrap();
    let s = region.slot(0);
    s.tid.store(victim, Ordering::Relaxed);
    s.write(|s| {
        s.generation.store(1, Ordering::Relaxed);
        s.flags.store(layout::FLAG_CONSTRAINT | layout::FLAG_SHARE, Ordering::Relaxed);
        s.deadline.store(42, Ordering::Relaxed);
        s.share.store(1000, Ordering::Relaxed);
    });
    region.header().claims.fetch_add(1, Ordering::Release);
    let before = server.with(|r| r.stats().foreign_tids);
    let sock = std::os::unix::net::UnixStream::connect(&server.path).unwrap();
    let hello = proto::Hello { magic: proto::HELLO_MAGIC, version: layout::VERSION, flags: 0 };
    proto::send(sock.as_raw_fd(), &hello, Some(region.fd().as_raw_fd())).unwrap();
    let (reply, _) = proto::recv::<proto::Reply>(sock.as_raw_fd(), 0).unwrap().unwrap();
    assert_eq!(reply.status, 0);
    assert!(server.wait_until(HANG, move |r| r.stats().foreign_tids > before));
    assert_eq!(server.with(move |r| (r.is_registered(victim), r.constraint(victim))), (false, None));
    // The victim is untouched; when the forger hangs up, its registration goes away.
    let n_before = server.with(|r| r.processes().len());
    drop(sock);
    assert!(server.wait_until(HANG, move |r| r.processes().len() < n_before));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn malformed_registrations_are_refused_with_an_errno() {
    let (server, _) = setup();
    // Wrong magic.
    let region = Region::create(1, 0).unwrap();
    let sock = std::os::unix::net::UnixStream::connect(&server.path).unwrap();
    let hello = proto::Hello { magic: 1, version: layout::VERSION, flags: 0 };
    proto::send(sock.as_raw_fd(), &hello, Some(region.fd().as_raw_fd())).unwrap();
    let (reply, _) = proto::recv::<proto::Reply>(sock.as_raw_fd(), 0).unwrap().unwrap();
    assert_eq!(reply.status, libc::EPROTO);
    // No descriptor.
    let sock = std::os::unix::net::UnixStream::connect(&server.path).unwrap();
    let hello = proto::Hello { magic: proto::HELLO_MAGIC, version: layout::VERSION, flags: 0 };
    proto::send(sock.as_raw_fd(), &hello, None).unwrap();
    let (reply, _) = proto::recv::<proto::Reply>(sock.as_raw_fd(), 0).unwrap().unwrap();
    assert_eq!(reply.status, libc::EBADF);
    // A signal outside the real-time range.
    let region = Region::create(1, libc::SIGKILL as u32).unwrap();
    let sock = std::os::unix::net::UnixStream::connect(&server.path).unwrap();
    proto::send(sock.as_raw_fd(), &hello, Some(region.fd().as_raw_fd())).unwrap();
    let (reply, _) = proto::recv::<proto::Reply>(sock.as_raw_fd(), 0).unwrap().unwrap();
    assert_eq!(reply.status, libc::EINVAL);
}

#[test]
fn a_second_scheduler_cannot_steal_the_socket_and_no_scheduler_is_a_clear_error() {
    let (server, _) = setup();
    let e = libsmart::server::Registry::bind(&server.path).err().unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
    // Mode 0666 socket in a 0755 directory.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&server.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o666);
    let dmode = std::fs::metadata(server.path.parent().unwrap()).unwrap().permissions().mode();
    assert_eq!(dmode & 0o777, 0o755);
    // Registering against nothing names the path and the fix (the process is already registered
    // here, so use the internal path through a fresh Options in a child-free way: connect directly).
    let e = std::os::unix::net::UnixStream::connect("/nonexistent/smart.sock").unwrap_err();
    let msg = libsmart::Error::Connect("/nonexistent/smart.sock".into(), e).to_string();
    assert!(msg.contains("/nonexistent/smart.sock") && msg.contains("SMART_SOCKET"), "{msg}");
}

#[test]
fn a_forked_child_cannot_write_its_parents_slots() {
    let (server, smart) = setup();
    std::thread::spawn(move || {
        let tid = smart.attach_thread().unwrap();
        let d = libsmart::now() + 1_000_000_000;
        smart.set_time_constraint(d, None, None).unwrap();
        wait_registered(server, tid);
        // The child inherits the mapping and this thread's slot index; its calls must fail instead of
        // overwriting the parent's slot. (Only atomics and _exit in the child: it was forked from a
        // multithreaded process.)
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let r = smart.set_time_constraint(1, None, None);
            let code = match r {
                Err(e) if e.errno() == libc::ENOTCONN => 0,
                _ => 1,
            };
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status:#x}");
        assert_eq!(server.with(move |r| r.constraint(tid)).map(|c| c.deadline), Some(d));
    })
    .join()
    .unwrap();
}

#[test]
fn one_user_cannot_register_more_slots_than_its_quarter() {
    use libsmart::server::MAX_SLOTS_PER_UID;
    use std::os::unix::net::UnixStream;
    let server = Server::start();
    let register = |slots: u32| -> (i32, Region, UnixStream) {
        let region = Region::create(slots, 0).unwrap();
        let sock = UnixStream::connect(&server.path).unwrap();
        sock.set_read_timeout(Some(HANG)).unwrap();
        let hello = proto::Hello { magic: proto::HELLO_MAGIC, version: layout::VERSION, flags: 0 };
        proto::send(sock.as_raw_fd(), &hello, Some(region.fd().as_raw_fd())).unwrap();
        let (reply, _) = proto::recv::<proto::Reply>(sock.as_raw_fd(), 0).unwrap().unwrap();
        (reply.status, region, sock)
    };
    // Regions of the largest size, up to the user's bound of slots: all accepted ...
    let full = (MAX_SLOTS_PER_UID / u64::from(layout::MAX_SLOTS)) as usize;
    let mut kept: Vec<_> = (0..full).map(|_| register(layout::MAX_SLOTS)).collect();
    assert!(kept.iter().all(|k| k.0 == 0), "{:?}", kept.iter().map(|k| k.0).collect::<Vec<_>>());
    // ... one slot more is refused, and the registry holds no more than the bound.
    assert_eq!(register(1).0, libc::EAGAIN);
    assert_eq!(server.with(|r| r.processes().len()), full);
    // Once one goes, there is room again.
    drop(kept.remove(0));
    assert!(server.wait_until(HANG, move |r| r.processes().len() == full - 1));
    assert_eq!(register(8).0, 0);
}
