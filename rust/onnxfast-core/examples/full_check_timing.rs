//! Times the full check on one file, split into its parts:
//! `cargo run --release --example full_check_timing -- FILE [N]`.
use std::time::Instant;

use onnxfast_core::checker::{check_model, CheckOptions};
use onnxfast_core::decode::source;
use onnxfast_core::infer::{infer_model, InferOptions};
use onnxfast_core::{decode, proto, DecodeOptions};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: full_check_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let buf = source::map_file(path.as_ref())?.bytes;
    let model: proto::ModelProto = decode(buf, &DecodeOptions::default())?;
    for _ in 0..n {
        let t = Instant::now();
        let inferred = infer_model(&model, &InferOptions::default());
        let infer = t.elapsed();
        let t = Instant::now();
        let report = check_model(
            &model,
            &CheckOptions {
                full: true,
                ..CheckOptions::default()
            },
        );
        println!(
            "infer {infer:?} ({} findings); full check {:?} ({} findings)",
            inferred.diagnostics.len(),
            t.elapsed(),
            report.diagnostics.len()
        );
    }
    Ok(())
}
