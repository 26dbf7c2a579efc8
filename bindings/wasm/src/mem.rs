//! Byte comparison for wasm32, eight bytes at a time. wasm32-unknown-unknown has no libc, so
//! `memcmp` and `bcmp` come from `compiler_builtins`, which compares one byte per iteration;
//! every ordered-map lookup by path (the file table, the directory index) and every string
//! equality goes through them. Profiling 240k writes of new files found the byte loop at 12% of
//! WASM write time (paths in one directory share a long prefix). `compiler_builtins` defines
//! both symbols weak so that a platform can supply its own; these strong definitions replace
//! them in the module (measured on 250k writes of 2 KB files through `write`: the fastest of
//! five runs 5.5 µs per write against 5.9 µs). Being `#[no_mangle]`, the two symbols are also
//! exports of the module, unused by the glue. Native builds use the platform's libc.

/// The ordering of the first `n` bytes at `a` and `b`, as C's `memcmp`: the difference of the
/// first differing pair of bytes (as unsigned), or 0.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
pub unsafe fn compare(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`, so both eight-byte reads are in bounds; wasm loads need no alignment.
        let (x, y) = unsafe { ((a.add(i) as *const u64).read_unaligned(), (b.add(i) as *const u64).read_unaligned()) };
        if x != y {
            // Little-endian: the lowest differing byte of the words is the first in memory.
            i += ((x ^ y).trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    while i < n {
        // SAFETY: `i < n`.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

#[cfg(target_arch = "wasm32")]
mod symbols {
    /// # Safety
    /// As C's `memcmp`.
    #[no_mangle]
    pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        // SAFETY: the caller's contract.
        unsafe { super::compare(a, b, n) }
    }

    /// # Safety
    /// As C's `bcmp` (zero when equal, else any non-zero value).
    #[no_mangle]
    pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        // SAFETY: the caller's contract.
        unsafe { super::compare(a, b, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::compare;
    use std::cmp::Ordering;

    fn check(a: &[u8], b: &[u8]) {
        let n = a.len().min(b.len());
        // SAFETY: both slices hold at least `n` bytes.
        let got = unsafe { compare(a.as_ptr(), b.as_ptr(), n) };
        let want = a[..n].cmp(&b[..n]);
        assert_eq!(got.cmp(&0), want, "{a:?} vs {b:?}");
        if want != Ordering::Equal {
            let at = (0..n).find(|&i| a[i] != b[i]).unwrap();
            assert_eq!(got, i32::from(a[at]) - i32::from(b[at]));
        }
    }

    #[test]
    fn orders_like_slices_at_every_length_and_offset() {
        for len in 0..40 {
            let base: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
            check(&base, &base);
            for at in 0..len {
                for delta in [1u8, 0x7f, 0x80, 0xff] {
                    let mut other = base.clone();
                    other[at] = other[at].wrapping_add(delta);
                    check(&base, &other);
                    check(&other, &base);
                    // A later difference must not outweigh the first one.
                    if at + 1 < len {
                        other[len - 1] = other[len - 1].wrapping_sub(delta);
                        check(&base, &other);
                    }
                }
            }
        }
    }

    #[test]
    fn high_bytes_compare_unsigned() {
        check(&[0x00; 9], &[0x00, 0, 0, 0, 0, 0, 0, 0, 0x80]);
        check(&[0xff, 0, 0, 0, 0, 0, 0, 0, 0], &[0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        check(b"/bench_writes/w10.txt", b"/bench_writes/w9.txt");
    }
}
