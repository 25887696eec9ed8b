//! Plain old data: the number types of Alembic properties and their decoding from the
//! little-endian bytes of a sample (IEEE 754 binary16/32/64 floats, two's complement
//! integers, bool as one byte).

/// Plain old data types, in Alembic's numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pod {
    /// bool (1 byte), u8, i8, u16, i16, u32, i32, u64, i64.
    Int {
        /// Bytes per number.
        bytes: usize,
        /// Two's complement.
        signed: bool,
    },
    /// half, float, double.
    Float {
        /// Bytes per number.
        bytes: usize,
    },
    /// NUL-terminated UTF-8 strings.
    String,
    /// NUL-terminated UTF-32 strings.
    Wstring,
}

impl Pod {
    /// The type of Alembic's code `code` (0 bool … 13 wstring).
    pub fn of(code: u32) -> Option<Pod> {
        Some(match code {
            0 | 1 => Pod::Int {
                bytes: 1,
                signed: false,
            },
            2 => Pod::Int {
                bytes: 1,
                signed: true,
            },
            3 => Pod::Int {
                bytes: 2,
                signed: false,
            },
            4 => Pod::Int {
                bytes: 2,
                signed: true,
            },
            5 => Pod::Int {
                bytes: 4,
                signed: false,
            },
            6 => Pod::Int {
                bytes: 4,
                signed: true,
            },
            7 => Pod::Int {
                bytes: 8,
                signed: false,
            },
            8 => Pod::Int {
                bytes: 8,
                signed: true,
            },
            9 => Pod::Float { bytes: 2 },
            10 => Pod::Float { bytes: 4 },
            11 => Pod::Float { bytes: 8 },
            12 => Pod::String,
            13 => Pod::Wstring,
            _ => return None,
        })
    }

    /// Bytes per number (strings: 0).
    pub fn size(self) -> usize {
        match self {
            Pod::Int { bytes, .. } | Pod::Float { bytes } => bytes,
            Pod::String | Pod::Wstring => 0,
        }
    }
}

/// One number of POD `pod` from its little-endian bytes.
pub fn number(pod: Pod, b: &[u8]) -> f64 {
    match pod {
        Pod::Int { bytes: 1, signed } => {
            if signed {
                f64::from(b[0] as i8)
            } else {
                f64::from(b[0])
            }
        }
        Pod::Int { bytes: 2, signed } => {
            let v = u16::from_le_bytes([b[0], b[1]]);
            if signed {
                f64::from(v as i16)
            } else {
                f64::from(v)
            }
        }
        Pod::Int { bytes: 4, signed } => {
            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if signed {
                f64::from(v as i32)
            } else {
                f64::from(v)
            }
        }
        Pod::Int { signed, .. } => {
            let v = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            if signed {
                v as i64 as f64
            } else {
                v as f64
            }
        }
        Pod::Float { bytes: 2 } => half(u16::from_le_bytes([b[0], b[1]])),
        Pod::Float { bytes: 4 } => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Pod::Float { .. } => f64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        Pod::String | Pod::Wstring => 0.0,
    }
}

/// IEEE 754 half precision (1 sign, 5 exponent, 10 fraction bits) to `f64`.
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_decode() {
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x0001), 2f64.powi(-24));
        assert!(half(0x7c00).is_infinite());
    }
}
