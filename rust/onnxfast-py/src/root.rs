//! Ownership of a decoded message tree and pointers into it.
//!
//! A loaded file becomes one [`Root`]: the source buffer (a memory map or the
//! caller's `bytes`) plus the decoded prost tree, whose bytes fields are
//! slices of that buffer. Python objects hold a [`Ptr`]: an `Arc` of the root
//! and a pointer to one message inside it. The tree is never mutated after
//! the root is built, so these pointers stay valid as long as the `Arc` lives.

use std::collections::HashMap;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use std::borrow::Cow;

use onnxfast_core::decode::lazy::GraphLists;
use onnxfast_core::error::DecodeError;
use onnxfast_core::external::ExternalStore;
use onnxfast_core::proto;
use onnxfast_core::Bytes;

/// The top-level message of a loaded file (one per root; size differences
/// between variants do not matter).
#[allow(clippy::large_enum_variant)]
pub enum RootMessage {
    Model(proto::ModelProto),
    Tensor(proto::TensorProto),
    Sequence(proto::SequenceProto),
    Map(proto::MapProto),
    Optional(proto::OptionalProto),
}

pub struct Root {
    /// The buffer the tree was decoded from (keeps every slice alive).
    pub source: Bytes,
    /// Releases pages of `source` when it is a file map (after a writer
    /// has copied them out).
    pub source_pages: Option<onnxfast_core::decode::source::PageReleaser>,
    pub message: RootMessage,
    /// Resolves and reads the external data of this model.
    pub external: ExternalStore,
    /// False when the tree was changed after decoding (external data made
    /// inline): `source` then no longer serializes it.
    pub source_is_exact: bool,
    /// Lazily built value indexes, keyed by the graph's address.
    pub graph_indexes: Mutex<HashMap<usize, Arc<onnxfast_core::ir::DefUse>>>,
    /// Where each subgraph met so far sits below the main graph (`None`:
    /// not below it), keyed by the graph's address.
    pub graph_steps: Mutex<HashMap<usize, Option<crate::graph_index::Steps>>>,
    /// Every value's type after inference, inferred on first use.
    pub types: OnceLock<crate::graph_index::TypeStore>,
    /// For a model loaded for decode on touch: its main graph's node,
    /// initializer, value_info and sparse_initializer lists (the graph in
    /// `message` holds its other fields and leaves those empty).
    pub lists: Option<GraphLists>,
    /// How `types` are inferred: as `onnxfast.infer_shapes` was asked to
    /// for the model it returned (`data_prop`, `symbolic`, `check_type`),
    /// so its values read as its `value_info` does; the defaults otherwise.
    pub flags: crate::shapes::Flags,
}

impl Drop for Root {
    fn drop(&mut self) {
        // A big tree takes tens of milliseconds to free; do it off this thread.
        if let Some(lists) = self.lists.take() {
            if lists.node.len() >= onnxfast_core::decode::PARALLEL_MIN {
                onnxfast_core::decode::drop_in_background(lists);
            } else {
                drop(lists);
            }
        }
        if let RootMessage::Model(model) = &mut self.message {
            if model
                .graph
                .as_ref()
                .is_some_and(|g| g.node.len() >= onnxfast_core::decode::PARALLEL_MIN)
            {
                onnxfast_core::decode::drop_in_background(std::mem::take(model));
            }
        }
    }
}

impl Root {
    pub fn new(
        source: Bytes,
        source_pages: Option<onnxfast_core::decode::source::PageReleaser>,
        message: RootMessage,
        external: ExternalStore,
        source_is_exact: bool,
        lists: Option<GraphLists>,
    ) -> Arc<Root> {
        Self::with_flags(
            source,
            source_pages,
            message,
            external,
            source_is_exact,
            lists,
            crate::shapes::Flags::default(),
        )
    }

    /// [`Root::new`], its values' types inferred with `flags`.
    pub fn with_flags(
        source: Bytes,
        source_pages: Option<onnxfast_core::decode::source::PageReleaser>,
        message: RootMessage,
        external: ExternalStore,
        source_is_exact: bool,
        lists: Option<GraphLists>,
        flags: crate::shapes::Flags,
    ) -> Arc<Root> {
        Arc::new(Root {
            source,
            source_pages,
            message,
            external,
            source_is_exact,
            graph_indexes: Mutex::new(HashMap::new()),
            graph_steps: Mutex::new(HashMap::new()),
            types: OnceLock::new(),
            lists,
            flags,
        })
    }

    /// The decode-on-touch lists of `graph`, when it is this root's main
    /// graph loaded that way.
    pub fn lists_of(&self, graph: &proto::GraphProto) -> Option<&GraphLists> {
        let lists = self.lists.as_ref()?;
        match &self.message {
            RootMessage::Model(m) => m
                .graph
                .as_ref()
                .filter(|g| std::ptr::eq(*g, graph))
                .map(|_| lists),
            _ => None,
        }
    }

    /// `graph` with every element of its lists (decoded now when it is the
    /// decode-on-touch main graph), for work that needs them all at once.
    pub fn full_graph<'a>(
        &self,
        graph: &'a proto::GraphProto,
    ) -> Result<Cow<'a, proto::GraphProto>, DecodeError> {
        match self.lists_of(graph) {
            Some(lists) => {
                let mut full = graph.clone();
                lists.fill(&mut full)?;
                Ok(Cow::Owned(full))
            }
            None => Ok(Cow::Borrowed(graph)),
        }
    }

    /// `model` whole (see [`Root::full_graph`]).
    pub fn full_model<'a>(
        &self,
        model: &'a proto::ModelProto,
    ) -> Result<Cow<'a, proto::ModelProto>, DecodeError> {
        match model.graph.as_ref().and_then(|g| self.lists_of(g)) {
            Some(lists) => Ok(Cow::Owned(lists.whole_model(model)?)),
            None => Ok(Cow::Borrowed(model)),
        }
    }
}

/// A shared pointer to a message inside a [`Root`].
pub struct Ptr<T: 'static> {
    root: Arc<Root>,
    ptr: NonNull<T>,
}

// SAFETY: a `Ptr<T>` only hands out `&T`. The pointee lives inside the `Arc`'d
// root, which is immutable after construction and kept alive by `root`, so
// sharing or sending the pointer is as safe as sharing `&T`, which requires
// `T: Sync`.
unsafe impl<T: Sync> Send for Ptr<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Ptr<T> {}

impl<T> Clone for Ptr<T> {
    fn clone(&self) -> Self {
        Ptr {
            root: Arc::clone(&self.root),
            ptr: self.ptr,
        }
    }
}

impl<T> Ptr<T> {
    /// Points at something inside `root` (the closure's signature ties the
    /// reference to the root's lifetime).
    pub fn new(root: Arc<Root>, select: impl for<'a> FnOnce(&'a Root) -> &'a T) -> Self {
        let ptr = NonNull::from(select(root.as_ref()));
        Ptr { root, ptr }
    }

    /// Like [`Ptr::new`], when the root may not hold the wanted message.
    pub fn try_new(
        root: Arc<Root>,
        select: impl for<'a> FnOnce(&'a Root) -> Option<&'a T>,
    ) -> Option<Self> {
        let ptr = NonNull::from(select(root.as_ref())?);
        Some(Ptr { root, ptr })
    }

    /// Points at a part of the current pointee.
    pub fn project<U>(&self, select: impl for<'a> FnOnce(&'a T) -> &'a U) -> Ptr<U> {
        Ptr {
            root: Arc::clone(&self.root),
            ptr: NonNull::from(select(self)),
        }
    }

    /// Like [`Ptr::project`], for optional parts.
    pub fn try_project<U>(
        &self,
        select: impl for<'a> FnOnce(&'a T) -> Option<&'a U>,
    ) -> Option<Ptr<U>> {
        select(self).map(|target| Ptr {
            root: Arc::clone(&self.root),
            ptr: NonNull::from(target),
        })
    }

    pub fn root(&self) -> &Arc<Root> {
        &self.root
    }

    /// Stable identity of the pointee (used as a cache key).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl<T> Deref for Ptr<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: `ptr` was derived from a reference into `root` (see `new`
        // and `project`), the root is never mutated, and `self.root` keeps
        // it alive for at least as long as `self`.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: 'static> Ptr<T> {
    /// True when this pointer designates the root message itself (whose
    /// serialized form is the whole source buffer).
    pub fn is_root(&self) -> bool {
        use std::any::{Any, TypeId};
        let (root_type, root_addr) = match &self.root.message {
            RootMessage::Model(m) => (m.type_id(), m as *const _ as usize),
            RootMessage::Tensor(m) => (m.type_id(), m as *const _ as usize),
            RootMessage::Sequence(m) => (m.type_id(), m as *const _ as usize),
            RootMessage::Map(m) => (m.type_id(), m as *const _ as usize),
            RootMessage::Optional(m) => (m.type_id(), m as *const _ as usize),
        };
        self.root.source_is_exact && root_type == TypeId::of::<T>() && root_addr == self.addr()
    }
}
