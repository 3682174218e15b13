//! Findings of the checker and the inference engine: code, severity,
//! message and location; the codes themselves ([`codes`]).

pub mod codes;

use std::fmt;

/// How bad a finding is. Errors make a model invalid (they match
/// `onnx.checker` failures); warnings come from `strict` checks only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Longest untrusted name kept in a location or message (bytes).
pub const MAX_NAME: usize = 256;

/// Whether `c` is a character a terminal acts on or that changes how the
/// text around it reads: a control character (ESC, BEL, CR, line breaks),
/// a bidirectional mark, embedding, override or isolate, a zero-width
/// character, or a line or paragraph separator.
fn unsafe_to_print(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
        )
}

/// Makes an untrusted name safe to print: characters that drive a terminal
/// or reorder text (see [`unsafe_to_print`]) are escaped (`\u{1b}`) and it
/// is cut to [`MAX_NAME`] bytes (on a character boundary).
pub fn clean(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_NAME) + 2);
    for c in name.chars() {
        if out.len() >= MAX_NAME {
            out.push('…');
            break;
        }
        if unsafe_to_print(c) {
            use fmt::Write as _;
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// One step of a location path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Model,
    Graph(String),
    Node {
        index: usize,
        name: String,
        op_type: String,
    },
    Function {
        domain: String,
        name: String,
    },
    TrainingInfo(usize),
    /// A named item of a list field: `initializer[3] 'w'`, `input[1] 'x'`.
    Item {
        field: &'static str,
        index: usize,
        name: String,
    },
    /// An attribute of a node: `attribute 'axis'`.
    Attribute(String),
    /// A plain field: `ir_version`, `opset_import`.
    Field(&'static str),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Model => write!(f, "model"),
            Step::Graph(name) => write!(f, "graph '{}'", clean(name)),
            Step::Node {
                index,
                name,
                op_type,
            } => {
                if name.is_empty() {
                    write!(f, "node[{index}] ({})", clean(op_type))
                } else {
                    write!(f, "node[{index}] '{}' ({})", clean(name), clean(op_type))
                }
            }
            Step::Function { domain, name } => {
                if domain.is_empty() {
                    write!(f, "function '{}'", clean(name))
                } else {
                    write!(f, "function '{}::{}'", clean(domain), clean(name))
                }
            }
            Step::TrainingInfo(i) => write!(f, "training_info[{i}]"),
            Step::Item { field, index, name } => {
                if name.is_empty() {
                    write!(f, "{field}[{index}]")
                } else {
                    write!(f, "{field}[{index}] '{}'", clean(name))
                }
            }
            Step::Attribute(name) => write!(f, "attribute '{}'", clean(name)),
            Step::Field(name) => write!(f, "{name}"),
        }
    }
}

/// Where a finding is: a path from the model down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location(pub Vec<Step>);

impl Location {
    pub fn child(&self, step: Step) -> Location {
        let mut steps = self.0.clone();
        steps.push(step);
        Location(steps)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" › ")?;
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable identifier (see docs/checks.md), e.g. `E301`.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub location: Location,
    /// A cheap hint (`did you mean 'w_21'?`), when there is one.
    pub suggestion: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message
        )?;
        if !self.location.0.is_empty() {
            write!(f, "\n  --> {}", self.location)?;
        }
        if let Some(s) = &self.suggestion {
            write!(f, "\n  = help: {s}")?;
        }
        Ok(())
    }
}

/// How many findings of each severity, kept or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub errors: u64,
    pub warnings: u64,
}

impl Counts {
    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
    }

    pub fn merge(&mut self, other: Counts) {
        self.errors += other.errors;
        self.warnings += other.warnings;
    }

    pub fn total(&self) -> u64 {
        self.errors + self.warnings
    }
}

/// Everything the checker found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The findings kept (at most `CheckOptions::max_diagnostics`).
    pub diagnostics: Vec<Diagnostic>,
    /// Findings beyond `CheckOptions::max_diagnostics`, counted but not kept.
    pub omitted: u64,
    /// Every finding by severity, kept or not: the verdict comes from these.
    pub counts: Counts,
}

impl Report {
    /// True when there is no error (warnings allowed), counting the findings
    /// that were not kept.
    pub fn ok(&self) -> bool {
        self.counts.errors == 0
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }
}

/// Edit distance with adjacent transpositions (optimal string alignment),
/// or `None` when above `max` (names longer than 64 characters are skipped).
pub fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max || a.len() > 64 || b.len() > 64 {
        return None;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    let dist = d[a.len() * w + b.len()];
    (dist <= max).then_some(dist)
}

/// The closest of `candidates` to `name`, if close enough to be a typo.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let max = (name.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.is_empty() {
            continue;
        }
        if let Some(d) = edit_distance(name, c, max) {
            if best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
                best = Some((d, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_escapes_what_drives_a_terminal_or_reorders_text() {
        let hostile = "a\u{1b}[2J\u{7}\r\nb\u{202e}c\u{2066}d\u{200b}e\u{feff}é";
        assert_eq!(
            clean(hostile),
            "a\\u{1b}[2J\\u{7}\\u{d}\\u{a}b\\u{202e}c\\u{2066}d\\u{200b}e\\u{feff}é"
        );
        let long = "x".repeat(MAX_NAME + 10);
        assert_eq!(clean(&long), format!("{}…", "x".repeat(MAX_NAME)));
    }
}
