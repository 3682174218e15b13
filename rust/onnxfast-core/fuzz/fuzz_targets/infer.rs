#![no_main]
//! Bytes -> a random graph of real operators (odd types, shapes and
//! attributes) -> inference and the full check: always returns.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::infer_random_model(data));
