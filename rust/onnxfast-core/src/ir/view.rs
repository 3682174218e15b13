//! A graph whose four long lists may be decode-on-touch lists: the main
//! graph of a lazily loaded model, seen without copying it into a
//! `GraphProto`. Its other fields are the graph's own (through `Deref`).

use std::borrow::Cow;
use std::ops::Deref;

use crate::decode::lazy::{GraphLists, LazyList, ListElement, TensorHeader};
use crate::error::DecodeError;
use crate::proto::{
    AttributeProto, GraphProto, NodeHead, NodeProto, SparseTensorProto, TensorProto, TypeProto,
    ValueInfoProto,
};

/// The elements of one list: a slice, or a decode-on-touch list whose
/// elements are decoded (and kept) when first read (see [`GraphView::kept`]).
pub enum Seq<'a, T> {
    Slice(&'a [T]),
    Kept(&'a LazyList<T>),
}

impl<T> Clone for Seq<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Seq<'_, T> {}

impl<'a, T: ListElement> Seq<'a, T> {
    pub fn len(&self) -> usize {
        match self {
            Seq::Slice(s) => s.len(),
            Seq::Kept(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (of a decode-on-touch list: decoded now if it was not;
    /// `None` past the end or if it cannot be decoded).
    pub fn get(&self, i: usize) -> Option<&'a T> {
        match *self {
            Seq::Slice(s) => s.get(i),
            Seq::Kept(l) => l.get(i).ok(),
        }
    }

    /// A failure met decoding an element of a decode-on-touch list on read
    /// (readers that skip an undecodable element report it after).
    pub fn failure(&self) -> Option<DecodeError> {
        match *self {
            Seq::Slice(_) => None,
            Seq::Kept(l) => crate::decode::lazy::decode_failure(l),
        }
    }

    /// The elements in order (of a decode-on-touch list: up to the first
    /// that cannot be decoded; [`GraphView::kept`]'s caller finds out).
    pub fn iter(&self) -> impl Iterator<Item = &'a T> + 'a {
        let (slice, kept) = match *self {
            Seq::Slice(s) => (Some(s), None),
            Seq::Kept(l) => (None, Some(l)),
        };
        slice
            .into_iter()
            .flatten()
            .chain(kept.into_iter().flat_map(|l| l.iter_decoded()))
    }
}

impl<'a, T: ListElement> Seq<'a, T> {
    /// Each element as `of(index, element)`; of a decode-on-touch list, as
    /// `read(list, index)` gives it from the element's bytes (nothing is
    /// decoded or kept), or where that gives nothing, decoded (and kept);
    /// an element that cannot be decoded is skipped
    /// ([`GraphView::read_nodes`] reports it).
    fn read_each<R: 'a, F: Fn(&'a LazyList<T>, usize) -> Option<R> + 'a>(
        self,
        of: fn(usize, &'a T) -> R,
        read: F,
    ) -> ReadEach<'a, T, R, F> {
        ReadEach {
            seq: self,
            next: 0,
            of,
            read,
        }
    }
}

/// [`Seq::read_each`]'s iterator, one step an element (the long lists of
/// large graphs are read in loops that wait on nothing else: a chain of
/// adapters, and the move of each element through every layer, showed).
pub(crate) struct ReadEach<'a, T, R, F> {
    seq: Seq<'a, T>,
    next: usize,
    of: fn(usize, &'a T) -> R,
    read: F,
}

impl<'a, T: ListElement, R, F: Fn(&'a LazyList<T>, usize) -> Option<R>> Iterator
    for ReadEach<'a, T, R, F>
{
    type Item = R;

    fn next(&mut self) -> Option<R> {
        loop {
            let i = self.next;
            let found = match self.seq {
                Seq::Slice(s) => {
                    let t = s.get(i)?;
                    Some((self.of)(i, t))
                }
                Seq::Kept(l) => {
                    if i >= l.len() {
                        return None;
                    }
                    (self.read)(l, i).or_else(|| l.get(i).ok().map(|t| (self.of)(i, t)))
                }
            };
            self.next = i + 1;
            if found.is_some() {
                return found;
            }
        }
    }
}

impl<'a, T: ListElement> IntoIterator for &Seq<'a, T> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// A graph and its four long lists.
#[derive(Clone, Copy)]
pub struct GraphView<'a> {
    pub graph: &'a GraphProto,
    pub node: Seq<'a, NodeProto>,
    pub initializer: Seq<'a, TensorProto>,
    pub value_info: Seq<'a, ValueInfoProto>,
    pub sparse_initializer: Seq<'a, SparseTensorProto>,
    /// Work for a thread with time to spare while the nodes are read (a
    /// [`HeadFeed`]'s producer while it waits), if any.
    pub idle: Option<&'a (dyn IdleWork + 'a)>,
}

/// Work done a step at a time by whichever thread has time to spare.
pub trait IdleWork: Sync {
    /// Does a step (tens of microseconds); `false` when none was left.
    fn step(&self) -> bool;
}

/// Nodes whose outputs a [`Gathering`] step gathers.
const GATHER_STEP: usize = 2048;

/// Every node output of a decode-on-touch list in order (what the
/// write-back reads after inference), gathered a step at a time as
/// [`IdleWork`] beside the reader of the nodes, the rest when finished.
pub struct Gathering<'a> {
    list: &'a LazyList<NodeProto>,
    state: std::sync::Mutex<Gathered<'a>>,
}

struct Gathered<'a> {
    next: usize,
    all: Vec<&'a str>,
    /// A node's outputs could not be read from its bytes: none given.
    failed: bool,
}

impl<'a> Gathering<'a> {
    pub fn new(list: &'a LazyList<NodeProto>) -> Self {
        Gathering {
            list,
            state: std::sync::Mutex::new(Gathered {
                next: 0,
                all: Vec::new(),
                failed: false,
            }),
        }
    }

    /// Gathers the outputs of up to `nodes` more nodes; `false` when none
    /// were left.
    fn gather(list: &'a LazyList<NodeProto>, g: &mut Gathered<'a>, nodes: usize) -> bool {
        if g.failed || g.next >= list.len() {
            return false;
        }
        if g.all.capacity() == 0 {
            g.all.reserve_exact(list.len());
        }
        let end = g.next.saturating_add(nodes).min(list.len());
        if !Self::gather_range(list, g.next..end, &mut g.all) {
            g.failed = true;
            return true;
        }
        g.next = end;
        true
    }

    /// Appends the outputs of nodes `range` to `all`; `false` when a node's
    /// outputs cannot be read from its bytes.
    fn gather_range(
        list: &'a LazyList<NodeProto>,
        range: std::ops::Range<usize>,
        all: &mut Vec<&'a str>,
    ) -> bool {
        use crate::proto::schema::fields::node_proto::OUTPUT;
        for i in range {
            match list.cached(i) {
                Some(n) => all.extend(n.output.iter().map(|o| o.as_str())),
                None => match list.strings(i, OUTPUT) {
                    Some(outputs) => all.extend(outputs),
                    None => return false,
                },
            }
        }
        true
    }

    /// Every node output in order (gathered now where the steps did not:
    /// in two halves on the thread pool when many are left, as happens
    /// when the producer had little idle time), `None` where the bytes
    /// alone cannot give a node's outputs.
    pub fn finish(self) -> Option<Vec<&'a str>> {
        let mut g = self.state.into_inner().ok()?;
        let (from, n) = (g.next, self.list.len());
        let left = n.saturating_sub(from);
        if !g.failed && left >= 4 * GATHER_STEP && rayon::current_num_threads() > 1 {
            let mid = from + left / 2;
            let list = self.list;
            let (head, tail) = rayon::join(
                || Self::gather(list, &mut g, mid - from),
                || {
                    let mut tail = Vec::with_capacity(n - mid);
                    Self::gather_range(list, mid..n, &mut tail).then_some(tail)
                },
            );
            // (`gather` had nodes left: it gathered them or failed.)
            debug_assert!(head);
            match tail {
                Some(tail) if !g.failed => g.all.extend(tail),
                _ => return None,
            }
            return Some(g.all);
        }
        while Self::gather(self.list, &mut g, usize::MAX) {}
        (!g.failed).then_some(g.all)
    }
}

impl IdleWork for Gathering<'_> {
    fn step(&self) -> bool {
        match self.state.lock() {
            Ok(mut g) => Self::gather(self.list, &mut g, GATHER_STEP),
            Err(_) => false,
        }
    }
}

impl<'a> GraphView<'a> {
    /// A decoded graph.
    pub fn whole(graph: &'a GraphProto) -> Self {
        GraphView {
            graph,
            node: Seq::Slice(&graph.node),
            initializer: Seq::Slice(&graph.initializer),
            value_info: Seq::Slice(&graph.value_info),
            sparse_initializer: Seq::Slice(&graph.sparse_initializer),
            idle: None,
        }
    }

    /// `graph` (a lazily loaded model's main graph, its lists empty) with
    /// `lists`: sparse initializers decoded now and kept by the lists;
    /// nodes read as heads by [`NodeHeads`] (from their bytes, or decoded
    /// as they are read or ahead of the reader by
    /// [`GraphView::read_nodes`]); value_info entries and initializers read
    /// from their bytes by [`GraphView::declarations`] and
    /// [`GraphView::initializers`] (an initializer decoded only when its
    /// value is read), or decoded when read as messages. Elements that
    /// cannot be decoded end [`Seq::iter`]: [`GraphView::read_nodes`]
    /// reports them after reading.
    pub fn kept(graph: &'a GraphProto, lists: &'a GraphLists) -> Result<Self, DecodeError> {
        lists.sparse_initializer.keep_all()?;
        Ok(GraphView {
            graph,
            node: Seq::Kept(&lists.node),
            initializer: Seq::Kept(&lists.initializer),
            value_info: Seq::Kept(&lists.value_info),
            sparse_initializer: Seq::Kept(&lists.sparse_initializer),
            idle: None,
        })
    }
}

impl<'a> GraphView<'a> {
    /// Runs `read` (which reads the nodes in order, as
    /// [`NodeHeads`] gives them) while the thread pool decodes
    /// ahead of it the chunks that hold a node a head cannot be read for,
    /// then reports a node that could not be decoded (the reader skipped
    /// it).
    pub fn read_nodes<R: Send>(&self, read: impl FnOnce() -> R + Send) -> Result<R, DecodeError> {
        let Seq::Kept(list) = self.node else {
            return Ok(read());
        };
        let next = std::sync::atomic::AtomicUsize::new(0);
        let read_alone = |k: usize| !list.chunk_to_keep_for_reader(k);
        let ((), r) = rayon::join(|| list.decode_ahead(&next, read_alone), read);
        if let Some(e) = crate::decode::lazy::decode_failure(list) {
            return Err(e);
        }
        if let Some(e) = self
            .value_info
            .failure()
            .or_else(|| self.initializer.failure())
        {
            return Err(e);
        }
        Ok(r)
    }

    /// [`GraphView::read_nodes`] of a view whose idle work is `gathering`
    /// (every node output in order, what the write-back reads next): a
    /// head feed's producer gathers them while it waits for the reader;
    /// the caller finishes the gathering after.
    pub fn read_nodes_gathering<'g, R: Send>(
        &self,
        gathering: &'g Gathering<'a>,
        read: impl FnOnce(GraphView<'g>) -> R + Send,
    ) -> Result<R, DecodeError>
    where
        'a: 'g,
    {
        let view: GraphView<'g> = GraphView {
            idle: Some(gathering),
            ..*self
        };
        self.read_nodes(move || read(view))
    }
}

/// Slots of [`NodeHeads`]' ring (more than any look-ahead it is given).
const RING: usize = 8;

/// A graph's node heads in order (of a decode-on-touch list: a node
/// already decoded read decoded; another read from its bytes, its
/// attributes decoded into a slot of the reader's, nothing kept; one
/// holding a tensor or a graph, which a reader may borrow for longer,
/// decoded and kept; one that cannot be decoded skipped,
/// [`GraphView::read_nodes`] reports it), each read into a slot of a
/// ring a few nodes ahead of the reader (who can start the work a later
/// node needs, e.g. prefetches), and lent, not moved: a head is ~200
/// bytes.
pub struct NodeHeads<'a> {
    node: Seq<'a, NodeProto>,
    ring: [NodeHead<'a>; RING],
    /// The attributes of a slot's node read from its bytes: the first
    /// `read` (none when the head's `attribute` holds them, kept; the
    /// elements keep their room for the next node).
    attributes: [Vec<AttributeProto>; RING],
    read: [usize; RING],
    /// Whether a slot's node was read.
    lent: [bool; RING],
    /// The next node to lend.
    at: usize,
    ahead: usize,
}

/// A node lent by [`NodeHeads::next`].
pub struct Lent<'h, 'a> {
    pub index: usize,
    pub head: &'h NodeHead<'a>,
    /// The node's attributes when read from its bytes for this reading
    /// only (`head.attribute` is then empty); empty otherwise.
    pub read: &'h [AttributeProto],
    /// The head of the node `ahead` places after it, if any.
    pub ahead: Option<&'h NodeHead<'a>>,
}

impl Lent<'_, '_> {
    /// The node's attributes, however they were read.
    pub fn attributes(&self) -> &[AttributeProto] {
        if self.read.is_empty() {
            self.head.attribute
        } else {
            self.read
        }
    }
}

impl<'a> NodeHeads<'a> {
    /// The heads of `node`, read `ahead` (< 8) nodes ahead of the reader.
    pub fn new(node: Seq<'a, NodeProto>, ahead: usize) -> Self {
        let mut heads = NodeHeads {
            node,
            ring: Default::default(),
            attributes: Default::default(),
            read: [0; RING],
            lent: [false; RING],
            at: 0,
            ahead: ahead.min(RING - 1),
        };
        for j in 0..heads.ahead.min(node.len()) {
            heads.fill(j);
        }
        heads
    }

    /// Reads node `j` into its slot (see [`read_head`]).
    // (Inlined into the reader's loop, as it was when it read heads only:
    // out of line, with the reader's loop too, the 200k-node chain's
    // inference took 4 ms longer.)
    #[inline(always)]
    fn fill(&mut self, j: usize) {
        let s = j % RING;
        self.lent[s] = read_head(
            self.node,
            j,
            &mut self.ring[s],
            &mut self.attributes[s],
            &mut self.read[s],
        );
    }

    /// The next node (its index, head and attributes) and the head of
    /// the node `ahead` places after it, if any; a node that cannot be
    /// decoded is skipped ([`GraphView::read_nodes`] reports it).
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> Option<Lent<'_, 'a>> {
        let len = self.node.len();
        loop {
            let i = self.at;
            if i >= len {
                return None;
            }
            self.at += 1;
            let j = i + self.ahead;
            let later = j < len && self.ahead > 0;
            if later {
                self.fill(j);
            }
            if self.ahead == 0 {
                self.fill(i);
            }
            if self.lent[i % RING] {
                let ahead = (later && self.lent[j % RING]).then(|| &self.ring[j % RING]);
                let read = &self.attributes[i % RING];
                return Some(Lent {
                    index: i,
                    head: &self.ring[i % RING],
                    read: read.get(..self.read[i % RING]).unwrap_or(read),
                    ahead,
                });
            }
        }
    }
}

/// Reads node `j` of `node` into `slot`: from its bytes, its attributes
/// decoded into `attributes` (`read` of them), or decoded (and kept);
/// `false` for a node that cannot be decoded (left unread).
#[inline(always)]
fn read_head<'a>(
    node: Seq<'a, NodeProto>,
    j: usize,
    slot: &mut NodeHead<'a>,
    attributes: &mut Vec<AttributeProto>,
    read: &mut usize,
) -> bool {
    *read = 0;
    match node {
        Seq::Slice(s) => s.get(j).map(|n| slot.assign(n)).is_some(),
        Seq::Kept(l) => match l.cached(j) {
            Some(n) => {
                slot.assign(n);
                true
            }
            None => match l.read_into(j, slot, attributes) {
                Some(n) => {
                    *read = n;
                    true
                }
                None => l.get(j).ok().map(|n| slot.assign(n)).is_some(),
            },
        },
    }
}

/// Whether `taken` batches taken over from the producer among the first
/// `batches` (+ 1) make a habit: a quarter of them, and 8 or more.
fn habitual(taken: usize, batches: usize) -> bool {
    taken >= 8 && taken.saturating_mul(4) >= batches
}

/// What lends a graph's node heads in order: [`NodeHeads`], or a
/// [`HeadFeed`]'s reader.
pub trait Heads<'a> {
    /// The next node and the head of the node its look-ahead places after
    /// it, if any; a node that cannot be decoded is skipped.
    fn next_head(&mut self) -> Option<Lent<'_, 'a>>;
}

impl<'a> Heads<'a> for NodeHeads<'a> {
    #[inline(always)]
    fn next_head(&mut self) -> Option<Lent<'_, 'a>> {
        self.next()
    }
}

/// Nodes per batch of a [`HeadFeed`].
const BATCH: usize = 256;
/// Batches of a [`HeadFeed`]: how far its producer may read ahead.
const BATCHES: usize = 8;
/// A graph of fewer nodes is read by its reader alone.
pub const FEED_FROM: usize = 4 * BATCH;

/// The heads of consecutive nodes, read into room kept from batch to batch.
#[derive(Default)]
struct Batch<'a> {
    first: usize,
    len: usize,
    heads: Vec<NodeHead<'a>>,
    attributes: Vec<Vec<AttributeProto>>,
    read: Vec<usize>,
    lent: Vec<bool>,
}

impl<'a> Batch<'a> {
    /// Reads batch `b` of `node`.
    fn fill(&mut self, node: Seq<'a, NodeProto>, b: usize) {
        let first = b.saturating_mul(BATCH);
        let len = node.len().saturating_sub(first).min(BATCH);
        if self.heads.len() < len {
            self.heads.resize_with(len, NodeHead::default);
            self.attributes.resize_with(len, Vec::new);
            self.read.resize(len, 0);
            self.lent.resize(len, false);
        }
        let slots = self
            .heads
            .iter_mut()
            .zip(self.attributes.iter_mut())
            .zip(self.read.iter_mut().zip(self.lent.iter_mut()))
            .take(len);
        for (k, ((head, attributes), (read, lent))) in slots.enumerate() {
            *lent = read_head(node, first + k, head, attributes, read);
        }
        self.first = first;
        self.len = len;
    }
}

/// A [`FeedSlot`]'s phases, in the low bits of its state (the batch it is
/// for above them).
const FREE: usize = 0;
const BUSY: usize = 1;
const READY: usize = 2;
/// Taken by the reader, who reads the batch itself.
const TAKEN: usize = 3;
const PHASES: usize = 4;

fn state(batch: usize, phase: usize) -> usize {
    batch.saturating_mul(PHASES) + phase
}

/// How long the reader waits on a batch the producer is reading before it
/// reads the batch itself (a batch takes a few microseconds to read; a
/// producer much slower than that was descheduled, or its core is busy).
const PATIENCE: std::time::Duration = std::time::Duration::from_micros(20);

/// A slot of a feed: batch `b` goes to slot `b % BATCHES`, once the reader
/// is done with batch `b - BATCHES`. Only the producer reads into a slot;
/// the reader reads a batch it takes into its own room.
struct FeedSlot<'a> {
    /// The batch and phase: free for it, being read by the producer, ready
    /// for the reader, taken by the reader.
    state: std::sync::atomic::AtomicUsize,
    batch: std::sync::Mutex<Batch<'a>>,
}

impl<'a> FeedSlot<'a> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Batch<'a>> {
        // A producer that panicked left whole heads: they are overwritten.
        self.batch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Moves the state from `from` to `to`, if it is still `from`.
    fn shift(&self, from: usize, to: usize) -> bool {
        use std::sync::atomic::Ordering::{AcqRel, Acquire};
        self.state
            .compare_exchange(from, to, AcqRel, Acquire)
            .is_ok()
    }
}

/// A graph's node heads read in batches by a producer on another thread,
/// a few batches ahead of their reader ([`HeadFeed::reader`]), who reads a
/// batch itself when the producer is not there yet: it never waits on a
/// producer that has not started (one the thread pool never runs costs
/// nothing), and waits on a batch being read only briefly (see
/// [`PATIENCE`]). What the reader gets is what [`NodeHeads`] gives.
pub struct HeadFeed<'a> {
    node: Seq<'a, NodeProto>,
    batches: usize,
    slots: Vec<FeedSlot<'a>>,
    /// The batch the reader is at.
    reader_at: std::sync::atomic::AtomicUsize,
    /// Set when the reader is gone: the producer stops.
    closed: std::sync::atomic::AtomicBool,
    /// Set when the reader reads the rest itself (the producer was too
    /// slow: see [`FedHeads::take`]): the producer stops reading, and only
    /// does its other work.
    alone: std::sync::atomic::AtomicBool,
}

impl<'a> HeadFeed<'a> {
    pub fn new(node: Seq<'a, NodeProto>) -> Self {
        let batches = node.len().div_ceil(BATCH);
        HeadFeed {
            node,
            batches,
            slots: (0..BATCHES.min(batches))
                .map(|b| FeedSlot {
                    state: std::sync::atomic::AtomicUsize::new(state(b, FREE)),
                    batch: std::sync::Mutex::new(Batch::default()),
                })
                .collect(),
            reader_at: std::sync::atomic::AtomicUsize::new(0),
            closed: std::sync::atomic::AtomicBool::new(false),
            alone: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Reads the batches the reader has not reached, up to `BATCHES` ahead
    /// of it, until it has them all or is gone. While it cannot go on it
    /// runs the thread pool's other work, or sleeps a little (the batches
    /// ahead last the reader far longer).
    pub fn produce(&self) {
        self.produce_with(|| false);
    }

    /// [`HeadFeed::produce`], doing a step of other work (`idle()`, which
    /// says whether there was one) each time it would wait for the reader:
    /// a step should last well under the reader's use of the batches ahead
    /// (tens of microseconds).
    pub fn produce_with(&self, idle: impl FnMut() -> bool) {
        self.produce_pausing(idle, |_| {});
    }

    /// [`HeadFeed::produce_with`], calling `pause(b)` after reading batch
    /// `b`, before handing it over (tests make a slow producer with it).
    #[doc(hidden)]
    pub fn produce_pausing(&self, mut idle: impl FnMut() -> bool, pause: impl Fn(usize)) {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        let mut b = 0;
        while b < self.batches && !self.closed.load(Relaxed) && !self.alone.load(Relaxed) {
            let Some(slot) = self.slots.get(b % BATCHES) else {
                return;
            };
            let now = slot.state.load(Acquire);
            if now / PHASES < b {
                // The reader is not done with the batch before in the slot.
                if !idle() && !matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
                continue;
            }
            if now == state(b, FREE) && slot.shift(now, state(b, BUSY)) {
                let claim = Claim { slot, batch: b };
                slot.lock().fill(self.node, b);
                pause(b);
                std::mem::forget(claim);
                // (Unless the reader took it meanwhile.)
                slot.shift(state(b, BUSY), state(b, READY));
            }
            // (Past a batch the reader took: its own from then on.)
            b = (b + 1).max(self.reader_at.load(Relaxed));
        }
        // The other work left, while the reader reads.
        while !self.closed.load(Relaxed) {
            if !idle() {
                break;
            }
        }
    }

    /// The reader of the heads, `ahead` (< `BATCH`) nodes ahead of it
    /// within a batch. One reader per feed.
    pub fn reader(&self, ahead: usize) -> FedHeads<'_, 'a> {
        FedHeads {
            feed: self,
            held: Held::Nothing,
            own: Batch::default(),
            b: 0,
            k: 0,
            taken_over: 0,
            ahead: ahead.min(BATCH - 1),
        }
    }
}

/// A batch the producer is reading: if it unwinds, the batch is left for
/// the reader to read (who would wait on it otherwise).
struct Claim<'s, 'a> {
    slot: &'s FeedSlot<'a>,
    batch: usize,
}

impl Drop for Claim<'_, '_> {
    fn drop(&mut self) {
        self.slot
            .shift(state(self.batch, BUSY), state(self.batch, FREE));
    }
}

/// What the reader lends from.
enum Held<'f, 'a> {
    Nothing,
    /// A slot the producer read.
    Slot(std::sync::MutexGuard<'f, Batch<'a>>),
    /// The reader's own room.
    Own,
}

/// The reader of a [`HeadFeed`].
pub struct FedHeads<'f, 'a> {
    feed: &'f HeadFeed<'a>,
    /// The batch being lent, held until its last node is.
    held: Held<'f, 'a>,
    /// Room for the batches the reader reads itself.
    own: Batch<'a>,
    /// The batch's number, and its next node.
    b: usize,
    k: usize,
    /// Batches taken from a producer too long at them.
    taken_over: usize,
    ahead: usize,
}

impl<'f, 'a> FedHeads<'f, 'a> {
    /// Batch `b`: as the producer read it, or read now into the reader's
    /// own room (when the producer has not started it, or is too long at
    /// it).
    fn take(&mut self, b: usize) -> Option<Held<'f, 'a>> {
        use std::sync::atomic::Ordering::Acquire;
        let feed = self.feed;
        let slot = feed.slots.get(b % BATCHES)?;
        let mut since: Option<std::time::Instant> = None;
        let mut spins = 0u32;
        loop {
            let now = slot.state.load(Acquire);
            if now == state(b, READY) {
                return Some(Held::Slot(slot.lock()));
            }
            let patient = || since.is_none_or(|t| t.elapsed() < PATIENCE);
            let mine = now == state(b, FREE) || (now == state(b, BUSY) && !patient());
            if mine && slot.shift(now, state(b, TAKEN)) {
                if now != state(b, FREE) {
                    self.taken_over();
                }
                self.own.fill(feed.node, b);
                return Some(Held::Own);
            }
            // Being read by the producer: a few microseconds.
            spins = spins.wrapping_add(1);
            if spins % 64 == 1 {
                since.get_or_insert_with(std::time::Instant::now);
            }
            std::hint::spin_loop();
        }
    }

    /// Notes a batch taken from a producer too long at it; once that is a
    /// habit (a quarter of the batches, and 8 or more: in some spells of a
    /// VM, the producer's core reads at a fraction of the reader's pace,
    /// and the reader would wait on each batch), the reader reads the rest
    /// alone.
    fn taken_over(&mut self) {
        self.taken_over = self.taken_over.saturating_add(1);
        if habitual(self.taken_over, self.b) {
            self.feed
                .alone
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The batch being lent, if any.
    fn batch(&self) -> Option<&Batch<'a>> {
        match &self.held {
            Held::Nothing => None,
            Held::Slot(guard) => Some(guard),
            Held::Own => Some(&self.own),
        }
    }

    /// Gives batch `b`'s slot to batch `b + BATCHES` (the producer may
    /// still be reading into it a batch the reader took: it holds the
    /// slot's lock until done).
    fn release(&mut self) {
        use std::sync::atomic::Ordering::{Relaxed, Release};
        self.held = Held::Nothing;
        if let Some(slot) = self.feed.slots.get(self.b % BATCHES) {
            slot.state.store(state(self.b + BATCHES, FREE), Release);
        }
        self.b += 1;
        self.feed.reader_at.store(self.b, Relaxed);
    }
}

impl<'a> Heads<'a> for FedHeads<'_, 'a> {
    #[inline]
    fn next_head(&mut self) -> Option<Lent<'_, 'a>> {
        loop {
            match self.batch() {
                Some(batch) if self.k < batch.len => {
                    if batch.lent.get(self.k).copied().unwrap_or(false) {
                        break;
                    }
                    self.k += 1;
                    continue;
                }
                Some(_) => self.release(),
                None => {}
            }
            if self.b >= self.feed.batches {
                return None;
            }
            self.held = self.take(self.b)?;
            self.k = 0;
        }
        let k = self.k;
        self.k += 1;
        let batch = self.batch()?;
        let j = k + self.ahead;
        let ahead =
            (self.ahead > 0 && j < batch.len && batch.lent.get(j).copied().unwrap_or(false))
                .then(|| batch.heads.get(j))
                .flatten();
        let read = batch.read.get(k).copied().unwrap_or(0);
        Some(Lent {
            index: batch.first + k,
            head: batch.heads.get(k)?,
            read: batch.attributes.get(k)?.get(..read).unwrap_or_default(),
            ahead,
        })
    }
}

impl Drop for FedHeads<'_, '_> {
    fn drop(&mut self) {
        self.feed
            .closed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What a `value_info` entry declares: its name and type, the type as
/// the bytes of a decode-on-touch list's entry (not decoded) or as the
/// decoded entry's message.
#[derive(Clone, Copy, Debug)]
pub struct Declared<'a> {
    /// Position in the list.
    pub index: usize,
    pub name: &'a str,
    pub ty: DeclaredType<'a>,
    entry: Entry<'a>,
}

#[derive(Clone, Copy, Debug)]
pub enum DeclaredType<'a> {
    None,
    Bytes(&'a [u8]),
    Message(&'a TypeProto),
}

/// Whether two declared types are the same declaration (equal bytes, or
/// equal messages).
pub fn same_declared(a: DeclaredType<'_>, b: DeclaredType<'_>) -> bool {
    match (a, b) {
        (DeclaredType::Bytes(x), DeclaredType::Bytes(y)) => x == y,
        (DeclaredType::Message(x), DeclaredType::Message(y)) => x == y,
        _ => false,
    }
}

#[derive(Clone, Copy, Debug)]
enum Entry<'a> {
    Decoded(&'a ValueInfoProto),
    Listed(&'a LazyList<ValueInfoProto>, usize),
}

impl<'a> Declared<'a> {
    fn of(index: usize, vi: &'a ValueInfoProto) -> Self {
        Declared {
            index,
            name: vi.name(),
            ty: vi
                .r#type
                .as_ref()
                .map_or(DeclaredType::None, DeclaredType::Message),
            entry: Entry::Decoded(vi),
        }
    }

    /// The declared type as a message: decoded from its bytes, or, if they
    /// do not decode alone, from the whole entry (decoded and kept now; a
    /// failure is reported by [`GraphView::read_nodes`]). `None` when
    /// declared without a type.
    pub fn type_proto(&self) -> Option<Cow<'a, TypeProto>> {
        match self.ty {
            DeclaredType::None => None,
            DeclaredType::Message(t) => Some(Cow::Borrowed(t)),
            DeclaredType::Bytes(bytes) => match prost::Message::decode(bytes) {
                Ok(t) => Some(Cow::Owned(t)),
                Err(_) => {
                    let whole = match self.entry {
                        Entry::Decoded(vi) => Some(vi),
                        Entry::Listed(list, i) => list.get(i).ok(),
                    };
                    whole?.r#type.as_ref().map(Cow::Borrowed)
                }
            },
        }
    }
}

impl<'a> GraphView<'a> {
    /// The `value_info` declarations in order. A decode-on-touch list's
    /// entries are read from their bytes (nothing is decoded or kept); one
    /// the bytes alone cannot give is decoded, and one that cannot be
    /// decoded is skipped ([`GraphView::read_nodes`] reports it).
    pub fn declarations(&self) -> impl Iterator<Item = Declared<'a>> + 'a {
        self.value_info.read_each(Declared::of, |l, i| {
            let (name, ty) = l.declaration(i)?;
            Some(Declared {
                index: i,
                name,
                ty: ty.map_or(DeclaredType::None, DeclaredType::Bytes),
                entry: Entry::Listed(l, i),
            })
        })
    }
}

/// An initializer as inference reads it: name, element type and dims
/// (of a decode-on-touch list: read from the bytes), and the tensor,
/// decoded when its value is read.
#[derive(Clone, Debug)]
pub struct Initializer<'a> {
    /// Position in the list.
    pub index: usize,
    pub name: &'a str,
    /// `None` when the tensor has no `data_type` field.
    pub data_type: Option<i32>,
    pub dims: smallvec::SmallVec<[i64; 4]>,
    pub tensor: TensorRef<'a>,
}

/// A tensor decoded, or an element of a decode-on-touch list decoded
/// (and kept by the list) when first read.
#[derive(Clone, Copy, Debug)]
pub enum TensorRef<'a> {
    Decoded(&'a TensorProto),
    Listed(&'a LazyList<TensorProto>, usize),
}

impl<'a> TensorRef<'a> {
    /// The tensor (decoded now if it was not).
    pub fn get(self) -> Result<&'a TensorProto, DecodeError> {
        match self {
            TensorRef::Decoded(t) => Ok(t),
            TensorRef::Listed(list, i) => list.get(i),
        }
    }
}

impl<'a> Initializer<'a> {
    fn of(index: usize, t: &'a TensorProto) -> Self {
        Initializer {
            index,
            name: t.name(),
            data_type: t.data_type,
            dims: t.dims.iter().copied().collect(),
            tensor: TensorRef::Decoded(t),
        }
    }

    fn read(index: usize, header: TensorHeader<'a>, list: &'a LazyList<TensorProto>) -> Self {
        Initializer {
            index,
            name: header.name,
            data_type: header.data_type,
            dims: header.dims,
            tensor: TensorRef::Listed(list, index),
        }
    }
}

impl<'a> GraphView<'a> {
    /// The initializers in order. A decode-on-touch list's tensors are
    /// read from their bytes (nothing is decoded or kept); one the bytes
    /// alone cannot give is decoded, and one that cannot be decoded is
    /// skipped ([`GraphView::read_nodes`] reports it). Over a list of big
    /// tensors the pages behind the reader are released as it goes
    /// ([`LazyList::release_behind`]).
    pub fn initializers(&self) -> impl Iterator<Item = Initializer<'a>> + 'a {
        let (mut behind, names) = match self.initializer {
            Seq::Kept(l) => (Some(l.release_behind()), l.name_table().ok()),
            Seq::Slice(_) => (None, None),
        };
        self.initializer
            .read_each(Initializer::of, move |l, i| {
                let mut t = Initializer::read(i, l.header(i)?, l);
                // The name as copied out of the map: the engine keeps and
                // compares it long after the pages behind are released.
                if let Some(table) = names {
                    t.name = table.get(i).unwrap_or_default();
                }
                Some(t)
            })
            .inspect(move |t| {
                if let Some(behind) = &mut behind {
                    behind.at(t.index);
                }
            })
    }

    /// The initializers' names in order ("" for one without); of a
    /// decode-on-touch list, read from the list's name table (nothing is
    /// decoded).
    pub fn initializer_names(&self) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        match self.initializer {
            Seq::Kept(l) => match l.name_table() {
                Ok(names) => Box::new(names.iter().map(Option::unwrap_or_default)),
                Err(_) => Box::new(self.initializers().map(|t| t.name)),
            },
            Seq::Slice(s) => Box::new(s.iter().map(|t| t.name())),
        }
    }
}

impl Deref for GraphView<'_> {
    type Target = GraphProto;
    fn deref(&self) -> &GraphProto {
        self.graph
    }
}

#[cfg(test)]
mod tests {
    use super::habitual;

    /// The reader reads alone after 8 take-overs in its first 32 batches,
    /// not for the few a good spell has (10 of a 586-batch graph).
    #[test]
    fn reading_alone_takes_a_habit() {
        assert!(!habitual(7, 0));
        assert!(habitual(8, 8));
        assert!(habitual(8, 32));
        assert!(!habitual(8, 33));
        assert!(!habitual(10, 586));
        assert!(habitual(200, 586));
    }
}
