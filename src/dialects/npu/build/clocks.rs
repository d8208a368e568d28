//! What each queue knows has happened, as vector clocks over the queues: after instruction `s` of queue `q`, every
//! instruction of queue `p` up to `clock[p]` has ended. Queues run in order and a wait imports what the instruction
//! signalling it knew, so a wait whose instruction the waiter already knows ended (through its own queue or
//! through its other waits) orders nothing: [`Clocks::keep`] drops it. The kernel's synchronization is then as
//! `canonicalize` would leave it (`simplify_sync.rs`), without a pass over the kernel.

use super::hazards::Stamp;
use std::rc::Rc;

/// One clock: per queue, the last instruction known to have ended (0: none).
type Clock = Rc<Vec<u64>>;

/// The clocks of a kernel's queues.
#[derive(Debug, Default)]
pub struct Clocks {
    /// Per queue, its clock after each of its instructions (index `seq - 1`); snapshots share storage while equal.
    after: Vec<Vec<Clock>>,
}

impl Clocks {
    /// Of the waits `me` needs, those no other wait or `me`'s queue order implies; records what `me` knows when it
    /// ends.
    pub fn keep(&mut self, me: Stamp, waits: Vec<Stamp>) -> Vec<Stamp> {
        if self.after.len() <= me.queue {
            self.after.resize_with(me.queue + 1, Vec::new);
        }
        let known: Clock = self.after[me.queue].last().cloned().unwrap_or_default();
        let seen = |c: &Clock, q: usize| c.get(q).copied().unwrap_or(0);
        let imports: Vec<Clock> = waits.iter().map(|w| self.after[w.queue][w.seq as usize - 1].clone()).collect();
        let implied = |i: usize, w: &Stamp| {
            seen(&known, w.queue) >= w.seq
                || imports.iter().enumerate().any(|(j, c)| j != i && seen(c, w.queue) >= w.seq)
        };
        let keep: Vec<bool> = waits.iter().enumerate().map(|(i, w)| !implied(i, w)).collect();
        let mut clock: Vec<u64> = known.to_vec();
        for (c, _) in imports.iter().zip(&keep).filter(|(_, &k)| k) {
            if clock.len() < c.len() {
                clock.resize(c.len(), 0);
            }
            clock.iter_mut().zip(c.iter()).for_each(|(a, &b)| *a = (*a).max(b));
        }
        if clock.len() <= me.queue {
            clock.resize(me.queue + 1, 0);
        }
        clock[me.queue] = me.seq;
        self.after[me.queue].push(Rc::new(clock));
        waits.into_iter().zip(keep).filter(|(_, k)| *k).map(|(w, _)| w).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(queue: usize, seq: u64) -> Stamp {
        Stamp { queue, seq }
    }

    #[test]
    fn waits_known_through_a_queue_or_another_wait_are_dropped() {
        let mut c = Clocks::default();
        assert_eq!(c.keep(at(0, 1), vec![]), vec![]);
        // Queue 1 waits for queue 0's first instruction.
        assert_eq!(c.keep(at(1, 1), vec![at(0, 1)]), vec![at(0, 1)]);
        // Queue 2 waits for both: queue 1's instruction knew queue 0's had ended.
        assert_eq!(c.keep(at(2, 1), vec![at(0, 1), at(1, 1)]), vec![at(1, 1)]);
        // Queue 2 again: it already knows both.
        assert_eq!(c.keep(at(2, 2), vec![at(0, 1), at(1, 1)]), vec![]);
        // A later instruction of queue 0 is news.
        assert_eq!(c.keep(at(0, 2), vec![]), vec![]);
        assert_eq!(c.keep(at(2, 3), vec![at(0, 2)]), vec![at(0, 2)]);
    }
}
