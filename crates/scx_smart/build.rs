// The BPF half of the scheduler is scx_rustland_core's: its builder writes intf.h, main.bpf.c and
// src/bpf.rs into this crate (they are build outputs, ignored by git) and compiles the BPF with clang.
// Our own small BPF program, src/bpf_wake/wake.bpf.c (wake-up preemption for time-constrained
// threads), is compiled by the same builder library into OUT_DIR/wake_skel.rs.
fn main() {
    scx_rustland_core::RustLandBuilder::new().expect("scx_rustland_core builder").build().expect("BPF build");
    scx_cargo::BpfBuilder::new()
        .expect("BPF builder")
        .enable_skel("src/bpf_wake/wake.bpf.c", "wake")
        .build()
        .expect("building src/bpf_wake/wake.bpf.c");
}
