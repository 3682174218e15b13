//! Writes random models of real operators (the inference fuzz target's
//! generator, `fuzzing::random_model`) to a folder, for comparing verdicts
//! and inferred types with onnx (`scripts/diff_random_models.py`):
//! `cargo run --release --example write_random_models -- DIR [N] [SEED]`
//! writes `DIR/r{seed}_{i}.onnx` for `i` in `0..N`. The same seed gives the
//! same files.
use prost::Message;

use onnxfast_core::fuzzing::random_model;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(
        args.next()
            .ok_or("usage: write_random_models DIR [N] [SEED]")?,
    );
    let n: usize = args.next().map(|v| v.parse()).transpose()?.unwrap_or(1000);
    let seed: u64 = args.next().map(|v| v.parse()).transpose()?.unwrap_or(1);
    std::fs::create_dir_all(&dir)?;
    let choices = onnxfast_core::fuzzing::seeded_choices(seed);
    for (i, data) in choices.take(n).enumerate() {
        let model = random_model(&data);
        std::fs::write(dir.join(format!("r{seed}_{i}.onnx")), model.encode_to_vec())?;
    }
    println!("{n} models in {}", dir.display());
    Ok(())
}
