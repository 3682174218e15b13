//! Times the checker on one file: `cargo run --release --example check_timing -- FILE [N]`\n//! (`FULL=1`: the full check).
use std::time::Instant;

use onnxfast_core::checker::{check_model, CheckOptions};
use onnxfast_core::decode::source;
use onnxfast_core::{decode, proto, DecodeOptions};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: check_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let full = std::env::var_os("FULL").is_some();
    let options = CheckOptions {
        full,
        ..CheckOptions::default()
    };
    let buf = source::map_file(path.as_ref())?.bytes;
    let t = Instant::now();
    let model: proto::ModelProto = decode(buf, &DecodeOptions::default())?;
    println!("decode {:?}", t.elapsed());
    for _ in 0..n {
        let t = Instant::now();
        let report = check_model(&model, &options);
        println!(
            "check {:?} ({} findings)",
            t.elapsed(),
            report.diagnostics.len()
        );
    }
    Ok(())
}
