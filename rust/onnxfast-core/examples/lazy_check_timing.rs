//! Times a check from a file as `check_model(path)` runs it: map, load for
//! decode on touch, check (streaming), each run from scratch:
//! `cargo run --release --example lazy_check_timing -- FILE [N]` (`FULL=1`:
//! the full check).
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
        let buf = source::map_file(path.as_ref())?.bytes;
        let lazy = decode_lazy(buf, &DecodeOptions::default())?;
        let load = t.elapsed();
        let t = Instant::now();
        let report = check_lazy(&lazy.model, &lazy.lists, &options)?;
        println!(
            "load {load:?}; check {:?} ({} findings)",
            t.elapsed(),
            report.diagnostics.len()
        );
    }
    Ok(())
}
