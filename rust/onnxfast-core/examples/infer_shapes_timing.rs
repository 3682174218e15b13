//! Times `infer::infer_shapes` on one file, split into its parts:
//! `cargo run --release --example infer_shapes_timing -- FILE [N]`
//! (`LAZY_ONLY=1`: the lazily loaded model's runs only).
use std::time::Instant;

use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::decode::source;
use onnxfast_core::infer::{annotate, infer_lazy, infer_model, infer_shapes_lazy, InferOptions};
use onnxfast_core::{decode, proto, DecodeOptions};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: infer_shapes_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let buf = source::map_file(path.as_ref())?.bytes;
    // FRESH=1: what a fresh process's first call pays (load, then
    // infer_shapes_lazy with nothing decoded yet), then exit.
    if std::env::var_os("FRESH").is_some() {
        let t = Instant::now();
        let fresh = decode_lazy(buf.clone(), &DecodeOptions::default())?;
        let load = t.elapsed();
        let t = Instant::now();
        let (_, lists, _, done) =
            infer_shapes_lazy(&fresh.model, &fresh.lists, &InferOptions::default())?;
        println!(
            "fresh: load {load:?}; infer_shapes {:?} ({} added, {} entries)",
            t.elapsed(),
            done.added,
            lists.map_or(0, |l| l.value_info.len())
        );
        return Ok(());
    }
    let model: proto::ModelProto = decode(buf.clone(), &DecodeOptions::default())?;
    let lazy = decode_lazy(buf.clone(), &DecodeOptions::default())?;
    // First touch: each list decoded and kept (what a fresh model pays).
    let t = Instant::now();
    lazy.lists.node.keep_all()?;
    let nodes = t.elapsed();
    let t = Instant::now();
    lazy.lists.value_info.keep_all()?;
    let value_info = t.elapsed();
    let t = Instant::now();
    lazy.lists.initializer.keep_all()?;
    println!(
        "first touch: nodes {nodes:?}, value_info {value_info:?}, initializers {:?}",
        t.elapsed()
    );
    let plain = InferOptions::default();
    infer_lazy(&lazy.model, &lazy.lists, &plain)?;
    for _ in 0..n {
        let t = Instant::now();
        infer_lazy(&lazy.model, &lazy.lists, &plain)?;
        let infer = t.elapsed();
        let t = Instant::now();
        let (_, lists, _, done) = infer_shapes_lazy(&lazy.model, &lazy.lists, &plain)?;
        let written = t.elapsed();
        println!(
            "lazy: infer {infer:?}; infer_shapes {written:?} ({} added, {} entries)",
            done.added,
            lists.map_or(0, |l| l.value_info.len())
        );
    }
    // LAZY_ONLY=1: the lazy path alone (for a profile of it).
    let eager_runs = if std::env::var_os("LAZY_ONLY").is_some() {
        0
    } else {
        n
    };
    for _ in 0..eager_runs {
        let t = Instant::now();
        let plain = infer_model(&model, &InferOptions::default());
        let infer = t.elapsed();
        let options = InferOptions {
            collect_types: true,
            report_unfit: true,
            ..InferOptions::default()
        };
        let t = Instant::now();
        let inference = infer_model(&model, &options);
        let collect = t.elapsed();
        let t = Instant::now();
        let mut copy = model.clone();
        let clone = t.elapsed();
        let t = Instant::now();
        let done = annotate::annotate(&mut copy, &inference);
        let write = t.elapsed();
        let t = Instant::now();
        drop(copy);
        drop(inference);
        let free = t.elapsed();
        println!(
            "infer {infer:?} ({} findings); with types {collect:?}; clone {clone:?}; \
             annotate {write:?} ({} added); free {free:?}",
            plain.diagnostics.len(),
            done.added
        );
    }
    Ok(())
}
