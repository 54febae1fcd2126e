//! Build script: generates `vmlinux.h` from the running kernel's BTF with `bpftool`, compiles
//! `src/bpf/klogger.bpf.c` with clang >= 16 and writes the libbpf-rs skeleton into `OUT_DIR`.
//!
//! Tools are found this way (each can be overridden by an environment variable):
//! - clang: `$KLOGGER_CLANG`, else the first of clang-19, clang-18, clang-17, clang-16, clang whose
//!   major version is >= 16 (Debian 12's default `clang` is 14, so `scripts/ci/setup-klogger.sh`
//!   installs `clang-19`).
//! - bpftool: `$KLOGGER_BPFTOOL`, else `bpftool` on PATH, else `/usr/sbin/bpftool`.
//! - BTF: `$KLOGGER_BTF`, else `/sys/kernel/btf/vmlinux`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use libbpf_cargo::SkeletonBuilder;

const SRC: &str = "src/bpf/klogger.bpf.c";

fn clang_major(bin: &str) -> Option<u32> {
    let out = Command::new(bin).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = text.split("clang version ").nth(1)?;
    rest.split('.').next()?.trim().parse().ok()
}

fn find_clang() -> String {
    if let Ok(c) = env::var("KLOGGER_CLANG") {
        return c;
    }
    for c in ["clang-19", "clang-18", "clang-17", "clang-16", "clang"] {
        if let Some(v) = clang_major(c) {
            if v >= 16 {
                return c.to_string();
            }
        }
    }
    panic!(
        "klogger: no clang >= 16 found (tried clang-19..clang-16, clang). \
         Run scripts/ci/setup-klogger.sh (installs clang-19 from Debian) or set KLOGGER_CLANG."
    );
}

fn find_bpftool() -> String {
    if let Ok(b) = env::var("KLOGGER_BPFTOOL") {
        return b;
    }
    for b in ["bpftool", "/usr/sbin/bpftool", "/sbin/bpftool"] {
        if Command::new(b).arg("version").output().map(|o| o.status.success()).unwrap_or(false) {
            return b.to_string();
        }
    }
    panic!(
        "klogger: bpftool not found. Run scripts/ci/setup-klogger.sh (installs Debian's bpftool) \
         or set KLOGGER_BPFTOOL."
    );
}

fn gen_vmlinux(out_dir: &Path) -> PathBuf {
    let btf = env::var("KLOGGER_BTF").unwrap_or_else(|_| "/sys/kernel/btf/vmlinux".to_string());
    if !Path::new(&btf).exists() {
        panic!(
            "klogger: kernel BTF not found at {btf}: this kernel was built without \
             CONFIG_DEBUG_INFO_BTF; set KLOGGER_BTF to a vmlinux with BTF"
        );
    }
    let bpftool = find_bpftool();
    let out = Command::new(&bpftool)
        .args(["btf", "dump", "file", &btf, "format", "c"])
        .output()
        .unwrap_or_else(|e| panic!("klogger: running {bpftool}: {e}"));
    if !out.status.success() {
        panic!(
            "klogger: `{bpftool} btf dump file {btf} format c` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let dir = out_dir.join("vmlinux");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("vmlinux.h"), out.stdout).unwrap();
    println!("cargo:rerun-if-changed={btf}");
    println!("cargo:rerun-if-env-changed=KLOGGER_BTF");
    dir
}

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR must be set"));
    let clang = find_clang();
    let vmlinux_dir = gen_vmlinux(&out_dir);
    let skel = out_dir.join("klogger.skel.rs");
    SkeletonBuilder::new()
        .source(SRC)
        .clang(&clang)
        .clang_args([
            std::ffi::OsString::from("-I"),
            vmlinux_dir.into_os_string(),
            "-Wall".into(),
            "-Werror".into(),
        ])
        .build_and_generate(&skel)
        .unwrap_or_else(|e| panic!("klogger: building {SRC} with {clang}: {e:#}"));
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed=src/bpf/klogger.h");
    println!("cargo:rerun-if-env-changed=KLOGGER_CLANG");
    println!("cargo:rerun-if-env-changed=KLOGGER_BPFTOOL");
}
