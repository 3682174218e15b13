#![no_main]
//! Fuzzed external_data entries against a sandbox folder holding a symlink,
//! a hard link, a FIFO and a subfolder: every read lands inside the folder,
//! nothing blocks.
use std::sync::OnceLock;

use onnxfast_core::fuzzing::{external_read, Sandbox};

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let sandbox = SANDBOX.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("onnxfast-fuzz-sandbox-{}", std::process::id()));
        Sandbox::create(&root).expect("sandbox")
    });
    let mmap = data.first().is_some_and(|b| b & 1 == 0);
    external_read(sandbox, data.get(1..).unwrap_or(&[]), mmap);
});
