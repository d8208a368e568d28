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
                assert!(b.len() >= k * n && c.len() >= m * n, "GEMM operands too short");
                if m == 0 || n == 0 {
                    return;
                }
                assert!(lda >= k && a.len() >= (m - 1) * lda + k, "GEMM operand a too short for its rows");
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
