//! Def-use index of a graph (onnxfast-core's `ir::DefUse`), built on first
//! use and cached on the root.

use std::sync::Arc;

use onnxfast_core::error::DecodeError;
use onnxfast_core::ir::DefUse;
use onnxfast_core::proto;

use crate::root::Ptr;

pub fn index(graph: &Ptr<proto::GraphProto>) -> Result<Arc<DefUse>, DecodeError> {
    let key = graph.addr();
    let cache = &graph.root().graph_indexes;
    if let Ok(map) = cache.lock() {
        if let Some(found) = map.get(&key) {
            return Ok(Arc::clone(found));
        }
    }
    let built = match graph.root().lists_of(graph) {
        // A main graph decoded on touch: its nodes are read once, not kept.
        Some(lists) => {
            let mut index = DefUse::default();
            for i in 0..lists.node.len() {
                match lists.node.cached(i) {
                    Some(n) => index.add(i, n),
                    None => index.add(i, &lists.node.decode(i)?),
                }
            }
            index
        }
        None => DefUse::build(&graph.node),
    };
    let built = Arc::new(built);
    if let Ok(mut map) = cache.lock() {
        map.insert(key, Arc::clone(&built));
    }
    Ok(built)
}
