//! Tiling an index space so that each tile's operands and result fit one slice's data memory: a tile is a box
//! that fixes every dimension before a split dimension `k`, takes a chunk of `k`, and all of every dimension after
//! it. `k` is the outermost dimension for which one index of it fits; the chunk is as large as fits, and smaller
//! when that gives more tiles for the slices to share. Chunks are multiples of 8 indices (the last one excepted),
//! so a tile of the last dimension starts on an aligned element.

/// A box of the index space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Its first index per dimension.
    pub start: Vec<u64>,
    /// Its extent per dimension.
    pub ext: Vec<u64>,
}

/// How a space is cut into tiles.
#[derive(Clone, Debug)]
pub struct Tiling {
    space: Vec<u64>,
    k: usize,
    chunk: u64,
}

/// Chunks of the split dimension are multiples of this many indices (but the last) unless told otherwise.
pub const CHUNK_ALIGN: u64 = 8;

impl Tiling {
    /// The tiling of `space` whose tiles take at most `budget` bytes by `bytes` (of a tile's extents), aiming at
    /// `want` tiles, chunks a multiple of `align` (but the last); an error when not even `align` indices of the
    /// last dimension fit.
    pub fn choose(
        space: &[u64],
        bytes: &dyn Fn(&[u64]) -> u64,
        budget: u64,
        want: u64,
        align: u64,
    ) -> Result<Tiling, String> {
        let n = space.len();
        let extents = |k: usize, c: u64| -> Vec<u64> {
            (0..n)
                .map(|d| {
                    if d < k {
                        1
                    } else if d == k {
                        c
                    } else {
                        space[d]
                    }
                })
                .collect()
        };
        let least = |k: usize| if k + 1 == n { align.min(space[k]).max(1) } else { 1 };
        let k = (0..n)
            .find(|&k| bytes(&extents(k, least(k))) <= budget)
            .ok_or_else(|| format!("not even {} elements of a row fit the {budget} B a tile may take", least(n - 1)))?;
        // The largest chunk that fits (bytes grow with the chunk).
        let (mut lo, mut hi) = (least(k), space[k]);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if bytes(&extents(k, mid)) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let outer: u64 = space[..k].iter().product();
        let pieces = want.div_ceil(outer.max(1)).max(1);
        let mut chunk = lo.min(space[k].div_ceil(pieces));
        if chunk < space[k] && align > 1 {
            chunk = (chunk / align * align).max(align.min(lo));
        }
        Ok(Tiling { space: space.to_vec(), k, chunk: chunk.max(1) })
    }

    /// How many tiles there are (without making them).
    pub fn count(&self) -> u64 {
        let outer = self.space[..self.k].iter().try_fold(1u64, |a, &e| a.checked_mul(e));
        outer.and_then(|o| o.checked_mul(self.space[self.k].div_ceil(self.chunk))).unwrap_or(u64::MAX)
    }

    /// The tiles, in row-major order of their first index.
    pub fn tiles(&self) -> Vec<Tile> {
        let (k, n) = (self.k, self.space.len());
        let mut out = Vec::new();
        let mut index = vec![0u64; k];
        loop {
            let mut a = 0;
            while a < self.space[k] {
                let c = self.chunk.min(self.space[k] - a);
                let mut start = index.clone();
                start.push(a);
                start.extend(std::iter::repeat_n(0, n - k - 1));
                let mut ext = vec![1; k];
                ext.push(c);
                ext.extend_from_slice(&self.space[k + 1..]);
                out.push(Tile { start, ext });
                a += c;
            }
            // The next index of the dimensions before k (row-major); done after the last.
            let mut d = k;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                index[d] += 1;
                if index[d] < self.space[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }
}

/// The runs of consecutive equal items, as `(first, end)` positions: the slices of a wave doing the same work, which
/// one SPMD instruction covers.
pub fn runs<T: PartialEq>(items: &[T]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut first = 0;
    while first < items.len() {
        let end = (first..items.len()).find(|&i| items[i] != items[first]).unwrap_or(items.len());
        out.push((first as u64, end as u64));
        first = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(ext: &[u64]) -> u64 {
        ext.iter().product::<u64>() * 4
    }

    #[test]
    fn tiles_cover_the_space_once() {
        for (space, budget, want) in [(vec![5u64, 8], 1 << 20, 1), (vec![3, 100, 64], 4096, 8), (vec![1000], 256, 1)] {
            let t = Tiling::choose(&space, &dense, budget, want, CHUNK_ALIGN).unwrap();
            let tiles = t.tiles();
            let total: u64 = tiles.iter().map(|t| t.ext.iter().product::<u64>()).sum();
            assert_eq!(total, space.iter().product::<u64>());
            assert!(tiles.iter().all(|t| dense(&t.ext) <= budget), "{tiles:?}");
        }
    }

    #[test]
    fn a_small_space_is_split_for_the_slices() {
        let t = Tiling::choose(&[64, 8], &dense, 1 << 20, 4, CHUNK_ALIGN).unwrap();
        assert_eq!(t.tiles().len(), 4);
        assert!(Tiling::choose(&[1 << 20], &dense, 16, 1, CHUNK_ALIGN).is_err());
    }
}
