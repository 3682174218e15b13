//! Times loading for decode on touch against the eager decoder, and a pass
//! over every node: `cargo run --release --example lazy_timing -- FILE [N]`.
use std::time::Instant;

use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::decode::source;
use onnxfast_core::{decode, proto, DecodeOptions};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: lazy_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mapped = source::map_file(path.as_ref())?;
    let buf = mapped.bytes;
    // As the binding loads a path: pages behind the walk are released
    // (`KEEP_PAGES=1` keeps them, to see what that costs).
    let options = DecodeOptions {
        pages: mapped
            .pages
            .filter(|_| std::env::var_os("KEEP_PAGES").is_none()),
        ..DecodeOptions::default()
    };
    for _ in 0..n {
        let t = Instant::now();
        let stats = onnxfast_core::decode::scan::scan(
            &buf,
            onnxfast_core::proto::schema::ids::MODEL_PROTO,
            onnxfast_core::decode::scan::DEFAULT_MAX_DEPTH,
        )?;
        let scan = t.elapsed();
        let t = Instant::now();
        let lazy = decode_lazy(buf.clone(), &options)?;
        let load = t.elapsed();
        let t = Instant::now();
        let mut inputs = 0;
        for i in 0..lazy.lists.node.len() {
            inputs += lazy.lists.node.decode(i)?.input.len();
        }
        let walk = t.elapsed();
        let t = Instant::now();
        let eager: proto::ModelProto = decode(buf.clone(), &DecodeOptions::default())?;
        let eager_time = t.elapsed();
        println!(
            "scan {scan:?} (projects {} MiB); lazy load {load:?} (index {} KiB, {} nodes), decode every node {walk:?} ({inputs} inputs); eager decode {eager_time:?}",
            stats.heap >> 20,
            lazy.index_bytes() / 1024,
            lazy.lists.node.len(),
        );
        drop(eager);
    }
    Ok(())
}
