//! Names as hash keys, compared inline instead of through libc's `memcmp`.
//!
//! The checker is mostly set lookups of short names ("t123", "Add", "").
//! `str == str` calls libc's `memcmp` for every comparison, and glibc picks
//! its AVX-512 (EVEX) variant on the Xeon machines this project runs on: per
//! call it measured ~6× slower than a plain compare (a schema lookup per node
//! of a 200,000-node graph: 37 ms with it, 6 ms without; see
//! benches/README.md). Keys wrapped in [`Name`] compare eight bytes at a time
//! in registers and never leave the function.

use std::hash::{Hash, Hasher};

mod table;

pub(crate) use table::{prefault, Lookahead, NameTable, PROBE_AHEAD};

/// Equal strings, compared without calling `memcmp`.
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// Equal byte strings, compared a word at a time without calling `memcmp`.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Short strings (most names) as two overlapping loads each: no loop
    // over their bytes.
    if n < 8 {
        return match n {
            4..=7 => {
                load::<4>(a, 0) == load::<4>(b, 0) && load::<4>(a, n - 4) == load::<4>(b, n - 4)
            }
            2..=3 => {
                load::<2>(a, 0) == load::<2>(b, 0) && load::<2>(a, n - 2) == load::<2>(b, n - 2)
            }
            1 => a[0] == b[0],
            _ => true,
        };
    }
    let mut x = a.chunks_exact(8);
    let mut y = b.chunks_exact(8);
    for (p, q) in (&mut x).zip(&mut y) {
        if load::<8>(p, 0) != load::<8>(q, 0) {
            return false;
        }
    }
    // The last eight bytes (overlapping the words before) cover the rest.
    load::<8>(a, n - 8) == load::<8>(b, n - 8)
}

/// `N` bytes of `s` from `at` as an integer's bytes (`at + N <= s.len()`
/// at every call above; out of range reads as zeros, never panics).
#[inline]
fn load<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    s.get(at..at + N)
        .and_then(|w| <[u8; N]>::try_from(w).ok())
        .unwrap_or([0; N])
}

/// A borrowed name usable as a hash key: hashes as the `str`, compares with
/// [`same`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name<'a>(pub &'a str);

impl PartialEq for Name<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        same(self.0, other.0)
    }
}

impl Eq for Name<'_> {}

impl Hash for Name<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

pub(crate) type NameSet<'a> = foldhash::HashSet<Name<'a>>;
pub(crate) type NameMap<'a, V> = foldhash::HashMap<Name<'a>, V>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_agrees_with_str_eq() {
        let words = [
            "",
            "a",
            "b",
            "ab",
            "abcdefg",
            "abcdefh",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "abcdefghj",
            "bbcdefghi",
            "a\0",
            "a\0\0",
            "naïve",
            "0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdeg",
        ];
        for a in words {
            for b in words {
                assert_eq!(same(a, b), a == b, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn same_finds_a_difference_at_every_position() {
        for n in 0..40 {
            let base: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_bytes(&base, &base.clone()));
            for at in 0..n {
                let mut other = base.clone();
                other[at] ^= 0x20;
                assert!(!same_bytes(&base, &other), "length {n}, byte {at}");
            }
            assert!(!same_bytes(&base, &base[..n.saturating_sub(1)]) || n == 0);
        }
    }

    #[test]
    fn sets_find_what_was_added() {
        let owned: Vec<String> = (0..1000).map(|i| format!("t{i}")).collect();
        let set: NameSet<'_> = owned.iter().map(|s| Name(s)).collect();
        for i in 0..1000 {
            let probe = format!("t{i}");
            assert!(set.contains(&Name(&probe)));
        }
        assert!(!set.contains(&Name("t1000")));
        assert!(!set.contains(&Name("")));
    }
}
