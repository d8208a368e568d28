//! `npu.kernel`'s canonicalization of its synchronization: waits its queue already implies, and semaphores nothing
//! waits for.
//!
//! Queues run in order, so when an instruction starts, every earlier instruction of its queue has ended: their
//! waits held, and their signals were set. A wait on a semaphore that only one queue signals is implied when an
//! earlier instruction of the same queue waited for at least that value, or (when the queue is the signaller)
//! signalled it; such waits go (the happens-before order the race detector sees is the same: queue order, then
//! the one signaller's order). A semaphore no instruction waits for orders nothing: its signals and the semaphore
//! go. A kernel the lowering writes waits only for what it reads or writes, across queues; this drops the rest,
//! and it prints shorter.

use super::machine_attr::machine_of;
use super::ops::clauses::{ints, str_prop};
use super::ops::instruction::Instruction;
use crate::ir::rewrite::{RewritePattern, Rewriter};
use crate::ir::{Attr, AttrId, Context, OpId, ValueId};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Most semaphores whose waits the pattern reasons about: each instruction's knowledge is a vector over them, so
/// a kernel with more keeps its waits (its unobserved semaphores still go). The kernel builder uses one per queue.
pub const MAX_TRACKED_SEMAPHORES: usize = 256;

/// The pattern (on `npu.kernel`).
pub struct SimplifySync;

/// One instruction's synchronization, as it is and as it will be.
struct Syncs {
    op: OpId,
    /// The chip and the queue's name.
    queue: (u64, String),
    /// Operands before the semaphores.
    buffers: Vec<ValueId>,
    waits: Vec<(ValueId, i64)>,
    signals: Vec<(ValueId, i64)>,
}

impl RewritePattern for SimplifySync {
    fn name(&self) -> &'static str {
        "SimplifySync"
    }

    fn root(&self) -> Option<&'static str> {
        Some("npu.kernel")
    }

    fn match_and_rewrite(&self, kernel: OpId, rw: &mut Rewriter<'_>) -> bool {
        let Some(mut syncs) = instructions(rw.ir(), kernel) else { return false };
        let before: usize = syncs.iter().map(|s| s.waits.len() + s.signals.len()).sum();
        drop_implied_waits(&mut syncs);
        let waited: HashSet<ValueId> = syncs.iter().flat_map(|s| s.waits.iter().map(|w| w.0)).collect();
        for s in &mut syncs {
            s.signals.retain(|g| waited.contains(&g.0));
        }
        let after: usize = syncs.iter().map(|s| s.waits.len() + s.signals.len()).sum();
        let unused = unused_semaphores(rw.ir(), kernel, &waited);
        if after == before && unused.is_empty() {
            return false;
        }
        for s in &syncs {
            rewrite(rw, s);
        }
        for sem in unused {
            rw.erase_op(sem);
        }
        true
    }
}

/// The kernel's instructions (ops with a queue) and their synchronization, or `None` if one is malformed (the
/// verifier reports it).
fn instructions(ctx: &Context, kernel: OpId) -> Option<Vec<Syncs>> {
    let cfg = machine_of(ctx, kernel).ok()?;
    let block = *ctx.body.region(*ctx.body.regions(kernel).first()?).blocks.first()?;
    let mut out = Vec::new();
    for op in ctx.body.block_ops(block) {
        let Some(queue) = str_prop(ctx, op, "queue") else { continue };
        let chip = Instruction::decode(ctx, op, &cfg).ok()??.chip();
        let (waits, signals) = (ints(ctx, op, "waits")?, ints(ctx, op, "signals")?);
        let operands: Vec<ValueId> = ctx.body.operands(op).collect();
        let buffers = operands.len().checked_sub(waits.len() + signals.len())?;
        let (sems_waited, sems_signalled) = operands[buffers..].split_at(waits.len());
        out.push(Syncs {
            op,
            queue: (chip, queue.to_string()),
            buffers: operands[..buffers].to_vec(),
            waits: sems_waited.iter().copied().zip(waits).collect(),
            signals: sems_signalled.iter().copied().zip(signals).collect(),
        });
    }
    Some(out)
}

/// What a queue knows has happened when an instruction starts: per tracked semaphore, the value it has surely
/// reached (`i64::MIN`: nothing), shared between the snapshots taken at signals while it does not change.
type Knowledge = Rc<Vec<i64>>;

/// Drops each wait on a semaphore one queue signals that the instruction's queue order, or its other waits,
/// imply: what the instruction knows when it starts is what its queue knew after its previous instruction, joined
/// with, for each wait, what the signalling instruction knew when it ended (vector clocks over the semaphores).
fn drop_implied_waits(syncs: &mut [Syncs]) {
    let mut signallers: HashMap<ValueId, HashSet<&(u64, String)>> = HashMap::new();
    for s in syncs.iter() {
        for g in &s.signals {
            signallers.entry(g.0).or_default().insert(&s.queue);
        }
    }
    // The semaphores one queue signals, numbered, with their queue.
    let single: HashMap<ValueId, usize> =
        signallers.iter().filter(|(_, q)| q.len() == 1).enumerate().map(|(k, (&sem, _))| (sem, k)).collect();
    let n = single.len();
    for s in syncs.iter_mut() {
        // A wait for 0 always holds and orders nothing.
        s.waits.retain(|w| w.1 > 0);
    }
    if n > MAX_TRACKED_SEMAPHORES {
        return;
    }
    let mut queues: HashMap<(u64, String), (Knowledge, HashMap<ValueId, i64>)> = HashMap::new();
    // Per semaphore, its signals in order: the value and what the signaller knew (its own semaphores apart).
    let mut signals: Vec<Vec<(i64, Knowledge)>> = vec![Vec::new(); n];
    for s in syncs.iter_mut() {
        let (known, own) =
            queues.entry(s.queue.clone()).or_insert_with(|| (Rc::new(vec![i64::MIN; n]), HashMap::new()));
        dedup_waits(&mut s.waits, &single);
        let imports: Vec<Option<(Knowledge, usize, i64)>> = s
            .waits
            .iter()
            .map(|&(sem, v)| {
                let &k = single.get(&sem)?;
                let at = signals[k].partition_point(|(value, _)| *value < v);
                signals[k].get(at).map(|(value, seen)| (seen.clone(), k, *value))
            })
            .collect();
        let reached = |w: usize, sem: ValueId, v: i64| {
            let Some(&k) = single.get(&sem) else { return false };
            let before = known[k].max(own.get(&sem).copied().unwrap_or(i64::MIN));
            let by_other = imports.iter().enumerate().any(|(u, i)| {
                u != w && i.as_ref().is_some_and(|(seen, j, value)| seen[k] >= v || (*j == k && *value >= v))
            });
            before >= v || by_other
        };
        let keep: Vec<bool> = s.waits.iter().enumerate().map(|(w, &(sem, v))| !reached(w, sem, v)).collect();
        let mut joined: Option<Vec<i64>> = None;
        for (import, &kept) in imports.iter().zip(&keep) {
            let Some((seen, k, value)) = import.as_ref().filter(|_| kept) else { continue };
            let next = joined.get_or_insert_with(|| known.to_vec());
            for (a, &b) in next.iter_mut().zip(seen.iter()) {
                *a = (*a).max(b);
            }
            next[*k] = next[*k].max(*value);
        }
        if let Some(next) = joined {
            *known = Rc::new(next);
        }
        let mut kept = keep.iter();
        s.waits.retain(|_| *kept.next().expect("one flag per wait"));
        for &(sem, v) in &s.signals {
            if let Some(&k) = single.get(&sem) {
                own.insert(sem, v);
                signals[k].push((v, known.clone()));
            }
        }
    }
}

/// Keeps, of several waits on one semaphore one queue signals, the one for the largest value (that queue's later
/// signal comes after its earlier one; with several signallers, each wait orders after a different instruction).
fn dedup_waits(waits: &mut Vec<(ValueId, i64)>, single: &HashMap<ValueId, usize>) {
    let mut most: HashMap<ValueId, i64> = HashMap::new();
    for &(sem, v) in waits.iter().filter(|w| single.contains_key(&w.0)) {
        let m = most.entry(sem).or_insert(v);
        *m = (*m).max(v);
    }
    let mut done = HashSet::new();
    waits.retain(|&(sem, v)| most.get(&sem).is_none_or(|&m| m == v && done.insert(sem)));
}

/// The semaphores of the kernel no instruction waits for.
fn unused_semaphores(ctx: &Context, kernel: OpId, waited: &HashSet<ValueId>) -> Vec<OpId> {
    let Some(block) = ctx.body.regions(kernel).first().and_then(|&r| ctx.body.region(r).blocks.first().copied()) else {
        return Vec::new();
    };
    ctx.body
        .block_ops(block)
        .filter(|&op| ctx.op_name(op) == "npu.semaphore")
        .filter(|&op| !waited.contains(&ctx.body.result(op, 0)))
        .collect()
}

/// Writes `s`'s waits and signals back on its instruction.
fn rewrite(rw: &mut Rewriter<'_>, s: &Syncs) {
    let operands: Vec<ValueId> =
        s.buffers.iter().copied().chain(s.waits.iter().chain(&s.signals).map(|p| p.0)).collect();
    if operands == rw.ir().body.operands(s.op).collect::<Vec<_>>() {
        return;
    }
    let waits = list(rw, s.waits.iter().map(|p| p.1));
    let signals = list(rw, s.signals.iter().map(|p| p.1));
    rw.set_operands(s.op, &operands);
    rw.set_prop(s.op, "waits", waits);
    rw.set_prop(s.op, "signals", signals);
}

fn list(rw: &mut Rewriter<'_>, values: impl Iterator<Item = i64>) -> AttrId {
    let i64t = rw.interners().int_type(64);
    let items: Vec<AttrId> = values.map(|v| rw.interners().int_attr(v as i128, i64t)).collect();
    rw.interners().attr(Attr::Array(items.into()))
}
