//! The one varint reader of the decoder (the scan, the diagnosis and the
//! fast node decode all read through it).

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The buffer (or the message) ends inside it.
    Truncated,
    /// More than ten bytes, or a tenth byte above 1: it does not fit in 64
    /// bits. Holds the offset where it starts.
    Overflow(usize),
}

/// Reads a varint at `*pos`, which must stay below `end`; advances `*pos`
/// past it.
#[inline(always)]
pub fn read(buf: &[u8], pos: &mut usize, end: usize) -> Result<u64, VarintError> {
    let start = *pos;
    let end = end.min(buf.len());
    // Fast path: one byte.
    if start < end {
        let b = buf[start];
        if b < 0x80 {
            *pos = start + 1;
            return Ok(u64::from(b));
        }
    }
    let mut value: u64 = 0;
    let mut at = start;
    for i in 0..10 {
        if at >= end {
            return Err(VarintError::Truncated);
        }
        let byte = buf[at];
        at += 1;
        if i == 9 && byte > 1 {
            return Err(VarintError::Overflow(start));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            *pos = at;
            return Ok(value);
        }
    }
    Err(VarintError::Overflow(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_refuses() {
        let mut pos = 0;
        assert_eq!(read(&[0x96, 0x01], &mut pos, 2), Ok(150));
        assert_eq!(pos, 2);
        let mut pos = 0;
        assert_eq!(read(&[0x80], &mut pos, 1), Err(VarintError::Truncated));
        let mut pos = 0;
        assert_eq!(
            read(&[0xff; 11], &mut pos, 11),
            Err(VarintError::Overflow(0))
        );
        let mut pos = 0;
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(read(&max, &mut pos, 10), Ok(u64::MAX));
        // `end` bounds the read even inside a longer buffer.
        let mut pos = 0;
        assert_eq!(
            read(&[0x80, 0x01], &mut pos, 1),
            Err(VarintError::Truncated)
        );
    }
}
