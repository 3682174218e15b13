//! The memory a graph's node outputs take when it runs at given sizes, in
//! graph order: what `Graph.memory_plan` and `onnxfast shapes --sizes`
//! report. Each output is held from the node making it to the last node
//! reading it (a node holding a subgraph reads what the subgraph reads),
//! or to its own node when no node reads it; graph outputs to the end.
//! The plan is a lower bound of what a runtime needs: no aliasing, no
//! in-place reuse, no workspace, one node at a time in the given order.

use crate::tensor::elem_type;

/// One node output of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The node making it.
    pub made: usize,
    /// The last node reading it, if any.
    pub last_read: Option<usize>,
    /// True for a graph output (held to the end).
    pub output: bool,
    /// Its bytes, when its element size and every dim are known.
    pub bytes: Option<u64>,
}

impl Held {
    /// The node after which the output is freed; None for a graph output.
    pub fn freed_after(&self) -> Option<usize> {
        if self.output {
            return None;
        }
        Some(self.last_read.map_or(self.made, |r| r.max(self.made)))
    }
}

/// Totals of a plan over a graph's node outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Plan {
    /// The bytes of every output of known size.
    pub total_bytes: u128,
    /// The most bytes held at once, in graph order.
    pub peak_bytes: u128,
    /// The first node at whose run the peak is held (None when no output of
    /// known size takes a byte).
    pub peak_node: Option<usize>,
    /// How many outputs have no known size (an unknown dim, element type or
    /// a size too large to count).
    pub unknown: usize,
}

/// Bytes a tensor of element type `elem` (a `TensorProto.DataType`) and
/// `dims` takes as stored (sub-byte types packed, rounded up to a byte);
/// None when the element type has no fixed size (STRING, UNDEFINED, a code
/// onnx does not define), a dim is unknown or negative, or the bytes reach
/// 2^64 (16 EiB).
pub fn tensor_bytes(elem: i32, dims: &[Option<i64>]) -> Option<u64> {
    let t = elem_type(elem).filter(|t| t.bits > 0)?;
    let mut sizes = Vec::with_capacity(dims.len());
    for d in dims {
        sizes.push(u128::try_from((*d)?).ok()?);
    }
    if sizes.contains(&0) {
        return Some(0);
    }
    let mut bits = u128::from(t.bits);
    for d in sizes {
        // Past 2^128 bits the bytes are far past 2^64.
        bits = bits.checked_mul(d)?;
    }
    u64::try_from(bits.div_ceil(8)).ok()
}

/// The plan of a graph of `nodes` nodes whose node outputs are `held`.
/// Entries naming a node at or past `nodes` are counted in the totals and
/// freed at the end.
pub fn plan(nodes: usize, held: &[Held]) -> Plan {
    let mut out = Plan::default();
    let mut made = vec![0u128; nodes];
    let mut freed = vec![0u128; nodes];
    for h in held {
        let Some(bytes) = h.bytes else {
            out.unknown += 1;
            continue;
        };
        let bytes = u128::from(bytes);
        out.total_bytes += bytes;
        if let Some(slot) = made.get_mut(h.made) {
            *slot += bytes;
        }
        if let Some(slot) = h.freed_after().and_then(|i| freed.get_mut(i)) {
            *slot += bytes;
        }
    }
    let mut live: u128 = 0;
    for (i, (m, f)) in made.iter().zip(&freed).enumerate() {
        live += m;
        if live > out.peak_bytes {
            out.peak_bytes = live;
            out.peak_node = Some(i);
        }
        // Frees only what was added at or before this node.
        live = live.saturating_sub(*f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(made: usize, last_read: Option<usize>, output: bool, bytes: u64) -> Held {
        Held {
            made,
            last_read,
            output,
            bytes: Some(bytes),
        }
    }

    #[test]
    fn bytes_follow_the_element_size_and_refuse_what_is_unknown() {
        assert_eq!(tensor_bytes(1, &[Some(2), Some(3)]), Some(24));
        assert_eq!(tensor_bytes(1, &[]), Some(4));
        assert_eq!(tensor_bytes(22, &[Some(3)]), Some(2)); // int4: packed
        assert_eq!(tensor_bytes(27, &[Some(5)]), Some(4)); // float6: 30 bits
        assert_eq!(tensor_bytes(7, &[Some(0), Some(9)]), Some(0));
        assert_eq!(tensor_bytes(8, &[Some(2)]), None); // STRING
        assert_eq!(tensor_bytes(0, &[Some(2)]), None);
        assert_eq!(tensor_bytes(99, &[Some(2)]), None);
        assert_eq!(tensor_bytes(1, &[Some(2), None]), None);
        assert_eq!(tensor_bytes(1, &[Some(-1)]), None);
        assert_eq!(
            tensor_bytes(1, &[Some(1 << 30), Some(1 << 30)]),
            Some(1 << 62)
        );
        assert_eq!(tensor_bytes(1, &[Some(1 << 40), Some(1 << 30)]), None);
        // The last byte below 2^64, and the first at it.
        assert_eq!(
            tensor_bytes(2, &[Some(i64::MAX), Some(2)]),
            Some(u64::MAX - 1)
        );
        assert_eq!(tensor_bytes(6, &[Some(1 << 62)]), None);
        assert_eq!(tensor_bytes(1, &[Some(i64::MAX); 8]), None);
        // A zero dim: no bytes, whatever the others.
        assert_eq!(
            tensor_bytes(
                1,
                &[Some(i64::MAX); 4]
                    .iter()
                    .copied()
                    .chain([Some(0)])
                    .collect::<Vec<_>>()
            ),
            Some(0)
        );
    }

    #[test]
    fn the_peak_is_the_most_held_at_once() {
        // a(10) -> b(20) -> c(5, output); d(100) made by node 1, never read.
        let h = [
            held(0, Some(1), false, 10),
            held(1, Some(2), false, 20),
            held(1, None, false, 100),
            held(2, None, true, 5),
        ];
        let p = plan(3, &h);
        assert_eq!(p.total_bytes, 135);
        // node 1 holds a (read by it), b and d.
        assert_eq!(p.peak_bytes, 130);
        assert_eq!(p.peak_node, Some(1));
        assert_eq!(p.unknown, 0);
    }

    #[test]
    fn unknown_sizes_are_counted_and_left_out() {
        let h = [
            held(0, Some(1), false, 8),
            Held {
                made: 0,
                last_read: Some(1),
                output: false,
                bytes: None,
            },
        ];
        let p = plan(2, &h);
        assert_eq!((p.total_bytes, p.peak_bytes, p.unknown), (8, 8, 1));
        assert_eq!(plan(2, &[]).peak_node, None);
    }

    #[test]
    fn a_read_before_the_making_node_frees_after_it() {
        // Out of order (an invalid graph): freed after its own node.
        let h = [held(2, Some(0), false, 7), held(3, None, false, 1)];
        let p = plan(4, &h);
        assert_eq!((p.peak_bytes, p.peak_node), (7, Some(2)));
        // Made past the last node: counted, never held.
        let p = plan(1, &[held(5, None, false, 3)]);
        assert_eq!((p.total_bytes, p.peak_bytes), (3, 0));
    }
}
