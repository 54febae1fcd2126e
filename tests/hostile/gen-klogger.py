#!/usr/bin/env python3
"""Writes tests/hostile/klogger.toml: hostile klogger recordings, built byte by byte (the header
JSON, then 72-byte records as klogger's format describes, crates/trace/src/klog.rs). Rerun after
editing the cases below: python3 tests/hostile/gen-klogger.py"""
import json, os, struct

def hdr(**kw):
    h = {"tool": "klogger", "format_version": 1, "record_size": 72, "kernel": "x", "hz": 250, "cpus": 2,
         "clock": "CLOCK_MONOTONIC", "start_ns": 0, "start_unix_s": 0.0, "target": "system", "pids": [],
         "command": [], "tick_hook": None, "buffer_bytes": 0}
    h.update(kw)
    return json.dumps(h, separators=(",", ":"))

def log(h, recs=b"", version=1):
    hb = h.encode()
    return b"KLOGGER\x00" + struct.pack("<II", version, len(hb)) + hb + recs

def log2(recs, **kw):
    """A format 2 log (lost records in the stream, missed records at the end)."""
    return log(hdr(format_version=2, **kw), recs, 2)

def rec(ts, cpu, typ, pid=0, pid2=0, arg=0, flags=0, comm=b"a" * 16, comm2=b"b" * 16):
    pad = lambda c: c + b"\0" * (16 - len(c))
    return struct.pack("<QIHHIIIIQ", ts, cpu, typ, flags, pid, pid, pid2, pid2, arg) + pad(comm) + pad(comm2)

SW = rec(100, 0, 1, pid=0, pid2=5) + rec(300, 0, 1, pid=5, pid2=0, arg=1)
OK = log(hdr(), SW + rec(400, 0, 101))
# Format 2: a lost record (type 100) in a gap on CPU 0, a missed record (type 102) with the type of
# a switch in its flags.
GAP = rec(100, 0, 1, pid=0, pid2=5) + rec(150, 0, 100, arg=7) + rec(300, 0, 1, pid=6, pid2=0, arg=1)
BAD_CPU = rec(100, 0, 1, 0, 5) + rec(200, 0x7FFFFFFF, 1, 5, 0)

def repeated(head, block, n):
    """A file of `head` then `block` n times, written as ${hex:...}${repeat:n:...} (block: bytes
    below 0x80 and no '}', so that it can be TOML text)."""
    assert all(b < 0x80 for b in block) and b"}" not in block
    return "${hex:%s}${repeat:%d:%s}" % (head.hex(), n, block.decode("ascii"))

# 200,000 gaps and as many lost records, all at the same three times: each gap used to be matched
# against every lost record of its CPU (quadratic: about 4 * 10^10 comparisons).
MANY_GAPS = repeated(log2(b""), rec(0x100, 0, 1, pid=0, pid2=5) + rec(0x150, 0, 100, arg=1)
                     + rec(0x200, 0, 1, pid=6, pid2=0, arg=1), 200_000)

# A recording that contradicts itself is read with what breaks the trace's rules left out and
# counted, never refused (crates/trace/src/lib.rs says why): task 5 switched in on CPUs 0 and 1 at
# once (once 200 % of one CPU), and switches before the header's start (50) and after the End
# record of the clean stop (400; one at 10^12 once made a 1000 s recording of it).
TWO_CPUS = log(hdr(), rec(100, 0, 1, pid=0, pid2=5) + rec(100, 1, 1, pid=0, pid2=5)
               + rec(300, 0, 1, pid=5, pid2=0, arg=1) + rec(300, 1, 1, pid=5, pid2=0, arg=1) + rec(400, 0, 101))
OUTSIDE = log(hdr(start_ns=50), rec(10, 1, 1, pid=0, pid2=6) + SW + rec(10**12, 1, 1, pid=0, pid2=7) + rec(400, 0, 101))
TWO_NOTE = "1 stretch of a task overlapping its stretch on another CPU cut or left out"
OUT_NOTE = "2 events outside the recording's span left out"
# Command names as any process may set them (prctl: 15 bytes, anything but NUL): escape sequences
# and markup; a C1 control, a right-to-left override; 15 bytes that are not UTF-8 (read as 15
# U+FFFD, 45 bytes: `report`'s 28-byte column cut inside one and panicked).
EVIL = b"\x1b[2J<b>&\x07\xc2\x9b\xe2\x80\xae"
def hostile(comm):
    return log(hdr(), rec(100, 0, 1, pid=0, pid2=5, comm2=comm) + rec(300, 0, 1, pid=5, pid2=0, arg=1, comm=comm)
               + rec(400, 0, 101))
RAW = ["\x1b", "\x07", "\x9b", "\u202e"]
SHOWN = "\\x1b[2J<b>&\\x07\\u{9b}\\u{202e} (5)"

CASES = [
    ("report of a missing file", ["report", "${dir}/none.klog"], {}, 2, ["none.klog"]),
    ("report of /dev/null", ["report", "/dev/null"], {}, 2, ["/dev/null"]),
    ("report of /dev/zero", ["report", "/dev/zero"], {}, 2, ["/dev/zero"]),
    ("report of a directory", ["report", "${dir}"], {}, 2, ["not a regular file"]),
    ("report of a scenario", ["report", "${dir}/x.toml"], {"x.toml": b"[machine]\n"}, 2, ["x.toml", "not a klogger file"]),
    ("header length of 1 GB", ["report", "${dir}/k.klog"], {"k.klog": b"KLOGGER\x00\x01\x00\x00\x00\x00\x00\x00\x40"}, 2, ["k.klog", "header length"]),
    ("version 9", ["report", "${dir}/k.klog"], {"k.klog": b"KLOGGER\x00\x09\x00\x00\x00\x02\x00\x00\x00{}"}, 2, ["k.klog", "version 9"]),
    ("header that is not JSON", ["report", "${dir}/k.klog"], {"k.klog": b"KLOGGER\x00\x01\x00\x00\x00\x04\x00\x00\x00nope"}, 2, ["k.klog", "bad JSON header"]),
    ("header cut short", ["report", "${dir}/k.klog"], {"k.klog": log(hdr())[:40]}, 2, ["k.klog", "ends inside the header"]),
    ("header of hz 0", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(hz=0), SW)}, 2, ["k.klog", "byte 16", "hz: 0 is out of range"]),
    ("billing of a header of hz 0", ["billing", "${dir}/k.klog"], {"k.klog": log(hdr(hz=0), SW)}, 2, ["k.klog", "byte 16", "hz: 0 is out of range"]),
    ("html of a header of hz 0", ["html", "${dir}/k.klog", "-o", "${dir}/k.html"], {"k.klog": log(hdr(hz=0), SW)}, 2, ["k.klog", "byte 16", "hz: 0 is out of range"]),
    ("header of hz 2000000000 (a tick period of 0 ns)", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(hz=2000000000), SW)}, 2, ["k.klog", "byte 16", "hz: 2000000000 is out of range"]),
    ("html of a header of hz 4294967295", ["html", "${dir}/k.klog", "-o", "${dir}/k.html"], {"k.klog": log(hdr(hz=4294967295), SW)}, 2, ["k.klog", "byte 16", "hz: 4294967295 is out of range"]),
    ("billing of a header of hz 1000001", ["billing", "${dir}/k.klog"], {"k.klog": log(hdr(hz=1000001), SW)}, 2, ["k.klog", "byte 16", "hz: 1000001 is out of range"]),
    ("header of zero CPUs", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(cpus=0), SW)}, 2, ["k.klog", "0 CPUs"]),
    ("header of 100000 CPUs", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(cpus=100000), SW)}, 2, ["k.klog", "100000 CPUs"]),
    ("header of another format_version", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(format_version=3), SW)}, 2, ["k.klog", "format version 3"]),
    ("header of another record size", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(record_size=64), SW)}, 2, ["k.klog", "record_size 64"]),
    ("header without its CPUs", ["report", "${dir}/k.klog"], {"k.klog": log(json.dumps({"tool": "klogger"}), SW)}, 2, ["k.klog", "bad JSON header"]),
    ("record of a corrupt CPU number", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(), BAD_CPU)}, 2, ["k.klog", "CPU 2147483647"]),
    ("billing of a corrupt CPU number", ["billing", "${dir}/k.klog"], {"k.klog": log(hdr(), BAD_CPU)}, 2, ["k.klog", "CPU 2147483647"]),
    ("export of a corrupt CPU number", ["export", "--trace", "${dir}/k.klog", "-o", "${dir}/k.trace"], {"k.klog": log(hdr(), BAD_CPU)}, 2, ["k.klog", "CPU 2147483647"]),
    ("billing at 0 Hz", ["billing", "${dir}/k.klog", "--hz", "0"], {"k.klog": OK}, 2, ["hz"]),
    ("billing at 10 MHz", ["billing", "${dir}/k.klog", "--hz", "10000000"], {"k.klog": OK}, 2, ["hz"]),
    ("html at 0 Hz", ["html", "${dir}/k.klog", "--hz", "0", "-o", "${dir}/k.html"], {"k.klog": OK}, 2, ["hz"]),
    ("billing at 17 rates (each a pass over the recording)", ["billing", "${dir}/k.klog", "--hz", ",".join(str(h) for h in range(100, 117))], {"k.klog": OK}, 2, ["--hz: 17 rates given, at most 16"]),
    ("html with a rate given twice", ["html", "${dir}/k.klog", "--hz", "100,1000,100", "-o", "${dir}/k.html"], {"k.klog": OK}, 2, ["--hz: 100 given twice"]),
    ("a recording cut short is read up to its last record", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(), SW)[:-10]}, 0, []),
    ("a recording with no records", ["report", "${dir}/k.klog"], {"k.klog": log(hdr())}, 2, ["no records"]),
    ("unknown record types are skipped", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(), rec(50, 0, 77) + SW)}, 0, []),
    ("export into a missing directory", ["export", "--trace", "${dir}/k.klog", "-o", "${dir}/no/such/k.trace"], {"k.klog": OK}, 2, ["no/such"]),
    ("unknown group", ["report", "${dir}/k.klog", "--group", "planet"], {"k.klog": OK}, 2, ["planet"]),
    ("record with a negative duration", ["record", "--duration", "-5s", "-o", "${dir}/r.klog"], {}, 2, ["-5"]),
    ("record with a duration of zero", ["record", "--duration", "0s", "-o", "${dir}/r.klog"], {}, 2, ["duration"]),
    ("record of 1 GiB (more than a recording is read with), refused before recording", ["record", "--duration", "1s", "--max-size", "1GiB", "-o", "${dir}/r.klog"], {}, 2, ["--max-size 1073741824", "256 MiB a recording is read with"]),
    ("record with a duration without a unit", ["record", "--duration", "soon", "-o", "${dir}/r.klog"], {}, 2, ["soon"]),
    ("record with a buffer of 4M (units are written out: 4MiB)", ["record", "--buffer", "4M", "-o", "${dir}/r.klog"], {}, 2, ["--buffer", "unknown size unit \"M\"", "MiB"]),
    ("record with a buffer of half a byte", ["record", "--buffer", "0.5", "-o", "${dir}/r.klog"], {}, 2, ["--buffer", "whole number of bytes"]),
    ("record with a buffer past 2^64 bytes", ["record", "--buffer", "99999999TiB", "-o", "${dir}/r.klog"], {}, 2, ["--buffer", "too large"]),
    ("record with a max size of zero", ["record", "--max-size", "0GiB", "-o", "${dir}/r.klog"], {}, 2, ["--max-size", "positive"]),
    ("bench with an unknown option", ["bench", "--warp"], {}, 2, ["--warp"]),
    ("bench at 0 events/s", ["bench", "--events-per-s", "0"], {}, 2, ["--events-per-s", "0"]),
    ("bench at a negative rate", ["bench", "--events-per-s", "-100000"], {}, 2, ["unexpected argument"]),
    ("bench at a rate that is not a number", ["bench", "--events-per-s", "lots"], {}, 2, ["--events-per-s", "lots"]),
    ("bench at 10^9 events/s", ["bench", "--events-per-s", "1000000000"], {}, 2, ["--events-per-s", "1000000000"]),
    ("bench with both a rate and a work", ["bench", "--events-per-s", "100000", "--work-us", "25"], {}, 2, ["--events-per-s", "--work-us"]),
    ("no command", [], {}, 2, ["Usage"]),
    ("file of format version 3", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(format_version=3), SW, 3)}, 2, ["k.klog", "format version 3", "versions 1 to 2"]),
    ("file of format 2 whose header says 1", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(), SW, 2)}, 2, ["k.klog", "header says format version 1, the file 2"]),
    ("format 2: a gap placed by its lost record", ["report", "${dir}/k.klog", "--format", "json"], {"k.klog": log2(GAP + rec(400, 0, 101))}, 0, []),
    ("format 2: lost records of 2^64-1 events each", ["report", "${dir}/k.klog"], {"k.klog": log2(SW + rec(150, 0, 100, arg=2**64 - 1) + rec(160, 1, 100, arg=2**64 - 1))}, 0, []),
    ("format 2: a lost record on a CPU the header does not have", ["report", "${dir}/k.klog"], {"k.klog": log2(SW + rec(150, 9, 100, arg=1))}, 2, ["k.klog", "CPU 9"]),
    ("format 2: missed records of any type and count", ["report", "${dir}/k.klog"], {"k.klog": log2(GAP + rec(500, 0, 102, arg=2**64 - 1, flags=1) + rec(500, 1, 102, arg=3, flags=65535))}, 0, []),
    ("format 2: 200,000 gaps and 200,000 lost records", ["report", "${dir}/k.klog", "--format", "json"], {"k.klog": MANY_GAPS}, 0, []),
    ("format 2: only recorder records", ["report", "${dir}/k.klog"], {"k.klog": log2(rec(150, 0, 100, arg=1) + rec(160, 0, 102, arg=1, flags=1) + rec(400, 0, 101))}, 2, ["no records"]),
    # Outputs (crates/outputs): never onto the recording read, by name, ./, a symbolic or a hard link;
    # named as what is written; checked before anything is read or recorded.
    ("export onto its own recording", ["export", "${dir}/k.klog", "-o", "${dir}/k.klog"], {"k.klog": OK}, 2, ["--output", "k.klog", "is the recording", "overwrite an input"]),
    ("export --trace onto its recording by ./", ["export", "--trace", "k.klog", "-o", "./k.klog"], {"k.klog": OK}, 2, ["--output ./k.klog", "is the recording k.klog"]),
    ("export --perfetto onto a symbolic link to its recording", ["export", "--perfetto", "k.klog", "-o", "k.json"], {"k.klog": OK}, 2, ["--output k.json", "is the recording k.klog"], {"symlinks": {"k.json": "k.klog"}}),
    ("export --trace onto a hard link to its recording", ["export", "--trace", "k.klog", "-o", "h.trace"], {"k.klog": OK}, 2, ["--output h.trace", "is the recording k.klog"], {"hardlinks": {"h.trace": "k.klog"}}),
    ("export of a recording read through a link onto the recording", ["export", "l.klog", "-o", "k.klog"], {"k.klog": OK}, 2, ["--output k.klog", "is the recording l.klog"], {"symlinks": {"l.klog": "k.klog"}}),
    ("html onto its own recording", ["html", "${dir}/k.klog", "-o", "${dir}/./k.klog"], {"k.klog": OK}, 2, ["--output", "is the recording"]),
    ("html onto a hard link to its recording", ["html", "k.klog", "-o", "k.html"], {"k.klog": OK}, 2, ["--output k.html", "is the recording k.klog"], {"hardlinks": {"k.html": "k.klog"}}),
    ("export --trace to a .json file", ["export", "--trace", "${dir}/k.klog", "-o", "${dir}/k.json"], {"k.klog": OK}, 2, ["--trace", "--output", "k.json", "disagree"]),
    ("export --perfetto to a .trace file", ["export", "--perfetto", "${dir}/k.klog", "-o", "${dir}/k.trace"], {"k.klog": OK}, 2, ["--perfetto", "k.trace", "disagree"]),
    ("export to a .png file", ["export", "${dir}/k.klog", "-o", "${dir}/k.png"], {"k.klog": OK}, 2, ["--output", "k.png", "PNG"]),
    ("export to a .trace file writes a trace", ["export", "k.klog", "-o", "k.trace"], {"k.klog": OK}, 0, ["wrote k.trace (4 records)"]),
    ("export to a .json file writes Perfetto JSON", ["export", "k.klog", "-o", "k.json"], {"k.klog": OK}, 0, ["wrote k.json\n"]),
    ("export into /sys", ["export", "--trace", "${dir}/k.klog", "-o", "/sys/k.trace"], {"k.klog": OK}, 2, ["--output /sys/k.trace", "cannot create it", "Permission denied"]),
    ("html to an .svg file", ["html", "${dir}/k.klog", "-o", "${dir}/k.svg"], {"k.klog": OK}, 2, ["--output", "k.svg", "HTML"]),
    ("html onto a directory", ["html", "${dir}/k.klog", "-o", "${dir}"], {"k.klog": OK}, 2, ["--output", "Is a directory"]),
    ("record to a .trace file, refused before recording", ["record", "--duration", "1s", "-o", "${dir}/r.trace"], {}, 2, ["--output", "r.trace", "klogger recording"]),
    ("record into a missing directory, refused before recording", ["record", "--duration", "1s", "-o", "${dir}/no/r.klog"], {}, 2, ["--output", "no/r.klog", "does not exist"]),
    ("record onto a directory, refused before recording", ["record", "--duration", "1s", "-o", "${dir}"], {}, 2, ["--output", "Is a directory"]),
    ("html of a corrupt CPU number", ["html", "${dir}/k.klog", "-o", "${dir}/k.html"], {"k.klog": log(hdr(), BAD_CPU)}, 2, ["k.klog", "CPU 2147483647"]),
    ("report of a task on two CPUs at once: cut to one, counted", ["report", "${dir}/k.klog", "--format", "json"], {"k.klog": TWO_CPUS}, 0, ["k.klog", TWO_NOTE], ['"overlapping_stretches": 1', '"cpu_share": 0.5,']),
    ("report text of a task on two CPUs at once", ["report", "${dir}/k.klog"], {"k.klog": TWO_CPUS}, 0, [TWO_NOTE], ["note: " + TWO_NOTE]),
    ("billing of a task on two CPUs at once", ["billing", "${dir}/k.klog", "--format", "json"], {"k.klog": TWO_CPUS}, 0, [TWO_NOTE], ['"cpu_ns": 200,']),
    ("html of a task on two CPUs at once", ["html", "${dir}/k.klog", "-o", "${dir}/k.html"], {"k.klog": TWO_CPUS}, 0, [TWO_NOTE]),
    ("export of a task on two CPUs at once", ["export", "--trace", "${dir}/k.klog", "-o", "${dir}/k.trace"], {"k.klog": TWO_CPUS}, 0, [TWO_NOTE]),
    ("perfetto export of a task on two CPUs at once", ["export", "--perfetto", "${dir}/k.klog", "-o", "${dir}/k.json"], {"k.klog": TWO_CPUS}, 0, [TWO_NOTE]),
    ("report of events before the start and after the end: left out, counted", ["report", "${dir}/k.klog", "--format", "json"], {"k.klog": OUTSIDE}, 0, ["k.klog", OUT_NOTE], ['"events_outside_span": 2', '"duration_ns": 200,']),
    ("billing of events before the start and after the end", ["billing", "${dir}/k.klog"], {"k.klog": OUTSIDE}, 0, [OUT_NOTE]),
    # Names (report::escape): visible on a terminal, exact in JSON, never a raw control character.
    ("names: report of a command name holding escape sequences", ["report", "${dir}/k.klog"], {"k.klog": hostile(EVIL)}, 0, [], {"stdout": [SHOWN], "absent": RAW}),
    ("names: billing of a command name holding escape sequences (cut to its column)", ["billing", "${dir}/k.klog"], {"k.klog": hostile(EVIL)}, 0, [], {"stdout": [SHOWN[:28] + " "], "absent": RAW}),
    ("names: report --format json keeps a hostile command name exactly", ["report", "${dir}/k.klog", "--format", "json"], {"k.klog": hostile(EVIL)}, 0, [], {"stdout": ['"name": "\\u001b[2J<b>&\\u0007\x9b\u202e"'], "absent": ["\x1b", "\x07"]}),
    ("names: html of a command name holding escape sequences", ["html", "${dir}/k.klog", "-o", "${dir}/k.html"], {"k.klog": hostile(EVIL)}, 0, ["wrote"], {"absent": RAW}),
    ("names: export --perfetto of a command name holding escape sequences", ["export", "--perfetto", "${dir}/k.klog", "-o", "${dir}/k.json"], {"k.klog": hostile(EVIL)}, 0, ["wrote"], {"absent": RAW}),
    ("names: report of a command name of 15 bytes that are not UTF-8", ["report", "${dir}/k.klog"], {"k.klog": hostile(b"\xff" * 15)}, 0, [], {"stdout": ["\ufffd" * 15 + " (5)"]}),
    ("names: report of a command name of spaces", ["report", "${dir}/k.klog"], {"k.klog": hostile(b" " * 15)}, 0, [], {"stdout": [" " * 15 + " (5)"]}),
    ("names: report of a command name holding invisible characters", ["report", "${dir}/k.klog"], {"k.klog": hostile(b"au\xe2\x80\x8bdio\xef\xbb\xbf\xc2\xad")}, 0, [], {"stdout": ["au\\u{200b}dio\\u{feff}\\u{ad}"], "absent": ["\u200b", "\ufeff", "\u00ad"]}),
    ("names: a kernel release holding an escape sequence", ["report", "${dir}/k.klog"], {"k.klog": log(hdr(kernel="6.1\x1b[2J"), SW)}, 0, [], {"stdout": ["kernel 6.1\\x1b[2J"], "absent": ["\x1b"]}),
]

out = ["# Hostile input for klogger (crates/hostile runs these). Generated by gen-klogger.py: edit that.\n\n"]
for name, args, files, code, stderr, *more in CASES:
    out.append("[[case]]\nname = %s\nbin = \"klogger\"\nargs = %s\n" % (json.dumps("klogger: " + name), json.dumps(args)))
    if files:
        value = lambda v: json.dumps(v) if isinstance(v, str) else '"${hex:%s}"' % v.hex()
        out.append("files = { %s }\n" % ", ".join("%s = %s" % (json.dumps(k), value(v)) for k, v in files.items()))
    # More: a dict of stdout, absent, symlinks, hardlinks; a list alone is stdout.
    extra = {}
    for m in more:
        extra.update(m if isinstance(m, dict) else {"stdout": m})
    for key, links in extra.items():
        if key in ("stdout", "absent"):  # strings on standard output; strings on neither output
            out.append("%s = %s\n" % (key, json.dumps(links)))
        else:  # symlinks, hardlinks: name = target
            out.append("%s = { %s }\n" % (key, ", ".join("%s = %s" % (json.dumps(k), json.dumps(v)) for k, v in links.items())))
    if code != 2:
        out.append("exit = %d\n" % code)
    if stderr:
        out.append("stderr = %s\n" % json.dumps(stderr))
    out.append("\n")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "klogger.toml"), "w") as f:
    f.write("".join(out))
