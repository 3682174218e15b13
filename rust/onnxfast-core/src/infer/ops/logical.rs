//! Rules of onnx's `logical` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
