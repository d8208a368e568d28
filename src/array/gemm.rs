//! The one GEMM of the crate: row-major `c = a · b` on the `gemm` crate (threaded, with AVX-512 kernels where the
//! CPU has them), shared by the TEG evaluator's contractions and the NPU interpreter's `npu.matmul`, so both
//! compute the same sums in the same order.

/// Element types with a GEMM.
pub trait Gemm: Copy {
    /// `c = a[m, k] · b[k, n]` (`c +=` when `accumulate`), row-major; the slices hold `m·k`, `k·n` and `m·n`
    /// elements. Without `accumulate`, `c` is only written: its fresh pages are never read first (reading them
    /// would map the shared zero page, and the GEMM threads' first writes would then each flush every core's TLB).
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
        Self::gemm_strided(m, k, n, a, k, b, (n as isize, 1), c, accumulate)
    }

    /// [`Gemm::gemm`] with `b` given as its transpose `bt[n, k]`, row-major (the layout of weights stored
    /// `[out, in]`, and of the NPU's lane-major stationary operand).
    fn gemm_bt(m: usize, k: usize, n: usize, a: &[Self], bt: &[Self], c: &mut [Self], accumulate: bool) {
        Self::gemm_strided(m, k, n, a, k, bt, (1, k as isize), c, accumulate)
    }

    /// `c (+)= a · b` with `a[i, p]` at `a[i · lda + p]` (`lda >= k`: rows of a tile inside a wider matrix) and
    /// `b[i, j]` at `b[i · rs + j · cs]` for `(rs, cs)` = `b_strides` (non-negative, every index inside `b`).
    #[allow(clippy::too_many_arguments)]
    fn gemm_strided(
        m: usize,
        k: usize,
        n: usize,
        a: &[Self],
        lda: usize,
        b: &[Self],
        b_strides: (isize, isize),
        c: &mut [Self],
        accumulate: bool,
    );
}

/// `Gemm` on the `gemm` crate, on all of rayon's threads (it runs small products on one).
macro_rules! gemm_impl {
    ($t:ty) => {
        impl Gemm for $t {
            fn gemm_strided(
                m: usize,
                k: usize,
                n: usize,
                a: &[$t],
                lda: usize,
                b: &[$t],
                (rs, cs): (isize, isize),
                c: &mut [$t],
                accumulate: bool,
            ) {
                let fits = |len: usize, need: Option<usize>| need.is_some_and(|need| len >= need);
                assert!(fits(b.len(), k.checked_mul(n)) && fits(c.len(), m.checked_mul(n)), "GEMM operands too short");
                if m == 0 || n == 0 {
                    return;
                }
                let rows = (m - 1).checked_mul(lda).and_then(|r| r.checked_add(k));
                assert!(lda >= k && lda <= isize::MAX as usize && fits(a.len(), rows), "GEMM operand a too short");
                let last = (k.max(1) - 1) as isize * rs + (n - 1) as isize * cs;
                assert!(rs >= 0 && cs >= 0 && (k == 0 || (last as usize) < b.len()), "GEMM strides outside b");
                let (rk, rn) = (lda as isize, n as isize);
                let threads = gemm::Parallelism::Rayon(0);
                // SAFETY: the lengths are checked above, and so is the last element `b`'s strides reach; `c` does
                // not overlap `a` or `b` (it is borrowed mutably).
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        c.as_mut_ptr(),
                        1,
                        rn,
                        accumulate,
                        a.as_ptr(),
                        1,
                        rk,
                        b.as_ptr(),
                        cs,
                        rs,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        threads,
                    )
                }
            }
        }
    };
}
gemm_impl!(f32);
gemm_impl!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_of_a_wider_matrix_multiplies_as_its_copy() {
        let wide: Vec<f32> = (0..24).map(|i| i as f32).collect(); // 4 rows of 6: the tile is the first 3 columns
        let tile: Vec<f32> = (0..4).flat_map(|r| wide[r * 6..r * 6 + 3].to_vec()).collect();
        let bt = [1.0, -2.0, 0.5, 3.0, 1.0, -1.0];
        let (mut strided, mut packed) = (vec![0.0; 8], vec![0.0; 8]);
        f32::gemm_strided(4, 3, 2, &wide, 6, &bt, (1, 3), &mut strided, false);
        f32::gemm_bt(4, 3, 2, &tile, &bt, &mut packed, false);
        assert_eq!(strided, packed);
    }

    #[test]
    #[should_panic(expected = "GEMM operand a too short")]
    fn a_row_stride_that_wraps_is_refused() {
        let (a, mut c) = ([1.0f32; 4], [0.0f32; 2]);
        f32::gemm_strided(2, 4, 1, &a, usize::MAX - 3, &[1.0; 4], (1, 4), &mut c, false);
    }
}
