//! Def-use index of a graph (onnxfast-core's `ir::DefUse`), built on first
//! use and cached on the root.

use std::sync::Arc;

use onnxfast_core::ir::DefUse;
use onnxfast_core::proto;

use crate::root::Ptr;

pub fn index(graph: &Ptr<proto::GraphProto>) -> Arc<DefUse> {
    let key = graph.addr();
    let cache = &graph.root().graph_indexes;
    if let Ok(map) = cache.lock() {
        if let Some(found) = map.get(&key) {
            return Arc::clone(found);
        }
    }
    let built = Arc::new(DefUse::build(&graph.node));
    if let Ok(mut map) = cache.lock() {
        map.insert(key, Arc::clone(&built));
    }
    built
}
