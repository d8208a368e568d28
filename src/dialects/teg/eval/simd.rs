//! Hot loops compiled twice: for the baseline x86-64 the crate targets, and for AVX2 with FMA, chosen at run time
//! by what the CPU has (as NumPy's loops are). A kernel runs its loop inside [`vectorized`]; the generic code it
//! calls inlines into the AVX2 copy.

/// Runs `f`, compiled for AVX2 and FMA when this CPU has them.
#[inline(always)]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the copy is compiled for (checked just above).
            return unsafe { avx2(f) };
        }
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
