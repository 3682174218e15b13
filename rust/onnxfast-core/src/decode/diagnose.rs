//! Locating a fault: the walk again, validating everything and tracking the
//! field path, run only once something has failed, to report the byte offset
//! and path (`graph.node[41].attribute[2].t.raw_data`) of the first fault.

use super::scan::ScanStats;
use super::walk::{push_segment, walk, Root, Stack};
use crate::error::DecodeError;
use crate::proto::schema::MESSAGES;

/// Re-walks `buf` validating everything (UTF-8 included) and returns the
/// first fault with its field path, or `None` when the buffer is sound.
pub fn diagnose(buf: &[u8], root: usize, max_depth: usize) -> Option<DecodeError> {
    let mut path = Vec::new();
    let mut stats = ScanStats::new();
    match walk::<true>(
        buf,
        (root, Root::Plain),
        max_depth,
        &mut path,
        None,
        None,
        None,
        &mut stats,
        &mut Stack::default(),
    ) {
        Ok(()) => None,
        Err((offset, kind, current, stack)) => {
            let mut text = String::new();
            let mut parent = root;
            for (step, &msg) in path.iter().zip(stack.iter()) {
                push_segment(
                    &mut text,
                    &MESSAGES[parent],
                    step.field_index,
                    step.elem_index,
                );
                parent = msg;
            }
            if let Some((index, count)) = current {
                push_segment(&mut text, &MESSAGES[parent], index, count);
            }
            Some(DecodeError {
                offset: offset as u64,
                path: text,
                root: MESSAGES[root].name,
                kind,
            })
        }
    }
}
