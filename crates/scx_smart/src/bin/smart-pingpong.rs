//! `smart-pingpong`: a context-switch-heavy load for scheduler benchmarks. Two threads pass a byte back and
//! forth through two pipes `--rounds` times (each round is two wake-ups and two context switches when they
//! share a CPU); prints one JSON line with the round trips per second.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: u64 = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map_or(20_000, |s| s.parse().expect("--rounds takes a whole number"));
    let (mut a, mut b) = UnixStream::pair().expect("socket pair");
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 1];
        for _ in 0..rounds {
            b.read_exact(&mut buf).expect("read");
            b.write_all(&buf).expect("write");
        }
    });
    let t0 = Instant::now();
    let mut buf = [1u8; 1];
    for _ in 0..rounds {
        a.write_all(&buf).expect("write");
        a.read_exact(&mut buf).expect("read");
    }
    let secs = t0.elapsed().as_secs_f64();
    echo.join().expect("echo thread");
    println!("{{\"rounds\":{rounds},\"seconds\":{secs:.6},\"rounds_per_s\":{:.0}}}", rounds as f64 / secs);
}
