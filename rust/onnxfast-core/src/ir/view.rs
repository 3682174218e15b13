//! A graph whose four long lists may be decode-on-touch lists: the main
//! graph of a lazily loaded model, seen without copying it into a
//! `GraphProto`. Its other fields are the graph's own (through `Deref`).

use std::ops::Deref;

use crate::decode::lazy::{GraphLists, LazyList, ListElement};
use crate::error::DecodeError;
use crate::proto::{GraphProto, NodeProto, SparseTensorProto, TensorProto, ValueInfoProto};

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
        }
    }

    /// `graph` (a lazily loaded model's main graph, its lists empty) with
    /// `lists`: initializers and value_info decoded now (in parallel) and
    /// kept by the lists; nodes decoded as they are read, or ahead of the
    /// reader by [`GraphView::read_nodes`]. Nodes that cannot be decoded
    /// end [`Seq::iter`]: check `lists.node.keep_all()` after reading.
    pub fn kept(graph: &'a GraphProto, lists: &'a GraphLists) -> Result<Self, DecodeError> {
        lists.initializer.keep_all()?;
        lists.value_info.keep_all()?;
        lists.sparse_initializer.keep_all()?;
        Ok(GraphView {
            graph,
            node: Seq::Kept(&lists.node),
            initializer: Seq::Kept(&lists.initializer),
            value_info: Seq::Kept(&lists.value_info),
            sparse_initializer: Seq::Kept(&lists.sparse_initializer),
        })
    }
}

impl GraphView<'_> {
    /// Runs `read` (which reads the nodes in order) while the thread pool
    /// decodes them ahead of it, then reports a node that could not be
    /// decoded (the reader met the end of the list there).
    pub fn read_nodes<R: Send>(&self, read: impl FnOnce() -> R + Send) -> Result<R, DecodeError> {
        match self.node {
            Seq::Slice(_) => Ok(read()),
            Seq::Kept(list) => {
                let next = std::sync::atomic::AtomicUsize::new(0);
                let ((), r) = rayon::join(|| list.decode_ahead(&next), read);
                list.keep_all()?;
                Ok(r)
            }
        }
    }
}

impl Deref for GraphView<'_> {
    type Target = GraphProto;
    fn deref(&self) -> &GraphProto {
        self.graph
    }
}
