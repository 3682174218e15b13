#![no_main]
//! Bytes -> TensorProto -> numpy-layout bytes and float32 / int8 kernels.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::tensor_to_arrays(data));
