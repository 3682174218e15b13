#![no_main]
//! Bytes -> ModelProto -> checker (plain, strict, full with type and shape
//! inference): always returns.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::decode_and_check(data));
