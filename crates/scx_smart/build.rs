// The BPF half of the scheduler is scx_rustland_core's: its builder writes intf.h, main.bpf.c and
// src/bpf.rs into this crate (they are build outputs, ignored by git) and compiles the BPF with clang.
fn main() {
    scx_rustland_core::RustLandBuilder::new().expect("scx_rustland_core builder").build().expect("BPF build");
}
