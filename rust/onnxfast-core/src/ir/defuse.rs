//! The def-use index of one graph: where each value is defined (graph
//! input, initializer or node output), where its type is declared (a
//! `ValueInfoProto` of the graph), which nodes read it — directly, or from
//! inside their subgraphs — and which names the graph reads without
//! defining them (values of enclosing graphs: its captures). One
//! implementation for the checker (hints on undefined inputs), the engine
//! and the binding (`Graph.producer` / `Graph.consumers` / `Graph.values`),
//! as onnx's in-memory IR (`ir.h`) keeps one `Value` with its uses.
//!
//! One entry per name, in an ordered hash map: the name stored once, with
//! its definition, declaration and first reader packed in 20 bytes (other
//! readers aside): 125–135 bytes per value of RSS in all, measured on the
//! 200k-node chain and the 150k-node exporter graph. Built in one
//! pass over a graph's lists, whose nodes may be decoded one at a time
//! ([`DefUseBuilder`]); lookups are hash-map reads afterwards.

use foldhash::HashMap;
use indexmap::IndexMap;
use smallvec::SmallVec;

use crate::decode::lazy::NodeNames;
use crate::proto::{GraphProto, NodeProto, SparseTensorProto, Str, ValueInfoProto};

/// Where a value of a graph comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    /// The graph's input `i` (with a default when an initializer has the
    /// same name, as in models of IR < 4).
    Input(usize),
    /// The graph's initializer `i`.
    Initializer(usize),
    /// The graph's sparse initializer `i`.
    SparseInitializer(usize),
    /// Output `output` of node `node`.
    Node { node: usize, output: usize },
}

/// Which `ValueInfoProto` of the graph declares a value. When a name is
/// listed more than once, an output wins over an input, and an input over a
/// `value_info` entry (the order onnx's `infer_shapes` looks them up in);
/// within a list, the first entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declared {
    ValueInfo(usize),
    Input(usize),
    Output(usize),
}

/// Node indexes.
type Users = SmallVec<[u32; 2]>;

/// A name's entry in a [`DefUse`] (valid for that index only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key(u32);

const NONE: u32 = u32::MAX;

/// One name's facts, packed in 20 bytes (indexes as u32: lists of more than
/// 4 billion elements cannot occur under the decode budget, and an index
/// that does not fit is not recorded).
#[derive(Debug, Clone)]
struct Entry {
    /// 0 none, 1 input, 2 initializer, 3 sparse initializer, 4 node output.
    def_kind: u8,
    /// 0 none, 1 value_info, 2 input, 3 output.
    declared_kind: u8,
    /// Read by a node, a node's subgraph, or as a graph output.
    read: bool,
    def_index: u32,
    def_output: u32,
    declared_index: u32,
    /// The first node reading the name as an input (`NONE`: none); the
    /// others are in `DefUse::more`.
    first: u32,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            def_kind: 0,
            declared_kind: 0,
            read: false,
            def_index: 0,
            def_output: 0,
            declared_index: 0,
            first: NONE,
        }
    }
}

impl Entry {
    fn def(&self) -> Option<Def> {
        let i = self.def_index as usize;
        match self.def_kind {
            1 => Some(Def::Input(i)),
            2 => Some(Def::Initializer(i)),
            3 => Some(Def::SparseInitializer(i)),
            4 => Some(Def::Node {
                node: i,
                output: self.def_output as usize,
            }),
            _ => None,
        }
    }

    /// False when an index does not fit.
    fn set_def(&mut self, def: Def) -> bool {
        let (kind, index, output) = match def {
            Def::Input(i) => (1, i, 0),
            Def::Initializer(i) => (2, i, 0),
            Def::SparseInitializer(i) => (3, i, 0),
            Def::Node { node, output } => (4, node, output),
        };
        match (u32::try_from(index), u32::try_from(output)) {
            (Ok(index), Ok(output)) => {
                (self.def_kind, self.def_index, self.def_output) = (kind, index, output);
                true
            }
            _ => false,
        }
    }

    fn declared(&self) -> Option<Declared> {
        let i = self.declared_index as usize;
        match self.declared_kind {
            1 => Some(Declared::ValueInfo(i)),
            2 => Some(Declared::Input(i)),
            3 => Some(Declared::Output(i)),
            _ => None,
        }
    }

    fn set_declared(&mut self, declared: Declared) {
        let (kind, index) = match declared {
            Declared::ValueInfo(i) => (1, i),
            Declared::Input(i) => (2, i),
            Declared::Output(i) => (3, i),
        };
        if let Ok(index) = u32::try_from(index) {
            (self.declared_kind, self.declared_index) = (kind, index);
        }
    }
}

/// The def-use index of one graph (see the module documentation).
#[derive(Debug, Default, Clone)]
pub struct DefUse {
    /// Every name the graph defines, declares or reads, in the order it is
    /// first named.
    entries: IndexMap<Str, Entry, foldhash::fast::RandomState>,
    /// Names defined, in definition order (positions in `entries`).
    own: Vec<u32>,
    /// Names read, in first-use order (positions in `entries`).
    reads: Vec<u32>,
    /// Direct readers after the first, by entry.
    more: HashMap<u32, Users>,
    /// For a name a node's subgraph reads (a value of this graph or of an
    /// enclosing one): the nodes holding such subgraphs, in order.
    nested: HashMap<u32, Users>,
}

impl DefUse {
    /// Indexes a list of nodes only (a function body, or a graph when only
    /// producers and consumers are wanted).
    pub fn build(nodes: &[NodeProto]) -> DefUse {
        let mut b = DefUseBuilder::default();
        for (i, n) in nodes.iter().enumerate() {
            b.node(i, n);
        }
        b.finish()
    }

    /// Indexes a graph whose lists are all in memory.
    pub fn of_graph(g: &GraphProto) -> DefUse {
        let mut b = DefUseBuilder::new(g);
        for (i, t) in g.initializer.iter().enumerate() {
            b.initializer(i, t.name());
        }
        for (i, s) in g.sparse_initializer.iter().enumerate() {
            b.sparse_initializer(i, s);
        }
        for (i, v) in g.value_info.iter().enumerate() {
            b.value_info(i, v);
        }
        for (i, n) in g.node.iter().enumerate() {
            b.node(i, n);
        }
        b.finish()
    }

    /// The declarations of a graph only (its inputs, outputs and
    /// `value_info`; no nodes or initializers): what [`DefUse::declared`]
    /// needs, at the cost of those lists alone.
    pub fn declarations(g: &GraphProto) -> DefUse {
        let mut b = DefUseBuilder::new(g);
        for (i, v) in g.value_info.iter().enumerate() {
            b.value_info(i, v);
        }
        b.finish()
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    /// Where `name` is defined in this graph.
    pub fn def(&self, name: &str) -> Option<Def> {
        self.entry(name)?.def()
    }

    /// Index of the node producing `name`, if a node of this graph does.
    pub fn producer(&self, name: &str) -> Option<usize> {
        match self.def(name)? {
            Def::Node { node, .. } => Some(node),
            _ => None,
        }
    }

    /// Indexes of the nodes reading `name` as an input, in node order, each
    /// once (uses inside subgraphs are not listed: see [`DefUse::users`]).
    pub fn consumers(&self, name: &str) -> Vec<usize> {
        match self.entries.get_full(name) {
            Some((k, _, e)) => self.direct(k, e),
            None => Vec::new(),
        }
    }

    fn direct(&self, k: usize, e: &Entry) -> Vec<usize> {
        if e.first == NONE {
            return Vec::new();
        }
        let more = u32::try_from(k).ok().and_then(|k| self.more.get(&k));
        std::iter::once(e.first)
            .chain(more.into_iter().flatten().copied())
            .map(|i| i as usize)
            .collect()
    }

    /// Which entry of this graph declares `name`'s type.
    pub fn declared(&self, name: &str) -> Option<Declared> {
        self.entry(name)?.declared()
    }

    /// The names this graph defines, in definition order: inputs,
    /// initializers, sparse initializers, then node outputs.
    pub fn own(&self) -> impl Iterator<Item = &Str> + '_ {
        self.own
            .iter()
            .filter_map(|&k| self.entries.get_index(k as usize).map(|(name, _)| name))
    }

    /// [`DefUse::own`] with where each name is defined and its entry (for
    /// [`DefUse::uses_at`]).
    pub fn own_defs(&self) -> impl Iterator<Item = (&Str, Def, Key)> + '_ {
        self.own.iter().filter_map(|&k| {
            let (name, entry) = self.entries.get_index(k as usize)?;
            Some((name, entry.def()?, Key(k)))
        })
    }

    /// Where `name` is defined, and its entry.
    pub fn def_key(&self, name: &str) -> Option<(Def, Key)> {
        let (k, _, e) = self.entries.get_full(name)?;
        Some((e.def()?, Key(u32::try_from(k).ok()?)))
    }

    /// The entry of `name`, defined here or only read.
    pub fn key(&self, name: &str) -> Option<Key> {
        u32::try_from(self.entries.get_index_of(name)?)
            .ok()
            .map(Key)
    }

    /// Which entry of this graph declares the type of entry `key`'s name.
    pub fn declared_at(&self, key: Key) -> Option<Declared> {
        self.entries.get_index(key.0 as usize)?.1.declared()
    }

    /// The last node using entry `key`'s name (directly or in one of its
    /// subgraphs): the last of [`DefUse::uses_at`], without listing them.
    pub fn last_use_at(&self, key: Key) -> Option<usize> {
        let (_, e) = self.entries.get_index(key.0 as usize)?;
        let direct = (e.first != NONE).then(|| {
            let more = self.more.get(&key.0).and_then(|m| m.iter().max().copied());
            more.map_or(e.first, |m| m.max(e.first))
        });
        let nested = self
            .nested
            .get(&key.0)
            .and_then(|n| n.iter().max().copied());
        direct.into_iter().chain(nested).max().map(|i| i as usize)
    }

    /// The nodes using entry `key`'s name, in node order, each once: for
    /// each, whether one of its subgraphs reads the name (then it may read
    /// it directly too).
    pub fn uses_at(&self, key: Key) -> Vec<(usize, bool)> {
        let Some((_, e)) = self.entries.get_index(key.0 as usize) else {
            return Vec::new();
        };
        let direct = self.direct(key.0 as usize, e);
        let Some(nested) = self.nested.get(&key.0) else {
            return direct.into_iter().map(|i| (i, false)).collect();
        };
        let mut out: Vec<(usize, bool)> = direct
            .into_iter()
            .map(|i| (i, false))
            .chain(nested.iter().map(|&i| (i as usize, true)))
            .collect();
        out.sort_unstable();
        // A node both reading the name and holding a subgraph reading it:
        // once, marked as reading inside.
        out.dedup_by(|later, first| {
            let same = later.0 == first.0;
            first.1 |= same && later.1;
            same
        });
        out
    }

    /// The `i`-th name of [`DefUse::own`].
    pub fn own_at(&self, i: usize) -> Option<&Str> {
        let k = *self.own.get(i)?;
        self.entries.get_index(k as usize).map(|(name, _)| name)
    }

    /// How many names this graph defines.
    pub fn own_len(&self) -> usize {
        self.own.len()
    }

    /// The names this graph reads but does not define (values of enclosing
    /// graphs, or undefined names), in first-use order.
    pub fn captured(&self) -> impl Iterator<Item = &Str> + '_ {
        self.reads
            .iter()
            .filter_map(|&k| self.entries.get_index(k as usize))
            .filter(|(_, e)| e.def_kind == 0)
            .map(|(name, _)| name)
    }

    /// Indexes of the nodes reading `name` directly or from inside one of
    /// their subgraphs, in node order, each once.
    pub fn users(&self, name: &str) -> Vec<usize> {
        let uses = self.key(name).map(|k| self.uses_at(k)).unwrap_or_default();
        uses.into_iter().map(|(i, _)| i).collect()
    }

    /// True when a subgraph of node `node` reads `name` (a value of this
    /// graph or of an enclosing one).
    pub fn read_inside(&self, name: &str, node: usize) -> bool {
        let uses = self.key(name).map(|k| self.uses_at(k)).unwrap_or_default();
        uses.contains(&(node, true))
    }
}

/// Builds a [`DefUse`] from a graph's parts, added in this order: its
/// inputs and outputs (from the graph message, by [`DefUseBuilder::new`]),
/// then its initializers, sparse initializers, `value_info` entries and
/// nodes, each list in order (so that they may be decoded one at a time).
#[derive(Default)]
pub struct DefUseBuilder {
    index: DefUse,
    outputs: Vec<(usize, Str)>,
}

impl DefUseBuilder {
    pub fn new(g: &GraphProto) -> DefUseBuilder {
        let mut b = DefUseBuilder::default();
        for (i, v) in g.input.iter().enumerate() {
            if b.define(v.name(), Def::Input(i)) {
                b.declare(v.name(), Declared::Input(i), true);
            }
        }
        b.outputs = g
            .output
            .iter()
            .enumerate()
            .map(|(i, v)| (i, Str::from(v.name())))
            .collect();
        b
    }

    /// Room for `names` more names (a graph's count of initializers and
    /// nodes is a good guess: most nodes define one new name).
    pub fn reserve(&mut self, names: usize) {
        self.index.entries.reserve(names);
        self.index.own.reserve(names);
        self.index.reads.reserve(names);
    }

    pub fn initializer(&mut self, i: usize, name: &str) {
        self.define(name, Def::Initializer(i));
    }

    /// A sparse initializer, named by its `values` tensor.
    pub fn sparse_initializer(&mut self, i: usize, s: &SparseTensorProto) {
        let name = s.values.as_ref().map_or("", |v| v.name());
        self.define(name, Def::SparseInitializer(i));
    }

    pub fn value_info(&mut self, i: usize, v: &ValueInfoProto) {
        self.value_info_named(i, v.name());
    }

    /// `value_info` entry `i`, by its name ("" when absent).
    pub fn value_info_named(&mut self, i: usize, name: &str) {
        self.declare(name, Declared::ValueInfo(i), false);
    }

    /// Adds node `i` (nodes must be added in order).
    pub fn node(&mut self, i: usize, n: &NodeProto) {
        self.reads(i, n.input.iter().map(|s| s.as_str()));
        let mut inside: Vec<Str> = Vec::new();
        for a in &n.attribute {
            for g in a.g().into_iter().chain(a.graphs().iter()) {
                let sub = DefUse::of_graph(g);
                inside.extend(sub.captured().cloned());
            }
        }
        // Node indexes beyond u32 cannot occur under the decode budget (a
        // node takes at least 192 bytes); such a node would not be listed
        // as a reader.
        let at = u32::try_from(i).ok();
        for name in inside {
            if let (Some(k), Some(at)) = (self.note_read(&name), at) {
                let nested = self.index.nested.entry(k as u32).or_default();
                if nested.last() != Some(&at) {
                    nested.push(at);
                }
            }
        }
        self.defines(i, n.output.iter().map(|s| s.as_str()));
    }

    /// Adds node `i` from its names, read from its bytes: the same as
    /// [`DefUseBuilder::node`] for a node without subgraphs. A node with
    /// subgraphs (`names.has_subgraph`) must be added decoded.
    pub fn node_names(&mut self, i: usize, names: &NodeNames<'_>) {
        debug_assert!(!names.has_subgraph);
        self.reads(i, names.inputs.iter().copied());
        self.defines(i, names.outputs.iter().copied());
    }

    fn reads<'n>(&mut self, i: usize, inputs: impl Iterator<Item = &'n str>) {
        let at = u32::try_from(i).ok();
        for input in inputs {
            if let (Some(k), Some(at)) = (self.note_read(input), at) {
                self.add_reader(k, at);
            }
        }
    }

    fn defines<'n>(&mut self, i: usize, outputs: impl Iterator<Item = &'n str>) {
        for (k, output) in outputs.enumerate() {
            self.define(output, Def::Node { node: i, output: k });
        }
    }

    /// Node `at` reads entry `k` (nodes come in order: a node reading a
    /// name twice is recorded once).
    fn add_reader(&mut self, k: usize, at: u32) {
        let (Some(entry), Ok(key)) = (self.index.entries.get_index_mut(k), u32::try_from(k)) else {
            return;
        };
        let entry = entry.1;
        if entry.first == NONE {
            entry.first = at;
            return;
        }
        if entry.first == at {
            return;
        }
        let more = self.index.more.entry(key).or_default();
        if more.last() != Some(&at) {
            more.push(at);
        }
    }

    /// The entry of `name`, created when new.
    fn slot(&mut self, name: &str) -> usize {
        match self.index.entries.get_index_of(name) {
            Some(k) => k,
            None => {
                self.index
                    .entries
                    .insert_full(Str::from(name), Entry::default())
                    .0
            }
        }
    }

    /// Marks `name` read; its entry (None for the empty name of an omitted
    /// optional input).
    fn note_read(&mut self, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        let k = self.slot(name);
        let entry = &mut self.index.entries[k];
        if !entry.read {
            entry.read = true;
            if let Ok(k) = u32::try_from(k) {
                self.index.reads.push(k);
            }
        }
        Some(k)
    }

    /// Records a definition; the first one of a name wins. True when it
    /// was the first.
    fn define(&mut self, name: &str, def: Def) -> bool {
        if name.is_empty() {
            return false;
        }
        let k = self.slot(name);
        let entry = &mut self.index.entries[k];
        if entry.def_kind != 0 || !entry.set_def(def) {
            return false;
        }
        // Entries are at most as many as the names in the file (each at
        // least 2 bytes), below u32::MAX under the decode budget.
        if let Ok(k) = u32::try_from(k) {
            self.index.own.push(k);
        }
        true
    }

    /// Records a declaration: the first of its list; `over` when this list
    /// takes precedence over the ones seen before.
    fn declare(&mut self, name: &str, declared: Declared, over: bool) {
        if name.is_empty() && !matches!(declared, Declared::Output(_)) {
            return;
        }
        let k = self.slot(name);
        let entry = &mut self.index.entries[k];
        let same_list = matches!(
            (entry.declared(), declared),
            (Some(Declared::ValueInfo(_)), Declared::ValueInfo(_))
                | (Some(Declared::Input(_)), Declared::Input(_))
                | (Some(Declared::Output(_)), Declared::Output(_))
        );
        if entry.declared_kind == 0 || (over && !same_list) {
            entry.set_declared(declared);
        }
    }

    /// The index.
    pub fn finish(mut self) -> DefUse {
        for (i, name) in std::mem::take(&mut self.outputs) {
            if name.is_empty() {
                continue;
            }
            self.note_read(&name);
            self.declare(&name, Declared::Output(i), true);
        }
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{AttributeProto, TensorProto};

    fn node(inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            input: inputs.iter().map(|s| Str::from(*s)).collect(),
            output: outputs.iter().map(|s| Str::from(*s)).collect(),
            ..NodeProto::default()
        }
    }

    fn info(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.to_string()),
            ..ValueInfoProto::default()
        }
    }

    fn with_graph(mut n: NodeProto, attr: &str, g: GraphProto) -> NodeProto {
        let mut a = AttributeProto {
            name: Some(attr.into()),
            ..AttributeProto::default()
        };
        a.extras_mut().g = Some(Box::new(g));
        n.attribute.push(a);
        n
    }

    fn names<'a>(it: impl Iterator<Item = &'a Str>) -> Vec<&'a str> {
        it.map(Str::as_str).collect()
    }

    #[test]
    fn producers_and_consumers_of_nodes() {
        let nodes = [
            node(&["x", "x"], &["a"]),
            node(&["a", ""], &["b", ""]),
            node(&["a", "b"], &["a"]),
        ];
        let du = DefUse::build(&nodes);
        assert_eq!(du.producer("a"), Some(0), "first producer wins");
        assert_eq!(du.producer("b"), Some(1));
        assert_eq!(du.producer("x"), None);
        assert_eq!(du.producer(""), None);
        assert_eq!(
            du.consumers("x"),
            vec![0],
            "a node reading twice is listed once"
        );
        assert_eq!(du.consumers("a"), vec![1, 2]);
        assert_eq!(du.consumers(""), Vec::<usize>::new());
        assert_eq!(names(du.captured()), ["x"]);
    }

    #[test]
    fn definitions_declarations_and_uses() {
        let g = GraphProto {
            input: vec![info("x"), info("w")],
            output: vec![info("y"), info("x"), info("y")],
            value_info: vec![info("a"), info("y"), info("a")],
            initializer: vec![TensorProto {
                name: Some("w".into()),
                ..TensorProto::default()
            }],
            node: vec![
                node(&["x", "w"], &["a"]),
                node(&["a", "a", "outer"], &["y", ""]),
            ],
            ..GraphProto::default()
        };
        let v = DefUse::of_graph(&g);
        assert_eq!(v.def("x"), Some(Def::Input(0)));
        assert_eq!(v.def("w"), Some(Def::Input(1)), "an input with a default");
        assert_eq!(v.def("y"), Some(Def::Node { node: 1, output: 0 }));
        assert_eq!(v.def(""), None);
        assert_eq!(names(v.own()), ["x", "w", "a", "y"]);
        assert_eq!(v.own_len(), 4);
        assert_eq!(names(v.captured()), ["outer"]);
        assert_eq!(v.declared("a"), Some(Declared::ValueInfo(0)), "first entry");
        assert_eq!(v.declared("y"), Some(Declared::Output(0)), "output wins");
        assert_eq!(v.declared("x"), Some(Declared::Output(1)), "over input");
        assert_eq!(v.declared("w"), Some(Declared::Input(1)));
        let d = DefUse::declarations(&g);
        for name in ["a", "y", "x", "w", "outer"] {
            assert_eq!(d.declared(name), v.declared(name), "{name}");
        }
        assert_eq!(v.users("a"), vec![1]);
        assert_eq!(v.producer("y"), Some(1));
    }

    #[test]
    fn subgraph_reads_are_uses_and_captures() {
        // then_branch reads `a` (this graph's) and `far` (an outer graph's);
        // its nested Loop body reads `b`, which then_branch defines.
        let body = GraphProto {
            node: vec![node(&["b", "a"], &["c"])],
            output: vec![info("c")],
            ..GraphProto::default()
        };
        let then_branch = GraphProto {
            node: vec![
                node(&["far"], &["b"]),
                with_graph(node(&[], &["l"]), "body", body),
            ],
            output: vec![info("l")],
            ..GraphProto::default()
        };
        let g = GraphProto {
            input: vec![info("cond")],
            node: vec![
                node(&["cond"], &["a"]),
                with_graph(node(&["cond"], &["r"]), "then_branch", then_branch.clone()),
                node(&["a"], &["s"]),
            ],
            output: vec![info("r"), info("s")],
            ..GraphProto::default()
        };
        let v = DefUse::of_graph(&g);
        assert_eq!(names(v.captured()), ["far"]);
        assert_eq!(v.users("a"), vec![1, 2], "read inside node 1, by node 2");
        assert_eq!(v.consumers("a"), vec![2], "direct readers only");
        assert_eq!(v.users("cond"), vec![0, 1]);
        assert!(v.read_inside("a", 1) && !v.read_inside("a", 2));
        let uses = |name: &str| v.key(name).map(|k| v.uses_at(k)).unwrap_or_default();
        assert_eq!(uses("a"), [(1, true), (2, false)]);
        assert_eq!(uses("cond"), [(0, false), (1, false)]);
        assert_eq!(uses("s"), []);
        assert_eq!(uses("nowhere"), []);
        // A node reading a name itself and from its subgraph: once.
        let both = GraphProto {
            node: vec![
                node(&[], &["a"]),
                with_graph(node(&["a", "a"], &["r"]), "body", then_branch.clone()),
            ],
            ..GraphProto::default()
        };
        let b = DefUse::of_graph(&both);
        assert_eq!(b.key("a").map(|k| b.uses_at(k)), Some(vec![(1, true)]));
        assert_eq!(b.users("a"), [1]);
        let inner = DefUse::of_graph(&then_branch);
        assert_eq!(names(inner.captured()), ["far", "a"]);
        assert_eq!(inner.users("b"), vec![1]);
        // The last use and the declaration by key are those of the lists.
        for (index, names) in [(&v, ["a", "cond", "s", "r"]), (&b, ["a", "r", "a", "a"])] {
            for name in names {
                let key = index.key(name).unwrap_or(Key(u32::MAX));
                let last = index.uses_at(key).last().map(|&(i, _)| i);
                assert_eq!(index.last_use_at(key), last, "{name}");
                assert_eq!(index.declared_at(key), index.declared(name), "{name}");
            }
        }
        assert_eq!(v.key("a").and_then(|k| v.last_use_at(k)), Some(2));
        assert_eq!(
            v.key("r").and_then(|k| v.declared_at(k)),
            Some(Declared::Output(0))
        );
        assert_eq!(v.last_use_at(Key(u32::MAX)), None);
    }
}
