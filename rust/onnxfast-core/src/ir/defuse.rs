//! Def-use index of one graph's nodes: which node produces each value and
//! which nodes read it. One implementation for the checker (hints on
//! undefined inputs), the inference engine and the binding
//! (`Graph.producer` / `Graph.consumers`).
//!
//! Keys are owned [`Str`]s (24 bytes inline, so no allocation for most
//! names), which lets the binding cache an index beside the tree it indexes.

use foldhash::HashMap;

use crate::proto::{NodeProto, Str};

/// Producer and consumers of every value named by a list of nodes.
#[derive(Debug, Default, Clone)]
pub struct DefUse {
    producer: HashMap<Str, usize>,
    consumers: HashMap<Str, Vec<usize>>,
}

impl DefUse {
    /// Indexes `nodes` (a graph's or a function's). Empty names (omitted
    /// optional inputs and outputs) are not values and are skipped. When a
    /// name is produced twice (an SSA violation the checker reports), the
    /// first producer is kept. A node reading a value twice is one consumer.
    pub fn build(nodes: &[NodeProto]) -> DefUse {
        let mut out = DefUse::default();
        let outputs: usize = nodes.iter().map(|n| n.output.len()).sum();
        out.producer.reserve(outputs);
        for (i, node) in nodes.iter().enumerate() {
            out.add(i, node);
        }
        out
    }

    /// Adds node `i` (nodes must be added in order).
    pub fn add(&mut self, i: usize, node: &NodeProto) {
        for input in &node.input {
            if input.is_empty() {
                continue;
            }
            let users = self.consumers.entry(input.clone()).or_default();
            if users.last() != Some(&i) {
                users.push(i);
            }
        }
        for output in &node.output {
            if !output.is_empty() {
                self.producer.entry(output.clone()).or_insert(i);
            }
        }
    }

    /// Index of the node producing `name`, if a node of this list does.
    pub fn producer(&self, name: &str) -> Option<usize> {
        self.producer.get(name).copied()
    }

    /// Indexes of the nodes reading `name`, in node order.
    pub fn consumers(&self, name: &str) -> &[usize] {
        self.consumers.get(name).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            input: inputs.iter().map(|s| Str::from(*s)).collect(),
            output: outputs.iter().map(|s| Str::from(*s)).collect(),
            ..NodeProto::default()
        }
    }

    #[test]
    fn producers_and_consumers() {
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
            &[0],
            "a node reading twice is listed once"
        );
        assert_eq!(du.consumers("a"), &[1, 2]);
        assert_eq!(du.consumers(""), &[] as &[usize]);
    }
}
