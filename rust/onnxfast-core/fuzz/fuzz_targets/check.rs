#![no_main]
//! Bytes -> ModelProto -> checker (plain and strict): always returns.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::decode_and_check(data));
