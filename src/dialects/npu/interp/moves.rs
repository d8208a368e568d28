//! A transpose carried out as a list of element moves found once per instruction, not per slice: where each
//! element of the source lies and where it lands. Gathering the source's packets, transposing them and scattering
//! them walked three patterns per slice; a convolution's result leaves its 256 slices through such a transpose.

use super::memory::Bytes;
use super::state::tiled_range;
use crate::dialects::npu::access::AccessPattern;
use crate::dialects::npu::ops::stream::{Kind, Stream};

/// The moves of one stream: element `i` of `pairs` takes the `size` bytes at `pairs[i].0` of the source's range
/// to `pairs[i].1` of the destination's (both relative to the ranges' first bytes).
pub struct Moves {
    size: usize,
    pairs: Vec<(u32, u32)>,
    /// The bytes the source reads, `[low, high)`.
    src: (usize, usize),
    /// The bytes the destination writes, every one of them, `[low, high)`.
    dst: (usize, usize),
}

/// The moves of `s` when it transposes whole tiles of elements of 1, 2 or 4 bytes and its destination's packets
/// tile their range, so that writing it marks the range.
pub fn moves(s: &Stream) -> Option<Moves> {
    let size = s.from.bytes() as usize;
    if s.kind != Kind::Transpose || !matches!(size, 1 | 2 | 4) {
        return None;
    }
    let src = s.src.pattern.range().map(|(l, h)| (l as usize, h as usize))?;
    let dst = tiled_range(&s.dst.pattern)?;
    let from = elements(&s.src.pattern, size, src.0)?;
    let to = elements(&s.dst.pattern, size, dst.0)?;
    if from.len() != to.len() {
        return None;
    }
    let (rows, cols) = (s.tile.0 as usize, s.tile.1 as usize);
    let tile = rows * cols;
    if tile == 0 || !from.len().is_multiple_of(tile) {
        return None;
    }
    // Element `r · cols + c` of a tile lands at `c · rows + r` of the same tile.
    let pairs = (0..from.len())
        .map(|i| {
            let (t, r, c) = (i / tile, i % tile / cols, i % cols);
            (from[i], to[t * tile + c * rows + r])
        })
        .collect();
    Some(Moves { size, pairs, src, dst })
}

/// The place of each `size`-byte element `p` reads, in order, from byte `low`; none when a packet is not whole
/// elements or a place does not fit 32 bits.
fn elements(p: &AccessPattern, size: usize, low: usize) -> Option<Vec<u32>> {
    let packet = p.packet as usize;
    if !packet.is_multiple_of(size) {
        return None;
    }
    let mut out = Vec::with_capacity(p.bytes()? as usize / size);
    for offset in p.offsets() {
        let first = usize::try_from(p.base as i128 + offset).ok()? - low;
        for e in (first..first + packet).step_by(size) {
            out.push(u32::try_from(e).ok()?);
        }
    }
    Some(out)
}

impl Moves {
    /// Carries out the moves from `src` into `dst` (another memory) when every byte the source reads was written;
    /// whether it did (if not, the caller's own path reports the first byte nothing wrote).
    pub fn apply(&self, src: &Bytes, dst: &mut Bytes) -> bool {
        if !src.written_between(self.src.0, self.src.1) {
            return false;
        }
        let from = &src.unchecked_from(self.src.0)[..self.src.1 - self.src.0];
        self.place(from, dst);
        true
    }

    /// [`Moves::apply`] within one memory: the source's range is copied out first, as it may overlap the
    /// destination.
    pub fn apply_within(&self, bytes: &mut Bytes) -> bool {
        if !bytes.written_between(self.src.0, self.src.1) {
            return false;
        }
        let from = bytes.unchecked_from(self.src.0)[..self.src.1 - self.src.0].to_vec();
        self.place(&from, bytes);
        true
    }

    fn place(&self, from: &[u8], dst: &mut Bytes) {
        let to = dst.write_in_place(self.dst.0, self.dst.1 - self.dst.0);
        match self.size {
            4 => self.place_as::<4>(from, to),
            2 => self.place_as::<2>(from, to),
            _ => self.place_as::<1>(from, to),
        }
    }

    fn place_as<const N: usize>(&self, from: &[u8], to: &mut [u8]) {
        for &(s, d) in &self.pairs {
            let (s, d) = (s as usize, d as usize);
            to[d..d + N].copy_from_slice(&from[s..s + N]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::npu::interp::state::{gather, scatter};
    use crate::dialects::npu::ops::onchip::{Operand, Slices, Space};
    use crate::dialects::npu::ops::stream::Requant;
    use crate::machine::ElemType;
    use proptest::prelude::*;

    /// A transpose of `tiles` tiles of `rows` × `cols` elements of `from` (1, 2 or 4 bytes): the source read in
    /// packets of `per` elements `gap` bytes apart from byte 3 (so that some elements straddle words), the
    /// destination written in packets of `rows` elements, every `order`-th one first (a permutation of the
    /// packets that tiles its range).
    fn transpose(from: ElemType, (rows, cols, tiles): (u64, u64, u64), (per, gap): (u64, u64), order: u64) -> Stream {
        let size = from.bytes();
        let elements = rows * cols * tiles;
        let per = (1..=per).rev().find(|p| elements % p == 0).unwrap_or(1);
        let src = AccessPattern::new(3, &[((elements / per) as u32, (per * size + gap) as i64)], (per * size) as u32);
        let packets = elements / rows;
        let order = (1..=order).rev().find(|o| packets % o == 0).unwrap_or(1);
        let packet = (rows * size) as i64;
        let loops = [((packets / order) as u32, packet), (order as u32, packet * (packets / order) as i64)];
        let dst = AccessPattern::new(4096, &loops, (rows * size) as u32);
        let slices = Slices { chip: 0, cluster: 0, first: 0, end: 1 };
        let requant = Requant { scale: 1, shift: 0 };
        let (src, dst) = (Operand { space: Space::Dm, pattern: src }, Operand { space: Space::Dm, pattern: dst });
        Stream { kind: Kind::Transpose, slices, src, dst, from, to: from, relu: false, requant, tile: (rows, cols) }
    }

    proptest! {
        /// The planned moves leave the bytes gathering, transposing and scattering leave.
        #[test]
        fn moves_transpose_as_the_stream_does(
            from in prop_oneof![Just(ElemType::I8), Just(ElemType::Bf16), Just(ElemType::F32)],
            shape in (1u64..5, 1u64..5, 1u64..4),
            read in (1u64..9, 0u64..9),
            order in 1u64..4,
            seed in any::<u8>(),
        ) {
            let s = transpose(from, shape, read, order);
            let planned = moves(&s).expect("a transpose of whole tiles into a tiled range");
            let data: Vec<u8> = (0..8192u32).map(|i| (i * 31 + seed as u32) as u8).collect();
            let (mut want, mut got) = (Bytes::full(data.clone()), Bytes::full(data));
            let moved = s.apply(gather(&want, &s.src.pattern).expect("written"));
            scatter(&mut want, &s.dst.pattern, &moved);
            prop_assert!(planned.apply_within(&mut got));
            prop_assert_eq!(got.unchecked_from(0), want.unchecked_from(0));
        }
    }

    #[test]
    fn a_source_not_all_written_is_left_to_the_stream() {
        let s = transpose(ElemType::F32, (2, 4, 2), (4, 0), 1);
        let mut bytes = Bytes::empty(8192);
        bytes.write(0, &[1; 8]);
        assert!(!moves(&s).expect("planned").apply_within(&mut bytes));
    }
}
