//! The one GEMM of the crate: row-major `c = a · b` on the `gemm` crate (threaded, with AVX-512 kernels where the
//! CPU has them), shared by the TEG evaluator's contractions and the NPU interpreter's `npu.matmul`, so both
//! compute the same sums in the same order.

/// Element types with a GEMM.
pub trait Gemm: Copy {
    /// `c = a[m, k] · b[k, n]` (`c +=` when `accumulate`), row-major; the slices hold `m·k`, `k·n` and `m·n`
    /// elements. Without `accumulate`, `c` is only written: its fresh pages are never read first (reading them
    /// would map the shared zero page, and the GEMM threads' first writes would then each flush every core's TLB).
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
        Self::gemm_strided(m, k, n, a, (k, 1), b, (n as isize, 1), c, accumulate)
    }

    /// [`Gemm::gemm`] with `b` given as its transpose `bt[n, k]`, row-major (the layout of weights stored
    /// `[out, in]`, and of the NPU's lane-major stationary operand).
    fn gemm_bt(m: usize, k: usize, n: usize, a: &[Self], bt: &[Self], c: &mut [Self], accumulate: bool) {
        Self::gemm_strided(m, k, n, a, (k, 1), bt, (1, k as isize), c, accumulate)
    }

    /// `c (+)= a · b` with `a[i, p]` at `a[i · ra + p · ca]` for `(ra, ca)` = `a_strides` (rows of a tile inside a
    /// wider matrix, or a transposed one) and `b[i, j]` at `b[i · rs + j · cs]` for `(rs, cs)` = `b_strides`
    /// (non-negative, every index inside `b`).
    #[allow(clippy::too_many_arguments)]
    fn gemm_strided(
        m: usize,
        k: usize,
        n: usize,
        a: &[Self],
        a_strides: (usize, usize),
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
                (ra, ca): (usize, usize),
                b: &[$t],
                (rs, cs): (isize, isize),
                c: &mut [$t],
                accumulate: bool,
            ) {
                let fits = |len: usize, need: Option<usize>| need.is_some_and(|need| len >= need);
                assert!(fits(c.len(), m.checked_mul(n)), "GEMM operand c too short");
                if m == 0 || n == 0 {
                    return;
                }
                let span = |count: usize, stride: usize| count.saturating_sub(1).checked_mul(stride);
                let last = span(m, ra).zip(span(k, ca)).and_then(|(r, c)| r.checked_add(c)?.checked_add(1));
                let small = ra <= isize::MAX as usize && ca <= isize::MAX as usize;
                assert!(small && (k == 0 || fits(a.len(), last)), "GEMM operand a too short");
                let last = (k.max(1) - 1) as isize * rs + (n - 1) as isize * cs;
                assert!(rs >= 0 && cs >= 0 && (k == 0 || (last as usize) < b.len()), "GEMM strides outside b");
                let rn = n as isize;
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
                        ca as isize,
                        ra as isize,
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
        f32::gemm_strided(4, 3, 2, &wide, (6, 1), &bt, (1, 3), &mut strided, false);
        f32::gemm_bt(4, 3, 2, &tile, &bt, &mut packed, false);
        assert_eq!(strided, packed);
    }

    #[test]
    fn a_given_transposed_multiplies_as_its_rows() {
        let a: Vec<f32> = (0..12).map(|i| i as f32 - 4.0).collect(); // 4 × 3, row-major
        let at: Vec<f32> = (0..3).flat_map(|p| (0..4).map(move |i| (i * 3 + p) as f32 - 4.0)).collect();
        let bt = [1.0, -2.0, 0.5, 3.0, 1.0, -1.0];
        let (mut transposed, mut rows) = (vec![0.0; 8], vec![0.0; 8]);
        f32::gemm_strided(4, 3, 2, &at, (1, 4), &bt, (1, 3), &mut transposed, false);
        f32::gemm_bt(4, 3, 2, &a, &bt, &mut rows, false);
        assert_eq!(transposed, rows);
    }

    #[test]
    #[should_panic(expected = "GEMM operand a too short")]
    fn a_row_stride_that_wraps_is_refused() {
        let (a, mut c) = ([1.0f32; 4], [0.0f32; 2]);
        f32::gemm_strided(2, 4, 1, &a, (usize::MAX - 3, 1), &[1.0; 4], (1, 4), &mut c, false);
    }
}
