//! The split use of the registry scx_smart makes: one thread sleeps on the registry's descriptors and
//! handles registrations and exits; the scheduler's loop indexes new threads with `poll_claims` alone.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use libsmart::server::{wait_readable, Registry};
use libsmart::{Options, Smart};

#[test]
fn registrations_wake_the_waiting_thread_and_claims_need_no_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scx_smart.sock");
    let mut reg = Registry::bind(&path).unwrap();

    // Nothing happens: the wait times out.
    let t0 = Instant::now();
    assert!(!wait_readable(&reg.event_fds(), Duration::from_millis(50)).unwrap());
    assert!(t0.elapsed() >= Duration::from_millis(40));

    // A process registers (in another thread, as register() waits for the answer): the listening
    // socket wakes the waiter, and poll() answers. The thread claims its slot only once we stop
    // calling poll() (which also indexes claims), so that what indexes it below is poll_claims.
    let (tx, rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let p = path.clone();
    let client = std::thread::spawn(move || {
        let smart =
            Smart::register_with(Options { socket: Some(p), slots: 4, ..Options::default() }).unwrap();
        tx.send(None).unwrap();
        go_rx.recv().unwrap();
        let tid = smart.attach_thread().unwrap();
        let d = libsmart::now() + 1_000_000_000;
        smart.set_time_constraint(d, Some(5_000_000), None).unwrap();
        tx.send(Some((tid, d))).unwrap();
        // Stay registered until the test is done with us.
        std::thread::park();
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the registration never completed");
        if wait_readable(&reg.event_fds(), Duration::from_millis(100)).unwrap() {
            reg.poll();
        }
        if let Ok(x) = rx.try_recv() {
            assert!(x.is_none());
            break;
        }
    }
    go_tx.send(()).unwrap();
    let (tid, d) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("claiming a slot and setting a constraint need no answer from the registry")
        .expect("the thread's claim");
    // A claim wakes no descriptor, and poll() has not run since: the thread is not indexed yet, and
    // poll_claims alone indexes it.
    assert!(!reg.is_registered(tid));
    assert!(!wait_readable(&reg.event_fds(), Duration::from_millis(20)).unwrap());
    assert_eq!(reg.poll_claims(), 1);
    assert!(reg.is_registered(tid));
    assert_eq!(reg.constraint(tid).map(|c| c.deadline), Some(d));
    client.thread().unpark();
    client.join().unwrap();
}
