//! Times the stages of decoding one file: `cargo run --release --example decode_timing -- FILE`.
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use onnxfast_core::decode::{scan, source};
use onnxfast_core::proto::schema::ids;
use onnxfast_core::{decode, proto, DecodeOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: decode_timing FILE")?;
    for _ in 0..std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
    {
        let t = Instant::now();
        let buf = source::map_file(path.as_ref())?.bytes;
        let t_map = t.elapsed();
        let t = Instant::now();
        let stats = scan::scan(&buf, ids::MODEL_PROTO, scan::DEFAULT_MAX_DEPTH)?;
        let t_scan = t.elapsed();
        let t = Instant::now();
        let model: proto::ModelProto = decode(buf, &DecodeOptions::default())?;
        let t_decode = t.elapsed();
        let t = Instant::now();
        drop(model);
        let t_drop = t.elapsed();
        println!(
            "map {t_map:?} scan {t_scan:?} scan+decode {t_decode:?} drop {t_drop:?} projected {} MiB",
            onnxfast_core::decode::projected_memory(&stats) >> 20
        );
    }
    Ok(())
}
