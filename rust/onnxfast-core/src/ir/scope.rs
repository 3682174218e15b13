//! Lexical scopes of names: a graph sees its own names and those its
//! enclosing graphs had defined when the node holding it was reached.

use crate::names::NameTable;

/// Lexical scopes, innermost last: the names each enclosing graph had
/// defined when the node holding the current subgraph was reached.
#[derive(Default)]
pub struct Scope<'a> {
    levels: Vec<NameTable<'a, ()>>,
}

impl<'a> Scope<'a> {
    pub fn push(&mut self) {
        self.push_with_capacity(0);
    }

    pub fn push_with_capacity(&mut self, capacity: usize) {
        self.levels.push(NameTable::with_capacity(capacity));
    }

    /// Room for `more` names in the innermost level.
    pub fn reserve(&mut self, more: usize) {
        if let Some(level) = self.levels.last_mut() {
            level.reserve(more);
        }
    }

    pub fn pop(&mut self) {
        self.levels.pop();
    }

    /// Adds to the innermost level; false if it was already there.
    pub fn add(&mut self, name: &'a str) -> bool {
        match self.levels.last_mut() {
            Some(level) => level.insert(name, ()),
            None => true,
        }
    }

    /// Adds to the innermost level: `Ok(index)` of the new entry, or
    /// `Err(index)` of the entry the name already had there (entries are
    /// numbered in the order they were added).
    pub fn add_or_index(&mut self, name: &'a str) -> Result<usize, usize> {
        match self.levels.last_mut() {
            Some(level) => level.insert_or_index(name, || ()),
            None => Ok(0),
        }
    }

    /// Entries made in the innermost level so far: the index of the next.
    pub fn innermost_made(&self) -> usize {
        self.levels.last().map_or(0, |l| l.entries_made())
    }

    /// Removes from the innermost level.
    pub fn remove(&mut self, name: &'a str) {
        if let Some(level) = self.levels.last_mut() {
            level.remove(name);
        }
    }

    /// Starts loading what a lookup of `name` in the innermost level reads
    /// (see [`NameTable::prefetch`]).
    pub fn prefetch(&self, name: &str) {
        if let Some(level) = self.levels.last() {
            level.prefetch(name);
        }
    }

    pub fn in_innermost(&self, name: &str) -> bool {
        self.levels.last().is_some_and(|l| l.contains(name))
    }

    /// In an enclosing level (not the innermost)?
    pub fn in_outer(&self, name: &str) -> bool {
        let n = self.levels.len().saturating_sub(1);
        self.levels[..n].iter().rev().any(|l| l.contains(name))
    }

    pub fn in_any(&self, name: &str) -> bool {
        self.levels.iter().rev().any(|l| l.contains(name))
    }

    /// Every visible name (for suggestions).
    pub fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.levels.iter().flat_map(|l| l.iter().map(|(n, ())| n))
    }
}
