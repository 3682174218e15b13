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
    // xorshift64*: a fixed stream of choice bytes per seed.
    let mut state: u64 = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    for i in 0..n {
        let data: Vec<u8> = (0..512).map(|_| (next() >> 56) as u8).collect();
        let model = random_model(&data);
        std::fs::write(dir.join(format!("r{seed}_{i}.onnx")), model.encode_to_vec())?;
    }
    println!("{n} models in {}", dir.display());
    Ok(())
}
