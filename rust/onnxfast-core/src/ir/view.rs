//! A graph whose four long lists may be decode-on-touch lists: the main
//! graph of a lazily loaded model, seen without copying it into a
//! `GraphProto`. Its other fields are the graph's own (through `Deref`).

use std::ops::Deref;

use crate::decode::lazy::{GraphLists, LazyList, ListElement};
use crate::error::DecodeError;
use crate::proto::{GraphProto, NodeProto, SparseTensorProto, TensorProto, ValueInfoProto};

/// The elements of one list: a slice, or a decode-on-touch list whose
/// elements are all kept (see [`GraphView::kept`]).
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

    /// Element `i` (for a kept list: `None` if it was not decoded).
    pub fn get(&self, i: usize) -> Option<&'a T> {
        match *self {
            Seq::Slice(s) => s.get(i),
            Seq::Kept(l) => l.cached(i),
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a T> + 'a {
        let (slice, kept) = match *self {
            Seq::Slice(s) => (Some(s), None),
            Seq::Kept(l) => (None, Some(l)),
        };
        slice.into_iter().flatten().chain(
            kept.into_iter()
                .flat_map(|l| (0..l.len()).filter_map(move |i| l.cached(i))),
        )
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
    /// `lists`, every element of which is decoded now (in parallel) and
    /// kept by the lists.
    pub fn kept(graph: &'a GraphProto, lists: &'a GraphLists) -> Result<Self, DecodeError> {
        lists.node.keep_all()?;
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

impl Deref for GraphView<'_> {
    type Target = GraphProto;
    fn deref(&self) -> &GraphProto {
        self.graph
    }
}
