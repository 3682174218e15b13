#![no_main]
//! A dim's text (hostile, as a model's dim_param is) evaluated at sizes.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxfast_core::fuzzing::evaluate_text(data));
