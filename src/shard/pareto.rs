//! The Pareto frontier of the search: the assignments no other found one beats in time, peak memory per device
//! and bytes moved together. Bounded: past [`MAX_FRONTIER`] points, the point closest to another (in costs
//! scaled by the frontier's spread) is dropped, so the kept points stay spread out.

use super::evaluate::Costs;

/// Most points kept on the frontier.
pub const MAX_FRONTIER: usize = 64;

/// Non-dominated assignments with their costs, in the order they were found.
#[derive(Clone, Debug, Default)]
pub struct Frontier {
    points: Vec<(Costs, Vec<usize>)>,
}

impl Frontier {
    /// Adds an assignment unless a kept one dominates or equals it; drops those it dominates. Returns whether
    /// it was kept.
    pub fn offer(&mut self, costs: Costs, choice: &[usize]) -> bool {
        if self.points.iter().any(|(c, _)| c.dominates(&costs) || c.vector() == costs.vector()) {
            return false;
        }
        self.points.retain(|(c, _)| !costs.dominates(c));
        self.points.push((costs, choice.to_vec()));
        if self.points.len() > MAX_FRONTIER {
            self.thin();
        }
        true
    }

    /// The points, in the order found.
    pub fn points(&self) -> &[(Costs, Vec<usize>)] {
        &self.points
    }

    /// Drops the point nearest another one.
    fn thin(&mut self) {
        let vectors: Vec<[f64; 3]> = self.points.iter().map(|(c, _)| c.vector()).collect();
        let spread: Vec<f64> = (0..3)
            .map(|i| {
                let (lo, hi) = vectors.iter().fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v[i]), h.max(v[i])));
                (hi - lo).max(f64::MIN_POSITIVE)
            })
            .collect();
        let distance = |a: &[f64; 3], b: &[f64; 3]| (0..3).map(|i| ((a[i] - b[i]) / spread[i]).powi(2)).sum::<f64>();
        let mut worst = (f64::MAX, 0);
        for (i, a) in vectors.iter().enumerate() {
            let nearest = vectors.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, b)| distance(a, b));
            let nearest = nearest.fold(f64::MAX, f64::min);
            if nearest < worst.0 {
                worst = (nearest, i);
            }
        }
        self.points.remove(worst.1);
    }
}
