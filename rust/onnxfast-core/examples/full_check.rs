//! Prints the full check of models (structure, types and shapes) and, with
//! `--types`, the inferred type of every value:
//! `cargo run --example full_check -- [--types] FILE...`.
use onnxfast_core::checker::{check_model, CheckOptions};
use onnxfast_core::decode::source;
use onnxfast_core::infer::{infer_model, InferOptions};
use onnxfast_core::{decode, proto, DecodeOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut types = false;
    for arg in std::env::args().skip(1) {
        if arg == "--types" {
            types = true;
            continue;
        }
        let path = std::path::Path::new(&arg);
        let buf = source::map_file(path)?.bytes;
        let model: proto::ModelProto = decode(buf, &DecodeOptions::default())?;
        let options = CheckOptions {
            full: true,
            model_dir: path.parent().map(|p| p.to_path_buf()),
            ..CheckOptions::default()
        };
        let report = check_model(&model, &options);
        println!("{arg}: {}", if report.ok() { "valid" } else { "invalid" });
        for d in &report.diagnostics {
            println!("{d}");
        }
        if types {
            let inferred = infer_model(
                &model,
                &InferOptions {
                    collect_types: true,
                    report_unfit: false,
                    ..InferOptions::default()
                },
            );
            for g in &inferred.graphs {
                for (name, t) in &g.values {
                    println!("  {} {name}: {}", g.path, inferred.symbols.show(t));
                }
            }
        }
    }
    Ok(())
}
