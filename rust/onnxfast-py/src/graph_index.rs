//! Def-use index of a graph, built on first use and cached on the root.

use std::sync::Arc;

use onnxfast_core::proto;

use crate::root::{GraphIndex, Ptr};

pub fn index(graph: &Ptr<proto::GraphProto>) -> Arc<GraphIndex> {
    let key = graph.addr();
    let cache = &graph.root().graph_indexes;
    if let Ok(map) = cache.lock() {
        if let Some(found) = map.get(&key) {
            return Arc::clone(found);
        }
    }
    let mut built = GraphIndex::default();
    for (i, node) in graph.node.iter().enumerate() {
        for input in &node.input {
            if input.is_empty() {
                continue;
            }
            let users = built.consumers.entry(input.clone()).or_default();
            if users.last() != Some(&i) {
                users.push(i);
            }
        }
        for output in &node.output {
            if !output.is_empty() {
                // First producer wins; a second one is an SSA violation the
                // checker reports.
                built.producer.entry(output.clone()).or_insert(i);
            }
        }
    }
    let built = Arc::new(built);
    if let Ok(mut map) = cache.lock() {
        map.insert(key, Arc::clone(&built));
    }
    built
}
