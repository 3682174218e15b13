//! Times a check from a file as `check_model(path)` runs it: map, load for
//! decode on touch, check (streaming), each run from scratch:
//! `cargo run --release --example lazy_check_timing -- FILE [N]` (`FULL=1`:
//! the full check). Peak RSS is the process's, after the load and after the
//! check.
use std::time::Instant;

use onnxfast_core::checker::{check_lazy, CheckOptions};
use onnxfast_core::decode::{lazy::decode_lazy, source};
use onnxfast_core::DecodeOptions;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: lazy_check_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let options = CheckOptions {
        full: std::env::var_os("FULL").is_some(),
        ..CheckOptions::default()
    };
    for _ in 0..n {
        let t = Instant::now();
        // As the binding loads a path: pages behind walks are released.
        let mapped = source::map_file(path.as_ref())?;
        let decode = DecodeOptions {
            pages: mapped.pages,
            ..DecodeOptions::default()
        };
        let lazy = decode_lazy(mapped.bytes, &decode)?;
        let load = t.elapsed();
        let loaded_peak = peak_mib();
        let t = Instant::now();
        let report = check_lazy(&lazy.model, &lazy.lists, &options)?;
        println!(
            "load {load:?} (peak RSS {loaded_peak} MiB); check {:?} ({} findings); peak RSS {} \
             MiB",
            t.elapsed(),
            report.diagnostics.len(),
            peak_mib()
        );
    }
    Ok(())
}

/// The process's peak resident memory so far (Linux; 0 elsewhere).
fn peak_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}
