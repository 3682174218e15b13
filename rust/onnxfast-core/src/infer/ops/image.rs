//! Rules of onnx's `image` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
