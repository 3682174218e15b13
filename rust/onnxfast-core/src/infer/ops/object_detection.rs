//! Rules of onnx's `object_detection` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
