//! datasketch 2.0's permutation schemes, so a `MinHash(num_perm, seed)` fed the same tokens
//! gives the same hashvalues as datasketch's (docs/design/36-datasketch-minhash.md):
//!
//! - `affine32` (datasketch's default since 2.0): the token's SHA-1 32-bit hash, mixed by
//!   MurmurHash3's 32-bit finalizer, then `a·h + b mod 2^32` (`a` odd);
//! - `affine64`: the same over 64 bits (SHA-1's first 8 bytes, the 64-bit finalizer);
//! - `legacy` (every version before 2.0): `(a·h + b mod 2^64) mod (2^61 − 1)`, its low 32 bits.
//!
//! The permutations are drawn by NumPy's `RandomState(seed)` itself, as datasketch draws
//! them (once per seed and length, then cached): a re-implementation of its bounded integer
//! sampling would be one more thing to get wrong, and drawing is not the hot path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::refused;

const MERSENNE_61: u64 = (1 << 61) - 1;
const MAX_32: u64 = u32::MAX as u64;

/// One of datasketch's permutation schemes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    Legacy,
    Affine32,
    Affine64,
}

impl Scheme {
    pub fn parse(name: &str) -> PyResult<Scheme> {
        match name {
            "legacy" => Ok(Scheme::Legacy),
            "affine32" => Ok(Scheme::Affine32),
            "affine64" => Ok(Scheme::Affine64),
            other => Err(refused(format!(
                "scheme must be one of affine32, affine64, legacy, got {other:?}"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Legacy => "legacy",
            Scheme::Affine32 => "affine32",
            Scheme::Affine64 => "affine64",
        }
    }

    /// The largest hash value, which is also an empty sketch's value at every position.
    pub fn max(self) -> u64 {
        match self {
            Scheme::Legacy | Scheme::Affine32 => MAX_32,
            Scheme::Affine64 => u64::MAX,
        }
    }

    /// NumPy's name of the hashvalues' dtype (legacy keeps 32-bit values in uint64).
    pub fn dtype(self) -> &'static str {
        match self {
            Scheme::Affine32 => "uint32",
            Scheme::Legacy | Scheme::Affine64 => "uint64",
        }
    }

    /// The default token hash: SHA-1's first 4 bytes (8 for affine64), little-endian, as
    /// datasketch's `sha1_hash32` / `sha1_hash64`.
    pub fn token_hash(self, bytes: &[u8]) -> u64 {
        let state = sha1_state(bytes);
        // The digest is the state's words big-endian; its first bytes are read little-endian.
        let first = u64::from(state[0].swap_bytes());
        match self {
            Scheme::Affine64 => first | u64::from(state[1].swap_bytes()) << 32,
            Scheme::Legacy | Scheme::Affine32 => first,
        }
    }

    /// Checks a hashfunc's value fits the scheme, as datasketch does.
    pub fn check_input(self, hv: u64) -> PyResult<u64> {
        if self == Scheme::Affine32 && hv > MAX_32 {
            return Err(refused(format!(
                "hashfunc returned a value out of range for scheme 'affine32': {hv}. Use a hash \
                 function matching the scheme width, or scheme='affine64' for 64-bit hash values."
            )));
        }
        Ok(hv)
    }
}

/// SHA-1's final state for `bytes`. A token of at most 55 bytes (a shingle, a word) is
/// padded into one block here and compressed once: the `Digest` wrapper's buffering costs
/// half as much again as the compression itself on such tokens.
fn sha1_state(bytes: &[u8]) -> [u32; 5] {
    const INITIAL: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    if bytes.len() > 55 {
        use sha1::Digest;
        let digest = sha1::Sha1::digest(bytes);
        let word =
            |i: usize| u32::from_be_bytes(digest[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        return [word(0), word(1), word(2), word(3), word(4)];
    }
    // FIPS 180-4 padding: the bytes, 0x80, zeros, the length in bits (big-endian) last.
    let mut block = [0u8; 64];
    block[..bytes.len()].copy_from_slice(bytes);
    block[bytes.len()] = 0x80;
    block[56..].copy_from_slice(&(bytes.len() as u64 * 8).to_be_bytes());
    let mut state = INITIAL;
    sha1::block_api::compress(&mut state, &[block]);
    state
}

/// A scheme's permutation parameters: position `i` maps `h` with `a[i]` and `b[i]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Perms {
    pub scheme: Scheme,
    pub a: Vec<u64>,
    pub b: Vec<u64>,
    /// `a` and `b` as 32-bit lanes (affine32's width), so its loop is vectorized.
    a32: Vec<u32>,
    b32: Vec<u32>,
}

fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The minima of the whole blocks of `LANES` positions at the front of `values`, over
/// every hash; returns how many positions that was. A block stays in registers across
/// the hashes (its values read and written once, not once per hash), and `a·h + b` is
/// independent from lane to lane, so the compiler vectorizes the lanes.
#[inline(always)]
fn blocks32<const LANES: usize>(hashes: &[u32], a: &[u32], b: &[u32], values: &mut [u32]) -> usize {
    let whole = values.len() / LANES * LANES;
    let lanes = values[..whole]
        .chunks_exact_mut(LANES)
        .zip(a.chunks_exact(LANES).zip(b.chunks_exact(LANES)));
    for (block, (a, b)) in lanes {
        let mut acc = [u32::MAX; LANES];
        acc.copy_from_slice(block);
        for &h in hashes {
            for lane in 0..LANES {
                acc[lane] = acc[lane].min(a[lane].wrapping_mul(h).wrapping_add(b[lane]));
            }
        }
        block.copy_from_slice(&acc);
    }
    whole
}

#[inline(always)]
fn affine32_blocks(hashes: &[u32], a: &[u32], b: &[u32], values: &mut [u32]) {
    let mut done = blocks32::<32>(hashes, a, b, values);
    done += blocks32::<8>(hashes, &a[done..], &b[done..], &mut values[done..]);
    blocks32::<1>(hashes, &a[done..], &b[done..], &mut values[done..]);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn affine32_avx2(hashes: &[u32], a: &[u32], b: &[u32], values: &mut [u32]) {
    // The same code compiled for AVX2: 8 lanes of 32-bit multiplies per instruction
    // (the x86-64 baseline, SSE2, has no 32-bit lane multiply).
    affine32_blocks(hashes, a, b, values);
}

/// affine32's minima of `a·h + b mod 2^32` (the `h` mixed already) into `values`.
fn affine32(hashes: &[u32], a: &[u32], b: &[u32], values: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        unsafe { affine32_avx2(hashes, a, b, values) };
        return;
    }
    affine32_blocks(hashes, a, b, values);
}

impl Perms {
    fn new(scheme: Scheme, a: Vec<u64>, b: Vec<u64>) -> Perms {
        // Truncation is affine32's own arithmetic (mod 2^32); the other schemes ignore these.
        let a32 = a.iter().map(|&x| x as u32).collect();
        let b32 = b.iter().map(|&x| x as u32).collect();
        Perms {
            scheme,
            a,
            b,
            a32,
            b32,
        }
    }

    /// Lowers `values` to the minimum with each permuted hash of `hashes`.
    pub fn apply(&self, hashes: &[u64], values: &mut [u64]) {
        if hashes.is_empty() {
            return;
        }
        match self.scheme {
            Scheme::Affine32 => {
                // Values of this scheme fit 32 bits (checked on the way in).
                let mixed: Vec<u32> = hashes.iter().map(|&h| fmix32(h as u32)).collect();
                let mut narrow: Vec<u32> = values.iter().map(|&v| v as u32).collect();
                affine32(&mixed, &self.a32, &self.b32, &mut narrow);
                for (v, n) in values.iter_mut().zip(narrow) {
                    *v = u64::from(n);
                }
            }
            Scheme::Legacy => {
                for &hv in hashes {
                    for ((v, &a), &b) in values.iter_mut().zip(&self.a).zip(&self.b) {
                        let p = (a.wrapping_mul(hv).wrapping_add(b) % MERSENNE_61) & MAX_32;
                        *v = (*v).min(p);
                    }
                }
            }
            Scheme::Affine64 => {
                for &hv in hashes {
                    let h = fmix64(hv);
                    for ((v, &a), &b) in values.iter_mut().zip(&self.a).zip(&self.b) {
                        *v = (*v).min(a.wrapping_mul(h).wrapping_add(b));
                    }
                }
            }
        }
    }

    /// Parameters given by the caller (datasketch's `permutations`: two rows `a` and `b`).
    pub fn given(scheme: Scheme, num_perm: usize, a: Vec<u64>, b: Vec<u64>) -> PyResult<Perms> {
        if a.len() != num_perm || b.len() != num_perm {
            return Err(refused("Numbers of hash values and permutations mismatch"));
        }
        if scheme != Scheme::Legacy {
            if a.iter().chain(&b).any(|&x| x > scheme.max()) {
                return Err(refused(format!(
                    "permutation parameters out of range for scheme {:?}",
                    scheme.name()
                )));
            }
            if a.iter().any(|&x| x & 1 == 0) {
                return Err(refused(format!(
                    "all `a` permutation parameters must be odd for scheme {:?}",
                    scheme.name()
                )));
            }
        }
        Ok(Perms::new(scheme, a, b))
    }
}

type Key = (Scheme, u64, usize);

/// Drawn parameters, by scheme, seed and length (a program uses a few).
fn cache() -> &'static Mutex<HashMap<Key, Arc<Perms>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Perms>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Past this many kept draws, new ones are not kept (a program cycling through seeds).
const CACHED: usize = 256;

/// The parameters datasketch draws for `scheme`, `seed` and `num_perm`.
pub fn drawn(py: Python<'_>, scheme: Scheme, seed: u64, num_perm: usize) -> PyResult<Arc<Perms>> {
    let key = (scheme, seed, num_perm);
    if let Some(p) = cache().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    let perms = Arc::new(draw(py, scheme, seed, num_perm)?);
    let mut kept = cache().lock().unwrap_or_else(|p| p.into_inner());
    if kept.len() < CACHED {
        kept.insert(key, perms.clone());
    }
    Ok(perms)
}

fn draw(py: Python<'_>, scheme: Scheme, seed: u64, num_perm: usize) -> PyResult<Perms> {
    let np = py.import("numpy")?;
    let generator = np.getattr("random")?.call_method1("RandomState", (seed,))?;
    let kw = PyDict::new(py);
    kw.set_item("dtype", np.getattr(scheme.dtype())?)?;
    let ints = |low: u128, high: u128, size: Option<usize>| -> PyResult<Vec<u64>> {
        let drawn = match size {
            Some(n) => generator.call_method("randint", (low, high, n), Some(&kw))?,
            None => generator.call_method("randint", (low, high), Some(&kw))?,
        };
        let as_list = np
            .call_method1("asarray", (drawn, "uint64"))?
            .call_method0("ravel")?;
        as_list.call_method0("tolist")?.extract()
    };
    match scheme {
        Scheme::Legacy => {
            // One `a` then one `b` per position, in that order, as datasketch draws them.
            let (mut a, mut b) = (Vec::with_capacity(num_perm), Vec::with_capacity(num_perm));
            for _ in 0..num_perm {
                a.extend(ints(1, u128::from(MERSENNE_61), None)?);
                b.extend(ints(0, u128::from(MERSENNE_61), None)?);
            }
            Ok(Perms::new(scheme, a, b))
        }
        Scheme::Affine32 | Scheme::Affine64 => {
            let width = if scheme == Scheme::Affine32 { 32 } else { 64 };
            let half = ints(0, 1 << (width - 1), Some(num_perm))?;
            let b = ints(0, 1 << width, Some(num_perm))?;
            // `a = 2·x + 1` in the scheme's width: odd, so the map is a bijection.
            let a = half
                .into_iter()
                .map(|x| x.wrapping_mul(2).wrapping_add(1) & scheme.max())
                .collect();
            Ok(Perms::new(scheme, a, b))
        }
    }
}
