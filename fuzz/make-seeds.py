#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, fuzz/seeds/<target>/ (committed; rerun after a format
changes): python3 fuzz/make-seeds.py. Needs target/release/smartsim and target/release/hourglass
(cargo build --release) for the trace seeds."""
import glob, json, os, shutil, struct, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")

def put(target, name, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

def small(policy, extra=""):
    return f"""[machine]
duration = "200ms"
cpus = 2
hz = 100
[scheduler]
policy = "{policy}"
{extra}
[[task]]
name = "audio"
model = "periodic"
exec = "1ms..2ms"
period = "10ms"
priority = 1
[[task]]
name = "video"
model = "periodic"
exec = "8ms"
period = "33ms"
share = 2
[[task]]
name = "batch"
model = "cpu"
[[task]]
name = "typist"
model = "interactive"
think = "50ms"
burst = "1ms..3ms"
"""

def scenario():
    for p in glob.glob(os.path.join(ROOT, "scenarios", "papers", "*.toml")):
        shutil.copy(p, os.path.join(SEEDS, "scenario", os.path.basename(p)))
    for pol in ["smart", "wfq", "wfq-credit", "edf", "fifo", "rr"]:
        put("scenario", f"small-{pol}.toml", small(pol))
    put("scenario", "options.toml", small("smart", 'quantum = "10ms"\ncredit = "20ms"'))

def units():
    for i, s in enumerate(["1.5s", "87.0us", "3m", "1020ms", "500ns", "2h", "0.1s", "1_000us", "87µs",
                           "64KB", "1MiB", "512B", "1.5kB", "1GB/s", "64", "10", "0.5ns", "1e3s", "-1s",
                           "18446744073709551615ns", "99999999999999999999s", " 40 ms "]):
        put("units", f"{i:02}", s)

def klog():
    def hdr(**kw):
        h = {"tool": "klogger", "format_version": 1, "record_size": 72, "kernel": "x", "hz": 250,
             "cpus": 2, "clock": "CLOCK_MONOTONIC", "start_ns": 0, "start_unix_s": 0.0,
             "target": "system", "pids": [], "command": [], "tick_hook": None, "buffer_bytes": 0}
        h.update(kw)
        return json.dumps(h, separators=(",", ":")).encode()
    def rec(ts, cpu, typ, pid=0, pid2=0, arg=0):
        return struct.pack("<QIHHIIIIQ", ts, cpu, typ, 0, pid, pid, pid2, pid2, arg) + b"a" * 16 + b"b" * 16
    def log(h, recs):
        return b"KLOGGER\x00" + struct.pack("<II", 1, len(h)) + h + recs
    sw = rec(100, 0, 1, 0, 5) + rec(300, 0, 1, 5, 0, 1) + rec(350, 1, 1, 0, 7) + rec(900, 1, 1, 7, 0)
    put("klog", "switches", log(hdr(), sw + rec(1000, 0, 101)))
    put("klog", "cut-short", log(hdr(hz=None), sw)[:-20])
    put("klog", "ticks", log(hdr(cpus=1), b"".join(rec(4_000_000 * k, 0, 2, 5) for k in range(8))))
    # Format 2: a lost record (100) placing a gap on CPU 0, a missed record (102, flags = switch).
    def log2(h, recs):
        return b"KLOGGER\x00" + struct.pack("<II", 2, len(h)) + h + recs
    gap = rec(100, 0, 1, 0, 5) + rec(150, 0, 100, arg=3) + rec(300, 0, 1, 6, 0, 1) + rec(350, 1, 1, 0, 7)
    missed = struct.pack("<QIHHIIIIQ", 900, 0, 102, 1, 0, 0, 0, 0, 2) + bytes(32)
    put("klog", "format2-gaps", log2(hdr(format_version=2), gap + missed + rec(1000, 0, 101)))

def traces():
    with tempfile.TemporaryDirectory() as d:
        scn = os.path.join(d, "s.toml")
        with open(scn, "w") as f:
            f.write(small("smart").replace('"200ms"', '"50ms"'))
        out = os.path.join(d, "t.trace")
        subprocess.run([os.path.join(ROOT, "target/release/smartsim"), "run", scn, "--trace", out],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.copy(out, os.path.join(SEEDS, "trace", "smartsim.trace"))
        out = os.path.join(d, "h.trace")
        subprocess.run([os.path.join(ROOT, "target/release/hourglass"), "-n", "2", "-d", "20ms", "-a",
                        "-w", "PERIODIC", "1ms", "5ms", "--trace", out, "--format", "json"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.copy(out, os.path.join(SEEDS, "trace", "hourglass.trace"))

def libsmart():
    # Slot: seq, tid, generation, flags; deadline, estimate, notify_time, period; priority, share...
    def slot(flags, deadline, est, notify, period, prio=0, share=1, seq=2, tid=1234, now=0):
        b = struct.pack("<IIII QQQQ iI", seq, tid, 1, flags, deadline, est, notify, period, prio, share)
        b += bytes(120 - len(b))
        return b + struct.pack("<Q", now)
    put("libsmart", "constraint", slot(1, 40_000_000, 10_000_000, 0, 0, now=1_000_000))
    put("libsmart", "periodic", slot(7, 40_000_000, 10_000_000, 2**64 - 1, 40_000_000, prio=2, share=5))
    put("libsmart", "no-estimate", slot(1, 5_000_000, 0, 2**64 - 1, 0, now=4_000_000))
    put("libsmart", "odd-seq", slot(1, 1, 1, 1, 1, seq=3))
    put("libsmart", "hello", struct.pack("<QII", int.from_bytes(b"SMARTREG", "little"), 1, 0) + bytes(112))

def hourglass():
    examples = [
        "-n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH",
        "-d 60s -n 10 -a -p NORMAL -w CPU_YIELD 0.9ms --format paper",
        "-d 20s -n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR",
        "-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i NATIVE",
        "-n 2 -t 0 -w PERIODIC 3ms 8ms -rh 3.1ms 8ms -t 1 -w PERIODIC 17ms 33ms -rh 17.1ms 33ms",
        "-n 1 -a -w CPU_SCAN_YIELD 64KB 1ms -s 1s -f 2s --gap 5us --trace t --perfetto p --hist",
        "--scenario s.toml -d 1s --format json --cpu all --starve-limit 1s --pm-qos 0 --clock monotonic",
    ]
    for i, e in enumerate(examples):
        put("hourglass", f"args-{i}", b"\x00" + "\n".join(e.split()).encode())
    put("hourglass", "paper", b"\x01# thread 0: NORMAL CPU\n# thread 1: NORMAL CPU\n"
        b"0 0.000 1.000 1.000 0.000\n1 1.010 2.000 0.990 0.010\n0 2.012 3.000 0.988 0.012\n")
    put("hourglass", "json", b"\x01" + json.dumps({"duration_ns": 5000, "trace": [
        {"thread": 0, "start_ns": 0, "end_ns": 1000, "reason": "yield", "cpu": 0},
        {"thread": 1, "start_ns": 1100, "end_ns": 3000, "reason": "gap", "cpu": 0}]}).encode())

if __name__ == "__main__":
    # Files named regress-* are inputs that once crashed a target (kept as they are).
    for t in ["scenario", "trace"]:
        os.makedirs(os.path.join(SEEDS, t), exist_ok=True)
    scenario(); units(); klog(); traces(); libsmart(); hourglass()
    for t in sorted(os.listdir(SEEDS)):
        files = os.listdir(os.path.join(SEEDS, t))
        size = sum(os.path.getsize(os.path.join(SEEDS, t, f)) for f in files)
        print(f"{t}: {len(files)} seeds, {size} bytes")
