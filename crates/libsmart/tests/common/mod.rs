//! A test scheduler: a [`Registry`] in its own thread, polled every 200 µs, driven by closures.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use libsmart::server::Registry;

type Cmd = Box<dyn FnOnce(&mut Registry) + Send>;

/// How long a test waits for something that normally takes microseconds before it calls it a hang: a
/// bound on a stuck test, not a claim about speed (a shared machine may stop a thread for seconds).
pub const HANG: Duration = Duration::from_secs(30);

pub struct Server {
    tx: Option<mpsc::Sender<Cmd>>,
    pub path: PathBuf,
    _dir: tempfile::TempDir,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    /// A registry listening at `<tempdir>/smart/scx_smart.sock` (the directory is created by `bind`).
    pub fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("smart").join("scx_smart.sock");
        let (tx, rx) = mpsc::channel::<Cmd>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let p = path.clone();
        let handle = std::thread::spawn(move || {
            let mut r = Registry::bind(&p).expect("bind the test socket");
            ready_tx.send(()).unwrap();
            loop {
                r.poll();
                match rx.recv_timeout(Duration::from_micros(200)) {
                    Ok(cmd) => cmd(&mut r),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        ready_rx.recv_timeout(HANG).expect("test server did not start");
        Server { tx: Some(tx), path, _dir: dir, handle: Some(handle) }
    }

    /// Run `f` on the registry (after a `poll`) and return its result.
    pub fn with<T: Send + 'static>(&self, f: impl FnOnce(&mut Registry) -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        self.tx
            .as_ref()
            .unwrap()
            .send(Box::new(move |r: &mut Registry| {
                r.poll();
                let _ = tx.send(f(r));
            }))
            .unwrap();
        rx.recv_timeout(HANG).expect("test server is stuck")
    }

    /// Poll until `pred` holds, for at most `limit`. Returns whether it held.
    pub fn wait_until(
        &self,
        limit: Duration,
        pred: impl Fn(&mut Registry) -> bool + Send + Clone + 'static,
    ) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let p = pred.clone();
            if self.with(move |r| p(r)) {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        false
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
