//! Rules of onnx's `traditionalml` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
