//! Leftmost-longest (POSIX) matching of a parsed [`Ere`] over bytes.
//!
//! The `regex` crate only offers leftmost-first semantics, so it is used as a prefilter: the
//! translated regex finds the leftmost position where a match can start (identical under both
//! semantics). From that start this engine computes, for every AST node, the *set of end
//! positions* it can reach (memoized, polynomial), takes the longest overall end, and then
//! assigns capture groups Spencer-style: in a sequence each element takes the longest span that
//! still lets the rest match, alternatives are tried in order, and a repetition takes the longest
//! iterations first (the last iteration defines nested groups). So `(a|ab)` on `ab` captures
//! `ab`, as in LLVM.
//!
//! Regexes with back-references (FileCheck emits them when a variable is used on the line that
//! defines it) are matched by an exhaustive backtracking search for the longest end; it is capped
//! by a step and depth budget ([`BACKTRACK_STEPS`], [`BACKTRACK_DEPTH`]), beyond which the search is an error.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use super::regex_posix::{self, Ere, Node, NodeId, ParseMode};

/// Spans of the capture groups; index 0 is the whole match.
pub(crate) type Captures = Vec<Option<(usize, usize)>>;

/// A compiled POSIX regex: AST plus the `regex` crate prefilter.
pub(crate) struct PosixRegex {
    ere: Ere,
    prefilter: Option<regex::bytes::Regex>,
}

impl PosixRegex {
    /// Parses and compiles `pat` (LLVM dialect, `REG_NEWLINE`, optional ASCII case folding).
    pub fn new(pat: &[u8], icase: bool) -> Result<Self, String> {
        let ere = regex_posix::parse(pat, icase, ParseMode::Llvm)?;
        let prefilter =
            regex::bytes::RegexBuilder::new(&regex_posix::to_regex_syntax(&ere)).size_limit(1 << 24).build().ok();
        Ok(PosixRegex { ere, prefilter })
    }

    /// Finds the leftmost-longest match in `hay`. `^`/`$` match at the ends of `hay`. An error when the search
    /// passes [`MAX_MATCH_WORK`].
    pub fn find(&self, hay: &[u8]) -> Result<Option<Captures>, String> {
        let mut engine = Engine::new(&self.ere, hay);
        let mut at = 0;
        while at <= hay.len() {
            let start = match &self.prefilter {
                Some(re) => match re.find_at(hay, at) {
                    Some(m) => {
                        // The prefilter's scan counts toward the search's steps, one per byte.
                        engine.work += m.end() - at;
                        m.start()
                    }
                    None => return Ok(None),
                },
                None => at,
            };
            let caps = engine.match_at(start);
            if engine.work > MAX_MATCH_WORK {
                return Err(format!("matching this regex takes more than {MAX_MATCH_WORK} steps"));
            }
            if engine.backtrack_exhausted {
                return Err(format!(
                    "matching this regex with back-references takes more than {BACKTRACK_STEPS} steps or backtracks deeper than {BACKTRACK_DEPTH} atoms"
                ));
            }
            if caps.is_some() {
                return Ok(caps);
            }
            at = start + 1;
        }
        Ok(None)
    }
}

/// The most steps (position sets computed, memoized entries) one search may take: leftmost-longest matching
/// keeps end positions per regex node and position, which `a?` repeated thousands of times makes quadratic.
pub const MAX_MATCH_WORK: usize = 1 << 21;

/// Sorted, disjoint, non-adjacent, inclusive intervals of positions.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
struct Ivs(Vec<(usize, usize)>);

impl Ivs {
    fn one(p: usize) -> Self {
        Ivs(vec![(p, p)])
    }

    /// Normalizes arbitrary intervals (sorts and merges).
    fn from_intervals(mut v: Vec<(usize, usize)>) -> Self {
        v.sort_unstable();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            match out.last_mut() {
                Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        Ivs(out)
    }

    /// Builds a set from ascending positions.
    fn from_sorted(positions: impl Iterator<Item = usize>) -> Self {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for p in positions {
            match out.last_mut() {
                Some(last) if p <= last.1 + 1 => last.1 = last.1.max(p),
                _ => out.push((p, p)),
            }
        }
        Ivs(out)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn max(&self) -> Option<usize> {
        self.0.last().map(|r| r.1)
    }

    fn contains(&self, p: usize) -> bool {
        let i = self.0.partition_point(|&(_, hi)| hi < p);
        self.0.get(i).is_some_and(|&(lo, _)| lo <= p)
    }

    fn positions(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.0.iter().flat_map(|&(lo, hi)| lo..=hi)
    }

    fn union(&self, other: &Ivs) -> Ivs {
        Ivs::from_intervals(self.0.iter().chain(&other.0).copied().collect())
    }

    /// Adds `other` in place; when it lies wholly after this set (a repetition's frontier moving forward) that
    /// is an append, not a merge of both.
    fn absorb(&mut self, other: Ivs) {
        match (self.0.last(), other.0.first()) {
            (Some(&(_, hi)), Some(&(lo, _))) if lo > hi + 1 => self.0.extend(other.0),
            (None, _) => *self = other,
            _ => *self = self.union(&other),
        }
    }

    fn minus(&self, other: &Ivs) -> Ivs {
        if other.0.last().is_none_or(|&(_, hi)| self.0.first().is_some_and(|&(lo, _)| lo > hi)) {
            return self.clone();
        }
        let mut out = Vec::new();
        for &(lo, hi) in &self.0 {
            let mut cur = lo;
            for &(olo, ohi) in &other.0 {
                if ohi < cur || olo > hi {
                    continue;
                }
                if olo > cur {
                    out.push((cur, olo - 1));
                }
                cur = ohi + 1;
                if cur > hi {
                    break;
                }
            }
            if cur <= hi {
                out.push((cur, hi));
            }
        }
        Ivs(out)
    }
}

/// End-set computation for one haystack: `step(node, S)` is the set of positions where `node`
/// can end when started at any position of `S` (a forward NFA simulation over position sets).
struct Engine<'a> {
    ere: &'a Ere,
    hay: &'a [u8],
    memo: HashMap<(NodeId, usize), Rc<Ivs>>,
    seq_memo: HashMap<(NodeId, usize, usize), Rc<Ivs>>,
    run_end: HashMap<(NodeId, usize), usize>,
    /// Steps taken; past [`MAX_MATCH_WORK`] every step gives the empty set, and `find` reports it.
    work: usize,
    /// Whether a backtracking search passed [`BACKTRACK_STEPS`] or [`BACKTRACK_DEPTH`] (its result is then
    /// incomplete, and `find` reports it).
    backtrack_exhausted: bool,
}

impl<'a> Engine<'a> {
    fn new(ere: &'a Ere, hay: &'a [u8]) -> Self {
        Engine {
            ere,
            hay,
            memo: HashMap::new(),
            seq_memo: HashMap::new(),
            run_end: HashMap::new(),
            work: 0,
            backtrack_exhausted: false,
        }
    }

    /// The longest match starting exactly at `start`, with captures.
    fn match_at(&mut self, start: usize) -> Option<Captures> {
        if self.ere.has_backrefs {
            let backtracker = Backtracker::new(self.ere, self.hay);
            let found = backtracker.longest_at(start);
            self.backtrack_exhausted |= backtracker.exhausted();
            self.work += backtracker.steps.get() as usize;
            return found;
        }
        let end = self.ends(self.ere.root, start).max()?;
        let mut caps = vec![None; self.ere.ngroups + 1];
        caps[0] = Some((start, end));
        self.dissect(self.ere.root, start, end, &mut caps);
        Some(caps)
    }

    fn assertion_holds(&self, node: &Node, pos: usize) -> bool {
        let hay = self.hay;
        let word = |p: usize| hay.get(p).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_');
        match node {
            Node::Bol => pos == 0 || hay[pos - 1] == b'\n',
            Node::Eol => pos == hay.len() || hay[pos] == b'\n',
            Node::Bow => word(pos) && (pos == 0 || !word(pos - 1)),
            Node::Eow => pos > 0 && word(pos - 1) && !word(pos),
            _ => false,
        }
    }

    /// All positions where `id` can end when started at `pos` (memoized).
    fn ends(&mut self, id: NodeId, pos: usize) -> Rc<Ivs> {
        if let Some(r) = self.memo.get(&(id, pos)) {
            return r.clone();
        }
        let r = Rc::new(self.step(id, &Ivs::one(pos)));
        self.memo.insert((id, pos), r.clone());
        r
    }

    /// End positions of children `k..` of the concatenation `id`, started at `pos` (memoized).
    fn seq_from(&mut self, id: NodeId, k: usize, pos: usize) -> Rc<Ivs> {
        if let Some(r) = self.seq_memo.get(&(id, k, pos)) {
            return r.clone();
        }
        self.work += 1;
        if self.work > MAX_MATCH_WORK {
            return Rc::default();
        }
        let r = Rc::new(self.step_seq(id, k, Ivs::one(pos)));
        self.seq_memo.insert((id, k, pos), r.clone());
        r
    }

    /// All positions where `id` can end when started anywhere in `starts`.
    fn step(&mut self, id: NodeId, starts: &Ivs) -> Ivs {
        self.work += 1 + starts.0.len();
        if starts.is_empty() || self.work > MAX_MATCH_WORK {
            return Ivs::default();
        }
        let ere = self.ere;
        match &ere.nodes[id] {
            Node::Empty => starts.clone(),
            Node::Set(set) => {
                let hay = self.hay;
                Ivs::from_sorted(
                    starts.positions().filter(|&p| hay.get(p).is_some_and(|&b| set.contains(b))).map(|p| p + 1),
                )
            }
            n @ (Node::Bol | Node::Eol | Node::Bow | Node::Eow) => {
                Ivs::from_sorted(starts.positions().filter(|&p| self.assertion_holds(n, p)))
            }
            Node::Group(_, inner) => self.step(*inner, starts),
            Node::Concat(_) => self.step_seq(id, 0, starts.clone()),
            Node::Alt(alts) => {
                let mut all = Vec::new();
                for &a in alts {
                    all.extend(self.step(a, starts).0);
                }
                Ivs::from_intervals(all)
            }
            Node::Repeat { inner, min, max } => self.step_repeat(*inner, *min, *max, starts),
            Node::Backref(_) => Ivs::default(),
        }
    }

    fn step_seq(&mut self, id: NodeId, k: usize, mut cur: Ivs) -> Ivs {
        let ere = self.ere;
        let Node::Concat(children) = &ere.nodes[id] else { unreachable!("step_seq on a non-sequence") };
        for &c in &children[k..] {
            cur = self.step(c, &cur);
            if cur.is_empty() {
                break;
            }
        }
        cur
    }

    fn step_repeat(&mut self, inner: NodeId, min: u32, max: Option<u32>, starts: &Ivs) -> Ivs {
        if let Node::Set(set) = &self.ere.nodes[inner] {
            return self.step_run(inner, *set, min, max, starts);
        }
        let mut frontier = starts.clone();
        for _ in 0..min {
            frontier = self.step(inner, &frontier);
        }
        let mut result = frontier.clone();
        let mut k = min;
        while !frontier.is_empty() && max.is_none_or(|m| k < m) && self.work <= MAX_MATCH_WORK {
            frontier = self.step(inner, &frontier).minus(&result);
            self.work += frontier.0.len();
            result.absorb(frontier.clone());
            k += 1;
        }
        result
    }

    /// For each position `q` of `[a, b]`, whether `inner*` started at `q` can end exactly at `b`, computed from `b`
    /// down (each position once, from the memoized ends of `inner`): asking the question afresh at every
    /// iteration of a repetition made its dissection quadratic in the matched length.
    fn star_finishes(&mut self, inner: NodeId, a: usize, b: usize) -> Vec<bool> {
        let mut table = vec![false; b - a + 1];
        table[b - a] = true;
        for q in (a..b).rev() {
            let ends = self.ends(inner, q);
            table[q - a] = ends.positions().any(|e| e > q && e <= b && table[e - a]);
        }
        table
    }

    /// Fast path for a repeated byte set, using cached run lengths.
    fn step_run(&mut self, id: NodeId, set: regex_posix::ByteSet, min: u32, max: Option<u32>, starts: &Ivs) -> Ivs {
        let (min, max) = (min as usize, max.map(|m| m as usize));
        let mut out = Vec::new();
        if min == 0 && max.is_none() {
            for &(lo, hi) in &starts.0 {
                out.push((lo, hi.max(self.run_end(id, set, hi))));
            }
            return Ivs::from_intervals(out);
        }
        for p in starts.positions() {
            let end = self.run_end(id, set, p);
            let end = max.map_or(end, |m| end.min(p + m));
            if end - p >= min {
                out.push((p + min, end));
            }
        }
        Ivs::from_intervals(out)
    }

    /// The first position at or after `pos` whose byte is not in `set`.
    fn run_end(&mut self, id: NodeId, set: regex_posix::ByteSet, pos: usize) -> usize {
        if let Some(&e) = self.run_end.get(&(id, pos)) {
            return e;
        }
        let hay = self.hay;
        let mut e = pos.min(hay.len());
        while e < hay.len() && set.contains(hay[e]) {
            e += 1;
        }
        self.work += 1 + (e - pos);
        if self.work > MAX_MATCH_WORK {
            return e;
        }
        for p in pos..e {
            self.run_end.insert((id, p), e);
        }
        self.run_end.insert((id, pos), e);
        e
    }

    /// Assigns capture groups inside `id`, which matches exactly `[a, b)`.
    fn dissect(&mut self, id: NodeId, a: usize, b: usize, caps: &mut Captures) {
        let ere = self.ere;
        match &ere.nodes[id] {
            Node::Group(i, inner) => {
                caps[*i] = Some((a, b));
                self.dissect(*inner, a, b, caps);
            }
            Node::Concat(_) => self.dissect_seq(id, a, b, caps),
            Node::Alt(alts) => {
                if let Some(&alt) = alts.iter().find(|&&alt| self.ends(alt, a).contains(b)) {
                    self.dissect(alt, a, b, caps);
                }
            }
            Node::Repeat { inner, min, max } => self.dissect_rep(*inner, *min, *max, a, b, caps),
            _ => {}
        }
    }

    /// Each element takes the longest span that still lets the rest match up to `b`.
    fn dissect_seq(&mut self, id: NodeId, a: usize, b: usize, caps: &mut Captures) {
        let ere = self.ere;
        let Node::Concat(children) = &ere.nodes[id] else {
            return;
        };
        let mut p = a;
        for (k, &child) in children.iter().enumerate() {
            if k + 1 == children.len() {
                self.dissect(child, p, b, caps);
                return;
            }
            let cands = self.ends(child, p);
            let chosen = cands.positions().rev().find(|&m| m <= b && self.seq_from(id, k + 1, m).contains(b));
            let Some(m) = chosen else { return };
            self.dissect(child, p, m, caps);
            p = m;
        }
    }

    /// Iterations take the longest span that still lets the remaining iterations reach `b`.
    fn dissect_rep(&mut self, inner: NodeId, min: u32, max: Option<u32>, a: usize, b: usize, caps: &mut Captures) {
        let mut p = a;
        let mut count = 0u32;
        // Built the first time the rest is `inner*`, for the positions from where `p` is then.
        let mut finishes: Option<(usize, Vec<bool>)> = None;
        while !(p == b && count >= min) && max != Some(count) {
            let rmin = min.saturating_sub(count + 1);
            let rmax = max.map(|m| m - count - 1);
            let cands = self.ends(inner, p);
            let chosen = cands.positions().rev().find(|&m| {
                if m > b || (m <= p && count >= min) {
                    return false;
                }
                if rmin == 0 && rmax.is_none() {
                    // The rest is `inner*`: whether it can end at `b` from `m`, from one table for all `m`.
                    let (base, table) = finishes.get_or_insert_with(|| (p, self.star_finishes(inner, p, b)));
                    return table[m - *base];
                }
                self.step_repeat(inner, rmin, rmax, &Ivs::one(m)).contains(b)
            });
            let Some(m) = chosen else { return };
            self.dissect(inner, p, m, caps);
            p = m;
            count += 1;
        }
    }
}

/// The most steps a backtracking search (a regex with back-references) may take.
pub const BACKTRACK_STEPS: u64 = 5_000_000;

/// The deepest a backtracking search may nest: it recurses once per atom it matches, so this bounds its stack.
pub const BACKTRACK_DEPTH: usize = 2_000;

/// Exhaustive backtracking for regexes with back-references.
struct Backtracker<'a> {
    ere: &'a Ere,
    hay: &'a [u8],
    steps: Cell<u64>,
    depth: Cell<usize>,
}

type Cont<'c> = &'c mut dyn FnMut(usize, &mut Captures);

impl<'a> Backtracker<'a> {
    fn new(ere: &'a Ere, hay: &'a [u8]) -> Self {
        Backtracker { ere, hay, steps: Cell::new(0), depth: Cell::new(0) }
    }

    fn longest_at(&self, start: usize) -> Option<Captures> {
        let mut best: Option<(usize, Captures)> = None;
        let mut caps = vec![None; self.ere.ngroups + 1];
        self.walk(self.ere.root, start, &mut caps, &mut |end, c| {
            if best.as_ref().is_none_or(|(e, _)| end > *e) {
                best = Some((end, c.clone()));
            }
        });
        best.map(|(end, mut c)| {
            c[0] = Some((start, end));
            c
        })
    }

    fn exhausted(&self) -> bool {
        self.steps.get() > BACKTRACK_STEPS || self.depth.get() > BACKTRACK_DEPTH
    }

    fn walk(&self, id: NodeId, pos: usize, caps: &mut Captures, k: Cont<'_>) {
        self.steps.set(self.steps.get() + 1);
        if self.exhausted() {
            return;
        }
        self.depth.set(self.depth.get() + 1);
        self.walk_node(id, pos, caps, k);
        self.depth.set(self.depth.get() - 1);
    }

    fn walk_node(&self, id: NodeId, pos: usize, caps: &mut Captures, k: Cont<'_>) {
        let hay = self.hay;
        match &self.ere.nodes[id] {
            Node::Empty => k(pos, caps),
            Node::Set(set) => {
                if hay.get(pos).is_some_and(|&b| set.contains(b)) {
                    k(pos + 1, caps);
                }
            }
            n @ (Node::Bol | Node::Eol | Node::Bow | Node::Eow) => {
                if Engine::new(self.ere, hay).assertion_holds(n, pos) {
                    k(pos, caps);
                }
            }
            Node::Group(i, inner) => {
                let i = *i;
                self.walk(*inner, pos, caps, &mut |p, c: &mut Captures| {
                    let saved = c[i];
                    c[i] = Some((pos, p));
                    k(p, c);
                    c[i] = saved;
                });
            }
            Node::Concat(children) => self.walk_seq(children, pos, caps, k),
            Node::Alt(alts) => {
                for &a in alts {
                    self.walk(a, pos, caps, k);
                }
            }
            Node::Repeat { inner, min, max } => self.walk_rep(*inner, *min, *max, 0, pos, caps, k),
            Node::Backref(n) => {
                let Some((a, b)) = caps[*n] else { return };
                let len = b - a;
                // Comparing the text costs a step per byte.
                self.steps.set(self.steps.get() + len as u64);
                if hay.len() >= pos + len && hay[pos..pos + len] == hay[a..b] {
                    k(pos + len, caps);
                }
            }
        }
    }

    fn walk_seq(&self, children: &[NodeId], pos: usize, caps: &mut Captures, k: Cont<'_>) {
        match children.split_first() {
            None => k(pos, caps),
            Some((&first, rest)) => {
                self.walk(first, pos, caps, &mut |p, c: &mut Captures| self.walk_seq(rest, p, c, k))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_rep(
        &self,
        inner: NodeId,
        min: u32,
        max: Option<u32>,
        count: u32,
        pos: usize,
        caps: &mut Captures,
        k: Cont<'_>,
    ) {
        if max.is_none_or(|m| count < m) {
            self.walk(inner, pos, caps, &mut |p, c: &mut Captures| {
                if p == pos && count >= min {
                    return;
                }
                self.walk_rep(inner, min, max, count + 1, p, c, k);
            });
        }
        if count >= min {
            k(pos, caps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(p: &str, hay: &str) -> Option<Vec<Option<String>>> {
        let re = PosixRegex::new(p.as_bytes(), false).unwrap();
        re.find(hay.as_bytes())
            .unwrap()
            .map(|caps| caps.iter().map(|c| c.map(|(a, b)| hay[a..b].to_string())).collect())
    }

    fn whole(p: &str, hay: &str) -> Option<String> {
        find(p, hay).map(|c| c[0].clone().unwrap())
    }

    #[test]
    fn leftmost_longest_alternation() {
        assert_eq!(whole("a|ab", "xab"), Some("ab".into()));
        assert_eq!(find("(a|ab)", "ab").unwrap()[1], Some("ab".into()));
        assert_eq!(whole("(a|ab)(c|bcd)", "abcd"), Some("abcd".into()));
        let c = find("(a|ab)(c|bcd)", "abcd").unwrap();
        assert_eq!(c[1], Some("a".into()));
        assert_eq!(c[2], Some("bcd".into()));
    }

    #[test]
    fn posix_submatch_prefers_longest_first_element() {
        let c = find("(a|ab)(bc|c)", "abc").unwrap();
        assert_eq!(c[1], Some("ab".into()));
        assert_eq!(c[2], Some("c".into()));
    }

    #[test]
    fn newline_semantics() {
        assert_eq!(whole("a.*", "abc\ndef"), Some("abc".into()));
        assert_eq!(whole("[^x]+", "ab\ncd"), Some("ab".into()));
        assert_eq!(whole("c$", "abc\ndef"), Some("c".into()));
        assert_eq!(whole("^d", "abc\ndef"), Some("d".into()));
        assert_eq!(whole("^a", "bab"), None);
    }

    #[test]
    fn repetition_and_classes() {
        assert_eq!(whole("[[:digit:]]+", "ab 123 c"), Some("123".into()));
        assert_eq!(whole("x{2,3}", "xxxxx"), Some("xxx".into()));
        assert_eq!(whole("(ab)*c", "ababc"), Some("ababc".into()));
        assert_eq!(find("(ab)*c", "ababc").unwrap()[1], Some("ab".into()));
        assert_eq!(whole("(a*)*b", "aab"), Some("aab".into()));
        assert_eq!(whole("\\d+", "42"), None);
        assert_eq!(whole("\\d+", "dd"), Some("dd".into()));
    }

    #[test]
    fn backreferences() {
        assert_eq!(whole("([a-z]+) \\1", "foo bar bar"), Some("bar bar".into()));
        assert_eq!(whole("(a+)x\\1", "aaxa aaxaa"), Some("axa".into()));
        assert_eq!(whole("(a|ab)\\1", "abab"), Some("abab".into()));
    }

    #[test]
    fn case_folding() {
        let re = PosixRegex::new(b"ab[c-d]", true).unwrap();
        assert!(re.find(b"xABD").unwrap().is_some());
    }
}
