//! The graph checker (see docs/checks.md for every diagnostic).

pub mod report;
pub mod schemas;
