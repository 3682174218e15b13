//! Rules of onnx's `training` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
