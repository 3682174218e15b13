//! Compact `__repr__`s: the set fields of a message, with long values cut.

use std::fmt::{Debug, Write as _};

const MAX_ITEMS: usize = 6;
const MAX_TEXT: usize = 60;

pub struct Repr {
    out: String,
    first: bool,
}

/// Quotes `text` as a Python-ish literal, cut to `MAX_TEXT` characters; control
/// characters are escaped (names come from untrusted files).
pub fn quote(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_TEXT).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    let mut out = String::with_capacity(cut.len() + 2);
    out.push('\'');
    for c in cut.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c) & 0xff);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

impl Repr {
    pub fn new(name: &str) -> Self {
        Repr {
            out: format!("{name}("),
            first: true,
        }
    }

    fn sep(&mut self, field: &str) {
        if !self.first {
            self.out.push_str(", ");
        }
        self.first = false;
        self.out.push_str(field.trim_start_matches("r#"));
        self.out.push('=');
    }

    pub fn scalar<T: Debug>(&mut self, field: &str, value: Option<&T>) {
        if let Some(v) = value {
            self.sep(field);
            let _ = write!(self.out, "{v:?}");
        }
    }

    pub fn text(&mut self, field: &str, value: Option<&str>) {
        if let Some(v) = value {
            if !v.is_empty() {
                self.sep(field);
                self.out.push_str(&quote(v));
            }
        }
    }

    pub fn texts<S: AsRef<str>>(&mut self, field: &str, values: &[S]) {
        self.list(field, values, |out, v| out.push_str(&quote(v.as_ref())));
    }

    pub fn nums<T: Debug>(&mut self, field: &str, values: &[T]) {
        self.list(field, values, |out, v| {
            let _ = write!(out, "{v:?}");
        });
    }

    /// `[a, b, … N more]`, at most `MAX_ITEMS` shown.
    fn list<T>(&mut self, field: &str, values: &[T], mut item: impl FnMut(&mut String, &T)) {
        if values.is_empty() {
            return;
        }
        self.sep(field);
        self.out.push('[');
        for (i, v) in values.iter().take(MAX_ITEMS).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            item(&mut self.out, v);
        }
        if values.len() > MAX_ITEMS {
            let _ = write!(self.out, ", … {} more", values.len() - MAX_ITEMS);
        }
        self.out.push(']');
    }

    pub fn raw(&mut self, field: &str, value: &str) {
        self.sep(field);
        self.out.push_str(value);
    }

    pub fn count(&mut self, field: &str, n: usize) {
        if n > 0 {
            self.sep(field);
            let _ = write!(self.out, "<{n}>");
        }
    }

    pub fn present(&mut self, field: &str, present: bool) {
        if present {
            self.sep(field);
            self.out.push('…');
        }
    }

    pub fn finish(mut self) -> String {
        self.out.push(')');
        self.out
    }
}
