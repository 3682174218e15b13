//! The fast scan: a non-allocating pass over the protobuf wire format,
//! driven by the schema table of `onnx.proto`, run before anything is
//! decoded. It proves the framing is sound (tags, varints, lengths, wire
//! types, nesting depth, UTF-8 of string fields, so that a message decoded
//! later, on touch, cannot fail) and projects the heap the decoded tree will
//! take (each container's capacity as the decoder grows it, each string's
//! allocation), so a caller can refuse a memory bomb before allocating
//! anything. For a model, the main graph's long lists are deferred by the
//! walk and scanned in parallel runs. On a fault, [`super::diagnose`]
//! re-walks the buffer to report where.
//!
//! The walk is iterative (no recursion on input depth) and never reads the
//! bytes of `bytes` fields (tensor `raw_data`): scanning a memory-mapped
//! multi-gigabyte model touches only its small fields.

use std::sync::mpsc::{Receiver, Sender};

use super::diagnose;
#[cfg(test)]
use super::walk::{attribute_heap, flat_heap, tensor_heap};
use super::walk::{
    scan_flat, scan_main_node, scan_plain_node, walk, Deferring, DiagFault, Flush, Root, Stack,
};
use crate::decode::source::{PageReleaser, RELEASE_WINDOW};
use crate::decode::spans::{range_masks, List, Lists, Spans};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto::schema::{ids, MESSAGES};

/// Protobuf's own default recursion limit, also onnx's (C++ protobuf).
pub const DEFAULT_MAX_DEPTH: usize = 100;

/// What the scan counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanStats {
    /// Messages of each type (indexed like [`MESSAGES`]), the root included.
    pub messages: Vec<u64>,
    /// Heap bytes of the decoded tree (the root struct itself aside): every
    /// container at the capacity the decoder grows it to (a `Vec` filled
    /// by pushes doubles from 4; the main graph's lists and a main-graph
    /// node's attributes are reserved exactly; `SmallVec`s spill past their
    /// inline length; boxes once), and every string's allocation. Bytes
    /// fields are slices of the source and take none.
    pub heap: u64,
    /// Deepest nesting seen (the root is depth 0).
    pub max_depth: usize,
    /// Main-graph nodes the node shortcut took (ranges of their indices,
    /// in no order): see [`Deferred::plain_nodes`].
    pub(crate) plain_nodes: Vec<std::ops::Range<usize>>,
}

impl ScanStats {
    pub(super) fn new() -> Self {
        ScanStats {
            messages: vec![0; MESSAGES.len()],
            heap: 0,
            max_depth: 0,
            plain_nodes: Vec::new(),
        }
    }

    pub(super) fn merged(mut self, other: ScanStats) -> ScanStats {
        for (a, b) in self.messages.iter_mut().zip(other.messages) {
            *a += b;
        }
        self.heap = self.heap.saturating_add(other.heap);
        self.max_depth = self.max_depth.max(other.max_depth);
        self.plain_nodes.extend(other.plain_nodes);
        self
    }
}

/// Walks `buf` as a message of type `root` (an index into [`MESSAGES`]).
///
/// Does not validate UTF-8 (prost does while decoding); on any fault, the
/// buffer is re-walked by [`diagnose`] to report the field path.
pub fn scan(buf: &[u8], root: usize, max_depth: usize) -> Result<ScanStats, DecodeError> {
    scan_deferring(buf, root, max_depth, None, None).map(|(stats, _)| stats)
}

/// What a model's scan leaves for the decoder: where the elements of the
/// main graph's long lists lie (the index decode on touch reads), and where
/// the graph's other fields start.
#[derive(Debug, Default)]
pub struct Deferred {
    pub lists: Lists,
    /// Offsets of the keys of the main graph's other known fields (name,
    /// inputs, outputs, ...), in order.
    pub graph_fields: Vec<usize>,
    /// A bit per main-graph node (bit `i % 64` of word `i / 64`), set when
    /// the node shortcut took the node: its fields are names, texts and
    /// attributes without message fields (no tensor, no graph, no
    /// metadata_props or device_configurations, nothing unknown, no framing
    /// fault). A clear bit says nothing. Readers skip looking for what a
    /// plain node cannot hold.
    pub plain_nodes: Vec<u64>,
}

/// The bit set of [`Deferred::plain_nodes`] for a list of `len` nodes, from
/// the ranges the scan's runs took (a range past the end is left out).
fn plain_bits(len: usize, ranges: &[std::ops::Range<usize>]) -> Vec<u64> {
    let mut bits = vec![0u64; len.div_ceil(64)];
    for r in ranges.iter().filter(|r| r.end <= len) {
        for (word, mask) in range_masks(r.clone()) {
            if let Some(w) = bits.get_mut(word) {
                *w |= mask;
            }
        }
    }
    bits
}

/// [`scan`] for a model, releasing the pages of a mapped buffer behind the
/// walk and refusing a projection over `budget`; also returns what the
/// walk deferred.
pub fn scan_model(
    buf: &[u8],
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), DecodeError> {
    scan_deferring(buf, ids::MODEL_PROTO, max_depth, pages, budget)
}

pub(crate) fn scan_deferring(
    buf: &[u8],
    root: usize,
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), DecodeError> {
    match fast_scan::<false>(buf, root, max_depth, pages, budget) {
        Ok((stats, deferred)) => match budget {
            Some(budget) if stats.heap > budget => Err(DecodeError {
                offset: 0,
                path: String::new(),
                root: MESSAGES[root].name,
                kind: DecodeErrorKind::MemoryBudget {
                    projected: stats.heap,
                    budget,
                },
            }),
            _ => Ok((stats, deferred)),
        },
        Err(Some(budget_error)) => Err(budget_error),
        Err(None) => Err(
            diagnose(buf, root, max_depth).unwrap_or_else(|| DecodeError {
                offset: 0,
                path: String::new(),
                root: MESSAGES[root].name,
                kind: DecodeErrorKind::Internal {
                    detail: "fast and diagnostic scans disagree".to_string(),
                },
            }),
        ),
    }
}

/// Elements of a model's main graph lists are at this depth.
pub(super) const LIST_DEPTH: usize = 2;

/// Elements scanned by one task, at least.
const MIN_RUN: usize = 512;

/// [`scan`] by the generic steps alone: every field walked one at a time
/// (no short loop for list elements or plain nodes, no remembered
/// children). The reference the shortcuts are tested against: the same
/// verdict, the same counts.
#[doc(hidden)]
pub fn scan_reference(buf: &[u8], root: usize, max_depth: usize) -> Option<ScanStats> {
    fast_scan::<true>(buf, root, max_depth, None, None)
        .ok()
        .map(|(stats, _)| stats)
}

/// The fast scan; `None` on any fault. For a model, the elements of the
/// main graph's lists (the bulk of big graphs) are deferred by the walk and
/// scanned in parallel, each as a root of its own, a release window at a
/// time: on the thread pool while the walk goes on when the caller is not
/// one of its threads, else before the walk goes on. `PLAIN` takes the
/// generic steps only (the walk's diagnose mode: [`scan_reference`]).
fn fast_scan<const PLAIN: bool>(
    buf: &[u8],
    root: usize,
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), Option<DecodeError>> {
    // A memory-budget fault is final (no need to diagnose); others are located by `diagnose`.
    let fault = |(offset, kind, _, _): DiagFault| match kind {
        DecodeErrorKind::MemoryBudget { .. } => Some(DecodeError {
            offset: offset as u64,
            path: String::new(),
            root: MESSAGES[root].name,
            kind,
        }),
        _ => None,
    };
    let mut stats = ScanStats::new();
    let mut deferred = Deferred::default();
    let defer = root == ids::MODEL_PROTO && max_depth >= LIST_DEPTH;
    let mut flusher = Flusher::new(buf, max_depth.saturating_sub(LIST_DEPTH), pages);
    // Waiting for the pool from one of its own threads could wait for
    // work queued behind the wait: the caller scans then. A model of a
    // window or two has little walk to overlap: its windows cost more as
    // tasks (measured on 1 MiB models: +5-13 us a load).
    let beside = !PLAIN
        && defer
        && buf.len() > 2 * RELEASE_WINDOW
        && rayon::current_thread_index().is_none()
        && rayon::current_num_threads() > 1;
    let mut walk_with = |flush: &mut dyn FnMut(&Lists, Flush) -> bool| {
        walk::<PLAIN>(
            buf,
            (root, Root::Plain),
            max_depth,
            &mut Vec::new(),
            pages,
            defer.then_some(Deferring {
                deferred: &mut deferred,
                flush,
            }),
            budget,
            &mut stats,
            &mut Stack::default(),
        )
    };
    if beside {
        rayon::in_place_scope(|scope| {
            walk_with(&mut |lists, upto| flusher.flush_beside(scope, lists, upto))
        })
    } else {
        walk_with(&mut |lists, upto| flusher.flush_now::<PLAIN>(lists, upto))
    }
    .map_err(fault)?;
    let mut stats = stats.merged(flusher.inner);
    let ranges = std::mem::take(&mut stats.plain_nodes);
    if !PLAIN {
        deferred.plain_nodes = plain_bits(deferred.lists[List::Node as usize].len(), &ranges);
    }
    Ok((stats, deferred))
}

/// Scans a model walk's deferred list elements as the walk hands them over
/// ([`Deferring`]) and releases the pages behind them once scanned.
struct Flusher<'b> {
    buf: &'b [u8],
    /// The depth limit below an element.
    depth: usize,
    pages: Option<&'b PageReleaser>,
    /// What the elements scanned so far add.
    inner: ScanStats,
    /// Elements of each list handed to a scan.
    done: [usize; 4],
    /// Pages before this offset are released.
    released: usize,
    /// Windows being scanned on the pool, oldest first.
    pending: std::collections::VecDeque<Window>,
    /// The pool's tasks report here: their window and what they found.
    replies: (Sender<Reply>, Receiver<Reply>),
    /// Windows handed to the pool so far.
    windows: usize,
    /// Whether a task found an unsound element.
    failed: bool,
}

/// Windows scanned on the pool: how many of its tasks have not reported,
/// and the offset the walk had passed (released once they have).
struct Window {
    id: usize,
    left: usize,
    upto: usize,
}

/// A task's report: its window, and what it found (`None`: unsound).
type Reply = (usize, Option<ScanStats>);

/// Sends a task's report when dropped, found or not (a task that
/// unwinds still reports, so the walk's wait ends).
struct Report {
    to: Sender<Reply>,
    window: usize,
    found: Option<ScanStats>,
}

impl Drop for Report {
    fn drop(&mut self) {
        // The receiver outlives every task (the scope ends first).
        let _ = self.to.send((self.window, self.found.take()));
    }
}

impl<'b> Flusher<'b> {
    fn new(buf: &'b [u8], depth: usize, pages: Option<&'b PageReleaser>) -> Self {
        Flusher {
            buf,
            depth,
            pages,
            inner: ScanStats::new(),
            done: [0; 4],
            released: 0,
            pending: std::collections::VecDeque::new(),
            replies: std::sync::mpsc::channel(),
            windows: 0,
            failed: false,
        }
    }

    fn release(&mut self, to: usize) {
        if let Some(pages) = self.pages {
            pages.release(self.released, to);
        }
        self.released = self.released.max(to);
    }

    fn found(&mut self, found: Option<ScanStats>) {
        match found {
            Some(found) => {
                self.inner = std::mem::replace(&mut self.inner, ScanStats::new()).merged(found)
            }
            None => self.failed = true,
        }
    }

    /// Scans the new elements on the calling thread (in parallel runs when
    /// there are many), then releases the pages behind; a whole release
    /// window at a time (the walk calls every quarter window).
    fn flush_now<const PLAIN: bool>(&mut self, lists: &Lists, upto: Flush) -> bool {
        if let Flush::Window(at) = upto {
            if at.saturating_sub(self.released) < RELEASE_WINDOW {
                return true;
            }
        }
        let sound = self.scan_now::<PLAIN>(lists);
        if sound {
            self.release(upto.passed(self.buf.len()));
        }
        sound
    }

    /// Scans the new elements on the calling thread (in parallel runs when
    /// there are many); false if one is unsound.
    fn scan_now<const PLAIN: bool>(&mut self, lists: &Lists) -> bool {
        let found = scan_deferred::<PLAIN>(self.buf, lists, &self.done, self.depth);
        let sound = found.is_some();
        self.found(found);
        for (done, list) in self.done.iter_mut().zip(lists) {
            *done = list.len();
        }
        sound
    }

    /// Hands the new elements to the pool (a copy of their offsets: the
    /// walk goes on pushing), then waits for the window before (the walk
    /// has read this one meanwhile) and releases the pages behind it; at
    /// the end, waits for every window.
    fn flush_beside<'s>(&mut self, scope: &rayon::Scope<'s>, lists: &Lists, upto: Flush) -> bool
    where
        'b: 's,
    {
        let id = self.windows;
        self.windows += 1;
        let threads = rayon::current_num_threads();
        let mut left = 0;
        if pending(lists, &self.done) < PARALLEL_PENDING || upto == Flush::End {
            // A few elements (a small model; a window of big tensors), or
            // the last window (the walk has nothing left to overlap):
            // scanned now, in parallel runs when many (as a small model's
            // one window always was).
            self.scan_now::<false>(lists);
        }
        for (list, (spans, done)) in List::ALL.into_iter().zip(lists.iter().zip(&mut self.done)) {
            let n = spans.len();
            if n <= *done {
                continue;
            }
            let window = std::sync::Arc::new(spans.tail(*done));
            // The window's first element's index in its list.
            let base = *done;
            *done = n;
            let len = window.len();
            let step = len.div_ceil(threads * 2).max(MIN_RUN);
            for start in (0..len).step_by(step) {
                // The window's pages are released once all its runs have
                // reported (see scan_deferred).
                let (buf, depth) = (self.buf, self.depth);
                let window = std::sync::Arc::clone(&window);
                let report = Report {
                    to: self.replies.0.clone(),
                    window: id,
                    found: None,
                };
                scope.spawn(move |_| {
                    // The whole report moves in (not just the field set).
                    let mut report = report;
                    let range = start..(start + step).min(len);
                    report.found = scan_run::<false>(buf, &window, base, list, range, depth);
                });
                left += 1;
            }
        }
        self.pending.push_back(Window {
            id,
            left,
            upto: upto.passed(self.buf.len()),
        });
        let keep = if upto == Flush::End { 0 } else { 1 };
        while self.pending.len() > keep {
            if !self.wait_oldest() {
                return false;
            }
        }
        !self.failed
    }

    /// Waits for the oldest window's tasks, then releases the pages behind
    /// it; false if a report went missing (a task that did not run).
    fn wait_oldest(&mut self) -> bool {
        while self.pending.front().is_some_and(|w| w.left > 0) {
            let Ok((id, found)) = self.replies.1.recv() else {
                return false;
            };
            self.found(found);
            if let Some(w) = self.pending.iter_mut().find(|w| w.id == id) {
                w.left = w.left.saturating_sub(1);
            }
        }
        if let Some(w) = self.pending.pop_front() {
            if !self.failed {
                self.release(w.upto);
            }
        }
        true
    }
}

/// Pending elements below which they are scanned on the calling thread.
const PARALLEL_PENDING: usize = 2048;

/// Elements of `lists` past `done` (each list's count already scanned).
fn pending(lists: &Lists, done: &[usize; 4]) -> usize {
    lists
        .iter()
        .zip(done)
        .map(|(list, &done)| list.len().saturating_sub(done))
        .sum()
}

/// Scans the elements of `lists` past `done` (each list's count already
/// scanned), each as a root under the depth limit `depth`; in parallel runs
/// when there are many. Their own count is already in the model walk's.
/// Releases no pages: the caller releases the window once, after (each
/// release interrupts every CPU the process ran on to flush its TLB).
fn scan_deferred<const PLAIN: bool>(
    buf: &[u8],
    lists: &Lists,
    done: &[usize; 4],
    depth: usize,
) -> Option<ScanStats> {
    use rayon::prelude::*;
    let threads = if pending(lists, done) < PARALLEL_PENDING {
        1
    } else {
        rayon::current_num_threads()
    };
    let mut runs = Vec::new();
    for (list, &from) in List::ALL.into_iter().zip(done) {
        let n = lists[list as usize].len();
        let step = n.saturating_sub(from).div_ceil(threads * 4).max(MIN_RUN);
        runs.extend(
            (from..n)
                .step_by(step)
                .map(|start| (list, start..(start + step).min(n))),
        );
    }
    let run = |(list, range): (List, std::ops::Range<usize>)| {
        scan_run::<PLAIN>(buf, &lists[list as usize], 0, list, range, depth)
    };
    if runs.len() <= 1 {
        return runs
            .into_iter()
            .try_fold(ScanStats::new(), |acc, r| Some(acc.merged(run(r)?)));
    }
    runs.into_par_iter()
        .with_max_len(1)
        .map(run)
        .try_reduce(ScanStats::new, |a, b| Some(a.merged(b)))
}

/// Scans elements `range` of `list` (whose offsets are `spans`, the first
/// of them element `base` of the list), each as a root; their own count is
/// already in the model walk's. Releases no pages (see [`scan_deferred`]).
fn scan_run<const PLAIN: bool>(
    buf: &[u8],
    spans: &Spans,
    base: usize,
    list: List,
    range: std::ops::Range<usize>,
    depth: usize,
) -> Option<ScanStats> {
    let id = list.field_and_message().1;
    let kind = if list == List::Node {
        Root::MainNode
    } else {
        Root::Plain
    };
    let mut acc = ScanStats::new();
    let mut stack = if PLAIN {
        Stack::default()
    } else {
        Stack::remembering()
    };
    for i in range.clone() {
        let (start, len) = spans.get(i, buf)?;
        let element = buf.get(start..start + len)?;
        if !PLAIN && list == List::Node {
            // Attributes are children of the node: allowed under `depth` ≥ 1.
            let taken = if depth >= 1 {
                scan_main_node(element, &mut acc)
            } else {
                scan_plain_node(element, &mut acc)
            };
            if taken {
                let at = base + i;
                match acc.plain_nodes.last_mut() {
                    Some(r) if r.end == at => r.end += 1,
                    _ => acc.plain_nodes.push(at..at + 1),
                }
                continue;
            }
        }
        if !PLAIN && list == List::Initializer && scan_flat(id, element, &mut acc) {
            continue;
        }
        walk::<PLAIN>(
            element,
            (id, kind),
            depth,
            &mut Vec::new(),
            None,
            None,
            None,
            &mut acc,
            &mut stack,
        )
        .ok()?;
    }
    acc.messages[id] -= range.len() as u64;
    acc.max_depth += LIST_DEPTH;
    Some(acc)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::walk::{
        ATTRIBUTE_SLOTS, NODE_ATTRIBUTE_SLOT, NODE_SLOTS, TENSOR_SLOTS, TENSOR_VARINT_SLOTS,
    };
    use crate::proto::schema::ids;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn ld(field: u64, payload: &[u8], out: &mut Vec<u8>) {
        varint((field << 3) | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    /// The plain bits set exactly the nodes of the ranges given (whatever
    /// their order and where they cross words), none past the list.
    #[test]
    fn plain_bits_set_the_ranges_given() {
        let ranges = [70..200, 0..1, 5..64, 64..65, 250..260, 299..300, 300..301];
        let bits = plain_bits(300, &ranges);
        assert_eq!(bits.len(), 5);
        for i in 0..320 {
            let want = i < 300 && ranges.iter().any(|r| r.contains(&i));
            let got = bits.get(i / 64).is_some_and(|w| (w >> (i % 64)) & 1 == 1);
            assert_eq!(got, want, "bit {i}");
        }
        assert!(plain_bits(0, &[0..1, 2..3]).is_empty());
    }

    /// The plain-node shortcut counts exactly what the generic walk counts,
    /// and declines every node it does not fully understand.
    #[test]
    fn plain_node_scan_matches_walk() {
        let mut plain = Vec::new();
        for (field, text) in [
            (1, "x"),
            (1, ""),
            (2, "y"),
            (3, "n0"),
            (4, "Add"),
            (7, "ai.onnx"),
            (6, "doc \u{e9}"),
            (8, "o"),
            (1, "z"),
        ] {
            ld(field, text.as_bytes(), &mut plain);
        }
        let mut with_attr = plain.clone();
        ld(5, &[], &mut with_attr);
        let mut unknown = plain.clone();
        ld(99, b"?", &mut unknown);
        let mut varint_field = plain.clone();
        varint(3 << 3, &mut varint_field);
        varint(1, &mut varint_field);
        let mut truncated = plain.clone();
        truncated.extend_from_slice(&[(1 << 3) | 2, 5, b'a']);
        let cases: [(&[u8], bool); 6] = [
            (&[], true),
            (&plain, true),
            (&with_attr, false),
            (&unknown, false),
            (&varint_field, false),
            (&truncated, false),
        ];
        for (node, accepted) in cases {
            let mut fast = ScanStats::new();
            assert_eq!(scan_plain_node(node, &mut fast), accepted, "{node:?}");
            if !accepted {
                assert_eq!(fast.messages, ScanStats::new().messages);
                assert_eq!(fast.heap, 0);
                continue;
            }
            let walked = scan(node, ids::NODE_PROTO, DEFAULT_MAX_DEPTH).expect("plain node");
            assert_eq!(fast.messages, walked.messages);
            assert_eq!(fast.heap, walked.heap);
            assert_eq!(fast.max_depth, walked.max_depth);
        }
        // Three inputs spill the SmallVec (4 slots), a doc string allocates
        // the extras: the projection sees both.
        let mut fast = ScanStats::new();
        assert!(scan_plain_node(&plain, &mut fast));
        let extras = std::mem::size_of::<crate::proto::NodeExtras>() as u64;
        assert_eq!(fast.heap, 4 * 24 + extras);
    }

    /// A deterministic stream of pseudo-random numbers (xorshift64).
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The flat-message shortcut counts exactly what the generic walk counts
    /// for every tensor it accepts, declines every tensor the walk refuses,
    /// and leaves the counts untouched when it declines.
    #[test]
    fn flat_scan_matches_walk() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        // TensorProto's fields with the wire type each is written with
        // (packed lists as LEN), two numbers it does not have, and typed
        // lists written unpacked.
        let fields: [(u64, u64); 21] = [
            (1, 2),
            (1, 0),
            (2, 0),
            (3, 2),
            (4, 2),
            (4, 5),
            (5, 2),
            (6, 2),
            (7, 2),
            (8, 2),
            (9, 2),
            (10, 2),
            (11, 2),
            (12, 2),
            (14, 0),
            (15, 2),
            (99, 0),
            (10, 1),
            (5, 0),
            (7, 0),
            (11, 0),
        ];
        // What the keyed tensor shortcut takes (the rest it leaves to the
        // generic count).
        let keyed_pairs = [
            (1, 0),
            (1, 2),
            (2, 0),
            (4, 2),
            (4, 5),
            (5, 0),
            (5, 2),
            (6, 2),
            (7, 0),
            (7, 2),
            (8, 2),
            (9, 2),
            (10, 1),
            (10, 2),
            (11, 0),
            (11, 2),
            (12, 2),
            (14, 0),
        ];
        let (mut accepted, mut refused, mut keyed_taken) = (0, 0, 0);
        for _ in 0..20_000 {
            let mut msg = Vec::new();
            let mut keyed = true;
            for _ in 0..next() % 7 {
                let (number, good) = fields[(next() % 21) as usize];
                let wire = if next() % 5 == 0 {
                    [0, 1, 2, 5][(next() % 4) as usize]
                } else {
                    good
                };
                keyed &= keyed_pairs.contains(&(number, wire));
                varint((number << 3) | wire, &mut msg);
                match wire {
                    0 => varint(next() >> (next() % 64), &mut msg),
                    1 => msg.extend_from_slice(&next().to_le_bytes()),
                    5 => msg.extend_from_slice(&next().to_le_bytes()[..4]),
                    _ => {
                        let len = (next() % 13) as usize;
                        let body: Vec<u8> = (0..len)
                            .map(|_| match next() % 4 {
                                0 => 0x80 | (next() as u8),
                                _ => b'a' + (next() % 26) as u8,
                            })
                            .collect();
                        varint(len as u64, &mut msg);
                        msg.extend_from_slice(&body);
                    }
                }
            }
            if next() % 10 == 0 && !msg.is_empty() {
                msg.truncate(msg.len() - 1 - (next() as usize % msg.len()));
            }
            // The keyed shortcut: what the generic count finds, for every
            // tensor of the fields it takes (declining none of them).
            if keyed {
                let generic = flat_heap(ids::TENSOR_PROTO, &msg);
                assert_eq!(tensor_heap(&msg), generic, "{msg:?}");
                keyed_taken += usize::from(generic.is_some());
            } else if let Some(heap) = tensor_heap(&msg) {
                assert_eq!(Some(heap), flat_heap(ids::TENSOR_PROTO, &msg), "{msg:?}");
            }
            let mut fast = ScanStats::new();
            let took = scan_flat(ids::TENSOR_PROTO, &msg, &mut fast);
            match scan(&msg, ids::TENSOR_PROTO, DEFAULT_MAX_DEPTH) {
                Ok(walked) if took => {
                    assert_eq!(fast.messages, walked.messages, "{msg:?}");
                    assert_eq!(fast.heap, walked.heap, "{msg:?}");
                    assert_eq!(fast.max_depth, walked.max_depth, "{msg:?}");
                    accepted += 1;
                }
                Ok(_) => {}
                Err(_) => {
                    assert!(!took, "accepted what the walk refuses: {msg:?}");
                    refused += 1;
                }
            }
            if !took {
                assert_eq!(fast.messages, ScanStats::new().messages);
                assert_eq!(fast.heap, 0);
            }
        }
        assert!(
            accepted > 2_000 && refused > 2_000 && keyed_taken > 1_000,
            "{accepted} {refused} {keyed_taken}"
        );
    }

    /// Main-graph nodes with attributes: the shortcut counts what the walk
    /// of a main-graph node counts (its attribute list reserved exactly),
    /// declines an attribute holding a message, and a node past the depth
    /// limit is left to the walk.
    #[test]
    fn main_node_scan_matches_walk() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        // AttributeProto's fields and wire types (t, g, tp, sparse_tensor
        // are messages), and one it does not have.
        let attr_fields: [(u64, u64); 16] = [
            (1, 2),
            (2, 5),
            (3, 0),
            (4, 2),
            (5, 2),
            (6, 2),
            (7, 2),
            (7, 5),
            (8, 2),
            (8, 0),
            (9, 2),
            (13, 2),
            (14, 2),
            (20, 0),
            (21, 2),
            (30, 0),
        ];
        let walked = |node: &[u8], depth: usize| {
            let mut stats = ScanStats::new();
            walk::<false>(
                node,
                (ids::NODE_PROTO, Root::MainNode),
                depth,
                &mut Vec::new(),
                None,
                None,
                None,
                &mut stats,
                &mut Stack::default(),
            )
            .ok()
            .map(|()| stats)
        };
        // Texts short and long (a two-byte length prefix), on the heap or
        // inline, and one that is not UTF-8.
        let long = "z".repeat(200);
        let texts: [&[u8]; 7] = [
            b"x",
            b"y1",
            b"Transpose",
            b"",
            "a long name of a tensor \u{e9}".as_bytes(),
            long.as_bytes(),
            b"t\xe9t",
        ];
        let (mut with_attributes, mut declined, mut keyed_attributes) = (0, 0, 0);
        for _ in 0..20_000 {
            let mut node = Vec::new();
            for _ in 0..next() % 9 {
                match next() % 16 {
                    // A string field holding a varint, an unknown field.
                    0 => {
                        varint([3, 99][(next() % 2) as usize] << 3, &mut node);
                        varint(next() % 300, &mut node);
                        continue;
                    }
                    1..=8 => {
                        ld(
                            [1, 1, 2, 3, 4, 6, 7, 8][(next() % 8) as usize],
                            texts[(next() % 7) as usize],
                            &mut node,
                        );
                        continue;
                    }
                    _ => {}
                }
                let mut attr = Vec::new();
                let mut keyed = true;
                for _ in 0..next() % 4 {
                    let (number, wire) = attr_fields[(next() % 16) as usize];
                    keyed &= !matches!(number, 5 | 6 | 14 | 30);
                    varint((number << 3) | wire, &mut attr);
                    match wire {
                        0 => varint(next() % 300, &mut attr),
                        5 => attr.extend_from_slice(&next().to_le_bytes()[..4]),
                        _ => {
                            let len = [0, 3, 4, 8][(next() % 4) as usize];
                            varint(len as u64, &mut attr);
                            attr.extend((0..len).map(|_| b'a' + (next() % 26) as u8));
                        }
                    }
                }
                // The keyed attribute shortcut finds what the generic count
                // finds, declining none of the fields it takes.
                let generic = flat_heap(ids::ATTRIBUTE_PROTO, &attr);
                match attribute_heap(&attr) {
                    None => assert!(!keyed || generic.is_none(), "{attr:?}"),
                    found => assert_eq!(found, generic, "{attr:?}"),
                }
                keyed_attributes += usize::from(keyed && generic.is_some());
                ld(5, &attr, &mut node);
            }
            if next() % 12 == 0 && !node.is_empty() {
                node.truncate(node.len() - 1);
            }
            for depth in [DEFAULT_MAX_DEPTH, 1] {
                let mut fast = ScanStats::new();
                let took = scan_main_node(&node, &mut fast);
                match walked(&node, depth) {
                    Some(reference) if took => {
                        assert_eq!(fast.messages, reference.messages, "{node:?}");
                        assert_eq!(fast.heap, reference.heap, "{node:?}");
                        assert_eq!(fast.max_depth, reference.max_depth, "{node:?}");
                        with_attributes += usize::from(fast.messages[ids::ATTRIBUTE_PROTO] > 0);
                    }
                    Some(_) => declined += 1,
                    None => assert!(!took, "accepted what the walk refuses: {node:?}"),
                }
                if !took {
                    assert_eq!(fast.messages, ScanStats::new().messages);
                    assert_eq!(fast.heap, 0);
                }
            }
        }
        assert!(
            with_attributes > 2_000 && declined > 2_000 && keyed_attributes > 2_000,
            "{with_attributes} {declined} {keyed_attributes}"
        );
        // Under depth 0 a node's attribute is too deep: the walk refuses it
        // (scan_run takes the plain shortcut there, which declines it).
        let mut node = Vec::new();
        ld(5, &[(3 << 3), 1], &mut node);
        assert!(walked(&node, 0).is_none());
        assert!(!scan_plain_node(&node, &mut ScanStats::new()));
    }

    /// The tensor shortcut's own map of fields to containers is the schema's.
    #[test]
    fn tensor_slots_match_the_schema() {
        use crate::proto::schema::{fields::tensor_proto as F, Kind, Text};
        let schema = &MESSAGES[ids::TENSOR_PROTO];
        assert_eq!(schema.slots.len(), TENSOR_SLOTS);
        let slot = |number: u32| {
            let (_, field) = schema.field(u64::from(number)).expect("a tensor field");
            field.slots
        };
        for number in [F::DIMS, F::INT32_DATA, F::INT64_DATA, F::UINT64_DATA] {
            let (_, field) = schema.field(u64::from(number)).expect("a varint list");
            assert!(field.repeated && field.kind.is_scalar_numeric());
            assert_eq!(slot(number), &[TENSOR_VARINT_SLOTS[number as usize] as u8]);
        }
        assert_eq!(slot(F::FLOAT_DATA), &[1]);
        assert_eq!(slot(F::STRING_DATA), &[3]);
        assert_eq!(slot(F::DOUBLE_DATA), &[6]);
        for number in [
            F::DATA_TYPE,
            F::RAW_DATA,
            F::NAME,
            F::DOC_STRING,
            F::DATA_LOCATION,
        ] {
            assert_eq!(slot(number), &[] as &[u8]);
        }
        for number in [F::NAME, F::DOC_STRING] {
            let (_, field) = schema.field(u64::from(number)).expect("a text field");
            assert_eq!((field.kind, field.text), (Kind::String, Text::String));
        }
    }

    /// The attribute shortcut's own map of fields to containers is the
    /// schema's.
    #[test]
    fn attribute_slots_match_the_schema() {
        use crate::proto::schema::{fields::attribute_proto as F, Kind, Text};
        let schema = &MESSAGES[ids::ATTRIBUTE_PROTO];
        assert_eq!(schema.slots.len(), ATTRIBUTE_SLOTS);
        let expected: [(u32, &[u8]); 10] = [
            (F::NAME, &[]),
            (F::F, &[]),
            (F::I, &[]),
            (F::S, &[]),
            (F::FLOATS, &[5]),
            (F::INTS, &[6]),
            (F::STRINGS, &[7, 0]),
            (F::DOC_STRING, &[0]),
            (F::TYPE, &[]),
            (F::REF_ATTR_NAME, &[0]),
        ];
        for (number, slots) in expected {
            let (_, field) = schema.field(u64::from(number)).expect("an attribute field");
            assert_eq!(field.slots, slots, "{}", field.name);
            if field.kind == Kind::String {
                assert_eq!(field.text, Text::Compact, "{}", field.name);
            }
        }
    }

    /// The node shortcut's own map of fields to containers is the schema's.
    #[test]
    fn node_slots_match_the_schema() {
        use crate::proto::schema::{fields::node_proto as F, Text};
        let schema = &MESSAGES[ids::NODE_PROTO];
        assert_eq!(schema.slots.len(), NODE_SLOTS);
        let expected: [(u32, &[u8]); 8] = [
            (F::INPUT, &[0]),
            (F::OUTPUT, &[1]),
            (F::NAME, &[]),
            (F::OP_TYPE, &[]),
            (F::DOMAIN, &[]),
            (F::DOC_STRING, &[2]),
            (F::OVERLOAD, &[2]),
            (F::ATTRIBUTE, &[NODE_ATTRIBUTE_SLOT as u8]),
        ];
        for (number, slots) in expected {
            let (_, field) = schema.field(u64::from(number)).expect("a node field");
            assert_eq!(field.slots, slots, "{}", field.name);
            if number != F::ATTRIBUTE {
                assert_eq!(field.text, Text::Compact, "{}", field.name);
                assert!(crate::proto::is_string_field(u64::from(number)));
            }
        }
    }

    #[test]
    fn empty_is_valid() {
        let stats = scan(&[], ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("empty model");
        assert_eq!(stats.messages[ids::MODEL_PROTO], 1);
    }

    #[test]
    fn reports_path_and_offset() {
        // graph { node { } node { attribute { t { raw_data: <len 4096, 2 bytes> } } } }
        let mut tensor = Vec::new();
        varint((9 << 3) | 2, &mut tensor);
        varint(4096, &mut tensor);
        tensor.extend_from_slice(&[1, 2]);
        let mut attr = Vec::new();
        ld(5, &tensor, &mut attr);
        let mut node = Vec::new();
        ld(5, &attr, &mut node);
        let mut graph = Vec::new();
        ld(1, &[], &mut graph);
        ld(1, &node, &mut graph);
        let mut model = Vec::new();
        ld(7, &graph, &mut model);
        let err =
            scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("truncated raw_data");
        assert_eq!(err.path, "graph.node[1].attribute[0].t.raw_data");
        assert!(
            matches!(
                err.kind,
                DecodeErrorKind::LengthPastEnd { length: 4096, .. }
            ),
            "{err}"
        );
        assert_eq!(err.offset as usize, model.len() - 2 - 2);
    }

    fn nested(levels: usize) -> Vec<u8> {
        // Under a ValueInfoProto root: type (TypeProto) -> sequence_type
        // (Sequence) -> elem_type (TypeProto) -> ... `levels` messages deep.
        let mut inner: Vec<u8> = Vec::new();
        for i in (0..levels).rev() {
            let mut out = Vec::new();
            let field = if i == 0 {
                2
            } else if i % 2 == 1 {
                4
            } else {
                1
            };
            ld(field, &inner, &mut out);
            inner = out;
        }
        inner
    }

    #[test]
    fn depth_limit_is_exact() {
        assert!(scan(&nested(100), ids::VALUE_INFO_PROTO, 100).is_ok());
        let err = scan(&nested(101), ids::VALUE_INFO_PROTO, 100).expect_err("too deep");
        assert_eq!(err.kind, DecodeErrorKind::TooDeep { limit: 100 });
        assert!(
            err.path.starts_with("type.sequence_type.elem_type."),
            "{}",
            err.path
        );
    }

    #[test]
    fn unknown_fields_and_groups_are_skipped() {
        let mut model = Vec::new();
        varint(99 << 3, &mut model);
        varint(5, &mut model);
        varint((98 << 3) | 3, &mut model);
        varint((1 << 3) | 5, &mut model);
        model.extend_from_slice(&[0; 4]);
        varint((98 << 3) | 4, &mut model);
        ld(97, b"xyz", &mut model);
        assert!(scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).is_ok());
    }

    #[test]
    fn wrong_wire_type_and_overlong_varint() {
        let mut model = Vec::new();
        varint(7 << 3, &mut model); // graph as a varint
        varint(1, &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("wire type");
        assert_eq!(err.path, "graph");
        assert!(matches!(
            err.kind,
            DecodeErrorKind::WrongWireType { wire_type: 0, .. }
        ));

        let mut model = vec![(1 << 3) as u8];
        model.extend_from_slice(&[0xff; 11]);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("varint");
        assert_eq!(err.kind, DecodeErrorKind::VarintOverflow);
        assert_eq!(err.path, "ir_version");
        assert_eq!(err.offset, 1);
    }

    #[test]
    fn invalid_utf8_is_found_by_the_scan() {
        let mut model = Vec::new();
        ld(2, &[b'a', 0xff], &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("utf8 fault");
        assert_eq!(err.kind, DecodeErrorKind::InvalidUtf8 { valid_up_to: 1 });
        assert_eq!(err.path, "producer_name");
        assert_eq!(err.offset, 2);
        let err = diagnose(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("utf8 fault");
        assert_eq!(err.kind, DecodeErrorKind::InvalidUtf8 { valid_up_to: 1 });
        assert_eq!(err.path, "producer_name");
        assert_eq!(err.offset, 2);
    }
}
