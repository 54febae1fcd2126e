//! `smart-flood`: a hostile libsmart client for scx_smart tests. For `--seconds` it connects to the
//! scheduler's socket (`$SMART_SOCKET`, default /run/smart/scx_smart.sock) as fast as it can: half of
//! the connections send a registration with a wrong magic number, the others say nothing and are kept
//! open (up to 512 at once, the oldest closed first), so that the scheduler's side has connections to
//! accept, garbage to refuse and silent ones to time out, all the time. Prints one JSON line with what
//! it did. It asks for nothing a process may not ask for, so any local user can do the same.

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let secs: f64 = get("--seconds").map_or(5.0, |s| s.parse().expect("--seconds takes a number"));
    let path = libsmart::socket_path();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let bad = libsmart::proto::Hello { magic: 0, version: libsmart::layout::VERSION, flags: 0 };
    let mut open: VecDeque<UnixStream> = VecDeque::new();
    let (mut connected, mut failed, mut garbage) = (0u64, 0u64, 0u64);
    let mut i = 0u64;
    while Instant::now() < end {
        i += 1;
        match UnixStream::connect(&path) {
            Ok(c) => {
                connected += 1;
                if i % 2 == 0 {
                    if libsmart::proto::send(c.as_raw_fd(), &bad, None).is_ok() {
                        garbage += 1;
                    }
                } else {
                    open.push_back(c);
                    if open.len() > 512 {
                        open.pop_front();
                    }
                }
            }
            Err(_) => {
                failed += 1;
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
    println!("{{\"connected\":{connected},\"failed\":{failed},\"garbage\":{garbage}}}");
}
