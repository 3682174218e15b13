#![no_main]
//! Bytes -> ModelProto; a decoded model survives encode + decode unchanged.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::decode_roundtrip(data));
