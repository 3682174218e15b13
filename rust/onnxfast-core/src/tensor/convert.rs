//! Element conversions: unpacking sub-byte types and decoding every
//! small float type (and the packed integers) straight to `f32` / `i8`.
//!
//! Values follow ml_dtypes (and numpy for float16) bit for bit, NaNs
//! included: every float8/float4/float6/e8m0 NaN becomes the canonical quiet
//! NaN with the code's sign; float16 and bfloat16 NaNs keep their payload.
//! Large inputs are split across threads.

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::tensor::ElemType;

/// Elements per parallel chunk (a multiple of 4, so packed 2-, 4- and 6-bit
/// groups never straddle chunks).
const CHUNK: usize = 1 << 16;

/// Inputs smaller than this are converted on the calling thread.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 18;

/// Unpacks `count = out.len()` sub-byte elements from `packed` (onnx's
/// layout: low bits first; 4-bit two a byte, 2-bit four a byte, 6-bit four
/// per three bytes) into one byte each. `packed` must hold enough bytes.
pub fn unpack_bits(elem: &ElemType, packed: &[u8], out: &mut [u8]) {
    match elem.bits {
        4 => {
            for (i, dst) in out.iter_mut().enumerate() {
                let byte = packed.get(i / 2).copied().unwrap_or(0);
                *dst = if i % 2 == 0 { byte & 0x0f } else { byte >> 4 };
            }
        }
        2 => {
            for (i, dst) in out.iter_mut().enumerate() {
                let byte = packed.get(i / 4).copied().unwrap_or(0);
                *dst = (byte >> (2 * (i % 4))) & 0x03;
            }
        }
        6 => {
            for (g, group) in out.chunks_mut(4).enumerate() {
                for (dst, v) in group.iter_mut().zip(six_bit_group(packed, g)) {
                    *dst = v;
                }
            }
        }
        _ => {
            let n = out.len().min(packed.len());
            out[..n].copy_from_slice(&packed[..n]);
        }
    }
}

/// The four 6-bit codes of group `g` (three bytes, low bits first); missing
/// bytes of a final partial group read as zero.
#[inline]
fn six_bit_group(packed: &[u8], g: usize) -> [u8; 4] {
    let at = |k: usize| packed.get(3 * g + k).copied().unwrap_or(0);
    let (b0, b1, b2) = (at(0), at(1), at(2));
    [
        b0 & 0x3f,
        (b0 >> 6) | ((b1 & 0x0f) << 2),
        (b1 >> 4) | ((b2 & 0x03) << 4),
        b2 >> 2,
    ]
}

/// A small IEEE-style float format: sign, `exp` exponent bits, `man`
/// mantissa bits, exponent bias, and how it spells infinity and NaN.
#[derive(Clone, Copy)]
struct MiniFloat {
    exp: u32,
    man: u32,
    bias: i32,
    /// All-ones exponent with zero mantissa is infinity (IEEE, e5m2).
    ieee_specials: bool,
    /// Sign bit set and everything else zero is the one NaN (the "fnuz" types).
    nan_is_negative_zero: bool,
    /// All bits but the sign set is NaN (e4m3fn).
    nan_is_all_ones: bool,
}

const QUIET_NAN: u32 = 0x7fc0_0000;

impl MiniFloat {
    /// Decodes one code (its low 1 + exp + man bits) to f32 bits.
    fn decode(self, code: u32) -> u32 {
        let total = 1 + self.exp + self.man;
        let sign = (code >> (total - 1)) & 1;
        let sign_bit = sign << 31;
        let e = (code >> self.man) & ((1 << self.exp) - 1);
        let m = code & ((1 << self.man) - 1);
        let exp_all_ones = e == (1 << self.exp) - 1;
        if self.nan_is_negative_zero && sign == 1 && e == 0 && m == 0 {
            return sign_bit | QUIET_NAN;
        }
        if self.nan_is_all_ones && exp_all_ones && m == (1 << self.man) - 1 {
            return sign_bit | QUIET_NAN;
        }
        if self.ieee_specials && exp_all_ones {
            return if m == 0 {
                sign_bit | 0x7f80_0000
            } else {
                sign_bit | QUIET_NAN
            };
        }
        // value = m * 2^(1 - bias - man) for subnormals, (2^man + m) * 2^(e - bias - man) otherwise;
        // exact in f32 for every format here.
        let (significand, exponent) = if e == 0 {
            (m, 1 - self.bias - self.man as i32)
        } else {
            ((1 << self.man) | m, e as i32 - self.bias - self.man as i32)
        };
        let magnitude = significand as f32 * 2f32.powi(exponent);
        sign_bit | magnitude.to_bits()
    }
}

const E4M3FN: MiniFloat = MiniFloat {
    exp: 4,
    man: 3,
    bias: 7,
    ieee_specials: false,
    nan_is_negative_zero: false,
    nan_is_all_ones: true,
};
const E4M3FNUZ: MiniFloat = MiniFloat {
    exp: 4,
    man: 3,
    bias: 8,
    ieee_specials: false,
    nan_is_negative_zero: true,
    nan_is_all_ones: false,
};
const E5M2: MiniFloat = MiniFloat {
    exp: 5,
    man: 2,
    bias: 15,
    ieee_specials: true,
    nan_is_negative_zero: false,
    nan_is_all_ones: false,
};
const E5M2FNUZ: MiniFloat = MiniFloat {
    exp: 5,
    man: 2,
    bias: 16,
    ieee_specials: false,
    nan_is_negative_zero: true,
    nan_is_all_ones: false,
};
const E2M1: MiniFloat = MiniFloat {
    exp: 2,
    man: 1,
    bias: 1,
    ieee_specials: false,
    nan_is_negative_zero: false,
    nan_is_all_ones: false,
};
const E2M3: MiniFloat = MiniFloat {
    exp: 2,
    man: 3,
    bias: 1,
    ieee_specials: false,
    nan_is_negative_zero: false,
    nan_is_all_ones: false,
};
const E3M2: MiniFloat = MiniFloat {
    exp: 3,
    man: 2,
    bias: 3,
    ieee_specials: false,
    nan_is_negative_zero: false,
    nan_is_all_ones: false,
};

/// float8_e8m0fnu: an unsigned power of two, 2^(code - 127); 0xFF is NaN.
fn e8m0(code: u32) -> u32 {
    if code == 0xff {
        QUIET_NAN
    } else {
        2f32.powi(code as i32 - 127).to_bits()
    }
}

/// float16 to float32 bits, as numpy converts (NaN payloads kept, not quieted).
#[inline]
pub fn f16_to_f32_bits(h: u16) -> u32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else if exp == 0 {
        // zero or subnormal: man * 2^-24, exact in f32.
        sign | (man as f32 * (1.0 / 16_777_216.0)).to_bits()
    } else {
        sign | ((exp + 112) << 23) | (man << 13)
    }
}

/// Lookup table of f32 bits for every code of an 8-bit (or narrower) type.
fn table(elem: &ElemType) -> Option<&'static [u32; 256]> {
    static TABLES: OnceLock<Vec<[u32; 256]>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let make = |f: &dyn Fn(u32) -> u32| {
            let mut t = [0u32; 256];
            for (code, slot) in t.iter_mut().enumerate() {
                *slot = f(code as u32);
            }
            t
        };
        let int = |bits: u32, signed: bool| {
            move |code: u32| {
                let v = code & ((1 << bits) - 1);
                let v = if signed && v >= 1 << (bits - 1) {
                    v as i32 - (1 << bits)
                } else {
                    v as i32
                };
                (v as f32).to_bits()
            }
        };
        vec![
            make(&|c| E4M3FN.decode(c)),
            make(&|c| E4M3FNUZ.decode(c)),
            make(&|c| E5M2.decode(c)),
            make(&|c| E5M2FNUZ.decode(c)),
            make(&|c| E2M1.decode(c & 0x0f)),
            make(&e8m0),
            make(&|c| E2M3.decode(c & 0x3f)),
            make(&|c| E3M2.decode(c & 0x3f)),
            make(&int(4, false)),
            make(&int(4, true)),
            make(&int(2, false)),
            make(&int(2, true)),
        ]
    });
    let index = match elem.code {
        17 => 0,
        18 => 1,
        19 => 2,
        20 => 3,
        23 => 4,
        24 => 5,
        27 => 6,
        28 => 7,
        21 => 8,
        22 => 9,
        25 => 10,
        26 => 11,
        _ => return None,
    };
    tables.get(index)
}

/// [`table`] as f32 values.
fn table_f32(elem: &ElemType) -> Option<&'static [f32; 256]> {
    static TABLES: OnceLock<Vec<[f32; 256]>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        (17..=28)
            .map(|code| {
                let mut t = [0f32; 256];
                if let Some(bits) = crate::tensor::elem_type(code).and_then(table) {
                    for (dst, b) in t.iter_mut().zip(bits) {
                        *dst = f32::from_bits(*b);
                    }
                }
                t
            })
            .collect()
    });
    table(elem)?;
    tables.get(usize::try_from(elem.code - 17).ok()?)
}

/// [`table`] as i8 values (packed integer types only).
fn table_i8(elem: &ElemType) -> Option<&'static [i8; 256]> {
    static TABLES: OnceLock<Vec<[i8; 256]>> = OnceLock::new();
    if !elem.packed_int {
        return None;
    }
    let tables = TABLES.get_or_init(|| {
        (17..=28)
            .map(|code| {
                let mut t = [0i8; 256];
                if let Some(bits) = crate::tensor::elem_type(code).and_then(table) {
                    for (dst, b) in t.iter_mut().zip(bits) {
                        *dst = f32::from_bits(*b) as i8;
                    }
                }
                t
            })
            .collect()
    });
    tables.get(usize::try_from(elem.code - 17).ok()?)
}

/// Can `elem` go through [`to_f32`]?
pub fn converts_to_f32(elem: &ElemType) -> bool {
    elem.small_float || elem.packed_int || elem.code == 1
}

/// Can `elem` go through [`to_i8`]?
pub fn converts_to_i8(elem: &ElemType) -> bool {
    elem.packed_int
}

/// Converts `out.len()` elements to f32. `src` is the stored form: packed
/// bytes for the 4-/2-/6-bit types when `packed`, otherwise numpy layout
/// (one byte per element for 8-bit and unpacked sub-byte types, two
/// little-endian bytes for float16/bfloat16, four for float32).
pub fn to_f32(elem: &ElemType, src: &[u8], packed: bool, out: &mut [f32]) {
    fill_in_chunks(out, |start, out| {
        convert_f32_range(elem, src, packed, start, out)
    });
}

/// Runs `run(start, chunk)` over `out` in chunks of [`CHUNK`] elements
/// (`start`: the chunk's first index), on several threads for large outputs.
fn fill_in_chunks<T: Send>(out: &mut [T], run: impl Fn(usize, &mut [T]) + Sync) {
    if out.len() < PARALLEL_MIN_ELEMENTS {
        run(0, out);
    } else {
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| run(i * CHUNK, chunk));
    }
}

fn convert_f32_range(elem: &ElemType, src: &[u8], packed: bool, start: usize, out: &mut [f32]) {
    match elem.code {
        1 => {
            let bytes = src.get(start * 4..).unwrap_or(&[]);
            for (dst, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *dst = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        10 => f16_to_f32(src.get(start * 2..).unwrap_or(&[]), out),
        16 => {
            let bytes = src.get(start * 2..).unwrap_or(&[]);
            for (dst, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *dst = f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16);
            }
        }
        _ => {
            let Some(lut) = table_f32(elem) else {
                return;
            };
            decode_codes(elem, src, packed, start, out, lut);
        }
    }
}

/// float16 (little-endian pairs in `src`) to f32, as many as both hold: the
/// CPU's half-precision conversion (F16C) where it has one, the portable
/// loop elsewhere and for the tail.
fn f16_to_f32(src: &[u8], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    let done = if std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("avx2")
    {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { f16c::f16_to_f32(src, out) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    f16_to_f32_portable(
        src.get(done * 2..).unwrap_or(&[]),
        out.get_mut(done..).unwrap_or(&mut []),
    );
}

fn f16_to_f32_portable(src: &[u8], out: &mut [f32]) {
    for (dst, b) in out.iter_mut().zip(src.chunks_exact(2)) {
        *dst = f32::from_bits(f16_to_f32_bits(u16::from_le_bytes([b[0], b[1]])));
    }
}

#[cfg(target_arch = "x86_64")]
mod f16c {
    use std::arch::x86_64::{
        __m128i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castsi256_ps, _mm256_cvtepi16_epi32,
        _mm256_cvtepu16_epi32, _mm256_cvtph_ps, _mm256_or_si256, _mm256_set1_epi32,
        _mm256_slli_epi32, _mm256_storeu_ps, _mm_and_si128, _mm_cmpeq_epi16, _mm_loadu_si128,
        _mm_set1_epi16,
    };

    /// Converts whole groups of eight float16 values with `vcvtph2ps` and
    /// returns how many it converted. The instruction quiets signalling
    /// NaNs where numpy keeps their bits, so lanes with an all-ones
    /// exponent (infinities, NaNs) take the bits numpy gives, computed
    /// alongside and blended in, without a branch.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn f16_to_f32(src: &[u8], out: &mut [f32]) -> usize {
        let n = (src.len() / 2).min(out.len()) & !7;
        let exponent = _mm_set1_epi16(0x7c00);
        let mantissa = _mm256_set1_epi32(0x007f_e000);
        let sign = _mm256_set1_epi32(i32::MIN);
        let all_ones = _mm256_set1_epi32(0x7f80_0000);
        let mut i = 0;
        while i < n {
            // SAFETY: i + 8 <= n <= src.len() / 2, so the 16 bytes read are in `src`.
            let halves = unsafe { _mm_loadu_si128(src.as_ptr().add(i * 2).cast::<__m128i>()) };
            let special = _mm_cmpeq_epi16(_mm_and_si128(halves, exponent), exponent);
            let wide = _mm256_cvtepu16_epi32(halves);
            let kept = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_slli_epi32::<13>(wide), mantissa),
                    _mm256_and_si256(_mm256_slli_epi32::<16>(wide), sign),
                ),
                all_ones,
            );
            let value = _mm256_blendv_ps(
                _mm256_cvtph_ps(halves),
                _mm256_castsi256_ps(kept),
                _mm256_castsi256_ps(_mm256_cvtepi16_epi32(special)),
            );
            // SAFETY: i + 8 <= n <= out.len(): the 8 floats written are in `out`.
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(i), value) };
            i += 8;
        }
        n
    }
}

/// Maps each element code of `src` through `lut`: packed streams are
/// decoded in place (a byte at a time, no intermediate buffer).
fn decode_codes<T: Copy>(
    elem: &ElemType,
    src: &[u8],
    packed: bool,
    start: usize,
    out: &mut [T],
    lut: &[T; 256],
) {
    let code = |c: u8| lut[usize::from(c)];
    if !(packed && elem.bits < 8) {
        let bytes = src.get(start..).unwrap_or(&[]);
        for (dst, &c) in out.iter_mut().zip(bytes) {
            *dst = code(c);
        }
        return;
    }
    let n = out.len();
    match elem.bits {
        4 => {
            let bytes = src.get(start / 2..).unwrap_or(&[]);
            let mut pairs = out.chunks_exact_mut(2);
            for (dst, &b) in (&mut pairs).zip(bytes) {
                dst[0] = code(b & 0x0f);
                dst[1] = code(b >> 4);
            }
            if let ([last], Some(&b)) = (pairs.into_remainder(), bytes.get(n / 2)) {
                *last = code(b & 0x0f);
            }
        }
        2 => {
            let bytes = src.get(start / 4..).unwrap_or(&[]);
            let mut quads = out.chunks_exact_mut(4);
            for (dst, &b) in (&mut quads).zip(bytes) {
                dst[0] = code(b & 0x03);
                dst[1] = code((b >> 2) & 0x03);
                dst[2] = code((b >> 4) & 0x03);
                dst[3] = code(b >> 6);
            }
            let tail = quads.into_remainder();
            if let Some(&b) = bytes.get(n / 4) {
                for (k, dst) in tail.iter_mut().enumerate() {
                    *dst = code((b >> (2 * k)) & 0x03);
                }
            }
        }
        6 => {
            let bytes = src.get(start / 4 * 3..).unwrap_or(&[]);
            for (g, dst) in out.chunks_mut(4).enumerate() {
                for (d, v) in dst.iter_mut().zip(six_bit_group(bytes, g)) {
                    *d = code(v);
                }
            }
        }
        _ => {}
    }
}

/// Converts `out.len()` packed-integer elements (int4, uint4, int2, uint2)
/// to i8. `src` as in [`to_f32`].
pub fn to_i8(elem: &ElemType, src: &[u8], packed: bool, out: &mut [i8]) {
    let Some(lut) = table_i8(elem) else {
        return;
    };
    fill_in_chunks(out, |start, out| {
        decode_codes(elem, src, packed, start, out, lut)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::elem_type;

    fn f32_of(code: i32, byte: u8) -> f32 {
        let mut out = [0f32; 1];
        to_f32(elem_type(code).unwrap(), &[byte], false, &mut out);
        out[0]
    }

    #[test]
    fn known_values() {
        assert_eq!(f32_of(17, 0x7e), 448.0); // e4m3fn max
        assert!(f32_of(17, 0x7f).is_nan());
        assert_eq!(f32_of(18, 0x80).to_bits(), 0xffc0_0000); // fnuz NaN is negative
        assert_eq!(f32_of(19, 0x7c), f32::INFINITY);
        assert_eq!(f32_of(19, 0x7b), 57344.0);
        assert_eq!(f32_of(20, 0x7f), 57344.0);
        assert_eq!(f32_of(23, 0x07), 6.0);
        assert_eq!(f32_of(23, 0x0f), -6.0);
        assert_eq!(f32_of(24, 127), 1.0);
        assert_eq!(f32_of(24, 0), 2f32.powi(-127));
        assert_eq!(f32_of(27, 0x1f), 7.5);
        assert_eq!(f32_of(28, 0x1f), 28.0);
        assert_eq!(f32_of(22, 0x08), -8.0);
        assert_eq!(f32_of(26, 0x02), -2.0);
    }

    #[test]
    fn packed_six_bit_roundtrip() {
        let elem = elem_type(27).unwrap();
        // four codes 1, 2, 3, 63 pack into three bytes
        let codes = [1u8, 2, 3, 63];
        let packed = [
            codes[0] | ((codes[1] & 0x03) << 6),
            (codes[1] >> 2) | ((codes[2] & 0x0f) << 4),
            (codes[2] >> 4) | (codes[3] << 2),
        ];
        let mut out = [0u8; 4];
        unpack_bits(elem, &packed, &mut out);
        assert_eq!(out, codes);
    }

    #[test]
    fn f16_matches_ieee() {
        assert_eq!(f32::from_bits(f16_to_f32_bits(0x3c00)), 1.0);
        assert_eq!(f32::from_bits(f16_to_f32_bits(0x0001)), 2f32.powi(-24));
        assert_eq!(f32::from_bits(f16_to_f32_bits(0xfbff)), -65504.0);
        assert_eq!(f16_to_f32_bits(0x7c01), 0x7f80_2000);
    }

    #[test]
    fn f16_vector_path_matches_the_portable_one_on_every_value() {
        // Every code, at every offset of a group, plus a tail that is not a whole group.
        let codes: Vec<u16> = (0..=u16::MAX).chain(0..13).collect();
        let src: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        for skip in [0usize, 3] {
            let src = &src[skip * 2..];
            let mut fast = vec![0f32; src.len() / 2];
            f16_to_f32(src, &mut fast);
            for (i, (v, c)) in fast.iter().zip(src.chunks_exact(2)).enumerate() {
                let expected = f16_to_f32_bits(u16::from_le_bytes([c[0], c[1]]));
                assert_eq!(v.to_bits(), expected, "element {i}");
            }
        }
    }

    #[test]
    fn parallel_matches_serial() {
        let elem = elem_type(22).unwrap();
        let n = PARALLEL_MIN_ELEMENTS * 3 + 3;
        let packed: Vec<u8> = (0..n.div_ceil(2)).map(|i| (i * 37 % 256) as u8).collect();
        let mut big = vec![0f32; n];
        to_f32(elem, &packed, true, &mut big);
        let mut codes = vec![0u8; n];
        unpack_bits(elem, &packed, &mut codes);
        for (i, (&v, &c)) in big.iter().zip(&codes).enumerate() {
            let expected = if c >= 8 { c as f32 - 16.0 } else { c as f32 };
            assert_eq!(v, expected, "element {i}");
        }
    }
}
