use std::sync::{atomic::AtomicBool, Arc};
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = klogger::record::RecordOptions {
        output: "/tmp/kl-test.klog".into(),
        target: if args.is_empty() { klogger::record::Target::System } else { klogger::record::Target::Command(args) },
        duration: Some(std::time::Duration::from_secs(2)),
        buffer_bytes: 1 << 22,
        max_bytes: 1 << 30,
        stop: Arc::new(AtomicBool::new(false)),
        ready: None,
        progress: true,
    };
    let s = klogger::record::record(&opts)?;
    println!("{s:?}");
    let log = klogger::format::Log::read(&opts.output)?;
    let mut counts = std::collections::BTreeMap::new();
    for e in &log.events { *counts.entry(format!("{:?}", e.kind)).or_insert(0u64) += 1; }
    println!("{counts:?} {:?}", log.header);
    Ok(())
}
