//! Times the fast scan of a model (validation and the heap projection, what
//! a load runs first): `cargo run --release --example scan_timing -- FILE [N]`;
//! prints the fastest and the median of N runs (`RAYON_NUM_THREADS=1`: one
//! thread, the steadiest measure of the scan's own work).
use std::time::Instant;

use onnxfast_core::decode::scan::{scan_model, DEFAULT_MAX_DEPTH};
use onnxfast_core::decode::source;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: scan_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(21)
        .max(1);
    let buf = source::map_file(path.as_ref())?.bytes;
    let mut times = Vec::with_capacity(n);
    let mut heap = 0;
    for _ in 0..n {
        let t = Instant::now();
        let (stats, deferred) = scan_model(&buf, DEFAULT_MAX_DEPTH, None, None)?;
        times.push(t.elapsed());
        heap = stats.heap;
        drop(deferred);
    }
    times.sort();
    println!(
        "scan: fastest {:?}, median {:?} ({n} runs; projects {} MiB)",
        times[0],
        times[n / 2],
        heap >> 20
    );
    Ok(())
}
