//! The matching algorithm (LLVM's `FileCheck::checkInput` and `FileCheckString::Check`):
//! two-phase CHECK-LABEL blocks, CHECK-DAG groups with the non-overlap and furthest-match
//! rules, CHECK-NOT ranges (including NOTs between DAG groups), CHECK-NEXT/SAME/EMPTY line
//! constraints and CHECK-COUNT repetition.

use super::directive::CheckString;
use super::pattern::CheckKind;
use super::report::{Reporter, Who};
use super::vars::Context;
use std::collections::BTreeSet;

/// Options that steer matching.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MatchOptions {
    /// `--enable-var-scope`
    pub enable_var_scope: bool,
    /// `--allow-deprecated-dag-overlap`
    pub allow_dag_overlap: bool,
}

/// Runs the checks of a parsed check file over one input.
pub(crate) struct Matcher<'a, 'r> {
    /// The directives.
    pub checks: &'a [CheckString],
    /// The canonicalized input.
    pub input: &'a [u8],
    /// Variable tables.
    pub ctx: &'a mut Context,
    /// Diagnostics sink.
    pub rep: &'a mut Reporter<'r>,
    /// Options.
    pub opts: MatchOptions,
}

/// A half-open range of input offsets.
type Range = (usize, usize);

fn who(cs: &CheckString) -> Who<'_> {
    Who { prefix: &cs.prefix, loc: cs.loc, pat: &cs.pat }
}

impl Matcher<'_, '_> {
    /// LLVM's `checkInput`: returns whether every check passed. After a failure inside a
    /// CHECK-LABEL block, checking resumes with the next block; a missing label stops at once.
    pub fn check_input(&mut self) -> bool {
        let checks = self.checks;
        let mut failed = false;
        let (mut i, mut j) = (0, 0);
        let mut buffer: Range = (0, self.input.len());
        loop {
            let mut region = buffer;
            if j < checks.len() {
                if checks[j].pat.ty.kind != CheckKind::Label {
                    j += 1;
                    continue;
                }
                let Some((pos, len)) = self.check(j, buffer, true) else {
                    return false;
                };
                region = (buffer.0, pos + len);
                buffer.0 = pos + len;
                j += 1;
            }
            if i != 0 && self.opts.enable_var_scope {
                self.ctx.clear_local_vars();
            }
            while i != j {
                match self.check(i, region, false) {
                    Some((pos, len)) => region.0 = pos + len,
                    None => {
                        failed = true;
                        i = j;
                        break;
                    }
                }
                i += 1;
            }
            if j == checks.len() {
                break;
            }
        }
        !failed
    }

    /// LLVM's `FileCheckString::Check` for directive `i` in `buf`: returns the absolute start of
    /// the (first) match and the length up to the end of the last match.
    fn check(&mut self, i: usize, buf: Range, label_scan: bool) -> Option<(usize, usize)> {
        let cs = &self.checks[i];
        let mut nots = Vec::new();
        let last_pos = if label_scan { buf.0 } else { self.check_dag(cs, buf, &mut nots)? };
        let mut last_end = last_pos;
        let mut first_pos = last_pos;
        for k in 1..=cs.pat.ty.count {
            let search = (last_end, buf.1);
            let res = cs.pat.matches(self.input, search, self.ctx);
            if self.rep.report(true, &who(cs), k, search, &res, self.ctx) {
                return None;
            }
            let m = res.ok()?;
            if k == 1 {
                first_pos = search.0 + m.pos;
            }
            last_end = search.0 + m.pos + m.len;
            if m.pos == 0 && m.len == 0 {
                // An empty match where the search starts: every remaining repetition would match there again
                // (`CHECK-COUNT-1000000000: {{.*}}` at the end of a line), so they all succeed now.
                break;
            }
        }
        let len = last_end - first_pos;
        if !label_scan {
            let skipped = (last_pos, first_pos);
            if self.check_next(cs, skipped) || self.check_same(cs, skipped) {
                self.rep.wrong_line(&who(cs), (first_pos, first_pos + len));
                return None;
            }
            if self.check_not(cs, skipped, &nots) {
                return None;
            }
        }
        Some((first_pos, len))
    }

    /// LLVM's `CheckNext` (also for CHECK-EMPTY): exactly one newline must separate the
    /// previous match from this one. Returns whether it failed.
    fn check_next(&mut self, cs: &CheckString, skipped: Range) -> bool {
        let name = match cs.pat.ty.kind {
            CheckKind::Next => "-NEXT",
            CheckKind::Empty => "-EMPTY",
            _ => return false,
        };
        let (n, first_nl) = self.count_newlines(skipped);
        if n == 1 {
            return false;
        }
        let what = if n == 0 {
            ": is on the same line as previous match"
        } else {
            ": is not on the line after the previous match"
        };
        self.rep.error(cs.loc, &format!("{}{name}{what}", cs.prefix));
        self.rep.note(skipped.1, "'next' match was here");
        self.rep.note(skipped.0, "previous match ended here");
        if let (true, Some(nl)) = (n > 1, first_nl) {
            self.rep.note(nl, "non-matching line after previous match is here");
        }
        true
    }

    /// LLVM's `CheckSame`: no newline may separate the previous match from this one.
    fn check_same(&mut self, cs: &CheckString, skipped: Range) -> bool {
        if cs.pat.ty.kind != CheckKind::Same || self.count_newlines(skipped).0 == 0 {
            return false;
        }
        let msg = format!("{}-SAME: is not on the same line as the previous match", cs.prefix);
        self.rep.error(cs.loc, &msg);
        self.rep.note(skipped.1, "'next' match was here");
        self.rep.note(skipped.0, "previous match ended here");
        true
    }

    /// Counts line breaks in `r` (`\r\n` and `\n\r` count once) and finds the position right
    /// after the first one.
    fn count_newlines(&self, r: Range) -> (usize, Option<usize>) {
        let s = &self.input[r.0..r.1];
        let (mut n, mut first, mut i) = (0, None, 0);
        while let Some(off) = s[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            i += off;
            n += 1;
            if i + 1 < s.len() && matches!(s[i + 1], b'\n' | b'\r') && s[i] != s[i + 1] {
                i += 1;
            }
            i += 1;
            if n == 1 {
                first = Some(r.0 + i);
            }
        }
        (n, first)
    }

    /// LLVM's `CheckNot`: none of the NOT patterns (indices into `cs.dag_not`) may match in
    /// `region`. Returns whether any did.
    fn check_not(&mut self, cs: &CheckString, region: Range, nots: &[usize]) -> bool {
        let absent = self.absent_literals(cs, region, nots);
        let mut failed = false;
        for &idx in nots.iter().filter(|i| !absent.contains(i)) {
            let dn = &cs.dag_not[idx];
            let res = dn.pat.matches(self.input, region, self.ctx);
            let w = Who { prefix: &dn.prefix, loc: dn.pat.loc, pat: &dn.pat };
            failed |= self.rep.report(false, &w, 1, region, &res, self.ctx);
        }
        failed
    }

    /// The NOT patterns of `nots` that are plain literals and do not occur in `region`, found in one pass per
    /// literal length (searching for each would be quadratic when thousands of NOT lines guard a long gap). Not
    /// finding an excluded pattern prints nothing unless `-vv`, so skipping them changes no output; with `-vv`
    /// every pattern is searched and reported.
    fn absent_literals(&self, cs: &CheckString, region: Range, nots: &[usize]) -> BTreeSet<usize> {
        let literals: Vec<(usize, &[u8], bool)> =
            nots.iter().filter_map(|&i| cs.dag_not[i].pat.literal().map(|(text, icase)| (i, text, icase))).collect();
        if self.rep.very_verbose() || literals.len() < 2 {
            return BTreeSet::new();
        }
        let hay = &self.input[region.0..region.1];
        let mut absent = BTreeSet::new();
        for icase in [false, true] {
            let group: Vec<&(usize, &[u8], bool)> = literals.iter().filter(|l| l.2 == icase).collect();
            let texts: Vec<&[u8]> = group.iter().map(|l| l.1).collect();
            let found = super::literals::occurring(hay, &texts, icase);
            absent.extend(group.iter().zip(found).filter(|(_, f)| !f).map(|(l, _)| l.0));
        }
        absent
    }

    /// LLVM's `CheckDag`: matches the CHECK-DAG groups preceding directive `cs`, checking the
    /// CHECK-NOTs between groups. Leaves the NOTs after the last group in `nots` and returns the
    /// end of the furthest match of the last group.
    fn check_dag(&mut self, cs: &CheckString, buf: Range, nots: &mut Vec<usize>) -> Option<usize> {
        let mut start = buf.0;
        let mut ranges: BTreeSet<Range> = BTreeSet::new();
        for (idx, dn) in cs.dag_not.iter().enumerate() {
            if dn.pat.ty.kind == CheckKind::Not {
                nots.push(idx);
                continue;
            }
            let m = self.match_dag(idx, cs, (start, buf.1), &mut ranges)?;
            if !self.rep.very_verbose() {
                let w = Who { prefix: &dn.prefix, loc: dn.pat.loc, pat: &dn.pat };
                self.rep.print_match(true, &w, 1, m, self.ctx);
            }
            let group_ends = cs.dag_not.get(idx + 1).is_none_or(|next| next.pat.ty.kind == CheckKind::Not);
            if !group_ends {
                continue;
            }
            if !nots.is_empty() {
                let first = ranges.first().map_or(start, |r| r.0);
                if self.check_not(cs, (start, first), nots) {
                    return None;
                }
                nots.clear();
            }
            start = ranges.last().map_or(start, |r| r.1);
            ranges.clear();
        }
        Some(start)
    }

    /// Finds a match of DAG pattern `idx` in `search` that does not overlap the group's earlier
    /// matches (kept in `ranges`, sorted and disjoint), and records it. Each overlap test is a search of the set,
    /// so a group of many DAG lines is not quadratic in them.
    fn match_dag(
        &mut self,
        idx: usize,
        cs: &CheckString,
        search: Range,
        ranges: &mut BTreeSet<Range>,
    ) -> Option<Range> {
        let dn = &cs.dag_not[idx];
        let w = Who { prefix: &dn.prefix, loc: dn.pat.loc, pat: &dn.pat };
        let mut from = search.0;
        loop {
            let s = (from, search.1);
            let res = dn.pat.matches(self.input, s, self.ctx);
            if (res.is_err() || self.rep.very_verbose()) && self.rep.report(true, &w, 1, s, &res, self.ctx) {
                return None;
            }
            let m = res.ok()?;
            let r = (s.0 + m.pos, s.0 + m.pos + m.len);
            if self.opts.allow_dag_overlap {
                let block = ranges.pop_first().map_or(r, |b| (b.0.min(r.0), b.1.max(r.1)));
                ranges.insert(block);
                return Some(r);
            }
            // The earliest recorded match that ends after this one starts: the only one it can overlap first.
            let containing = ranges.range(..=(r.0, usize::MAX)).next_back().filter(|q| q.1 > r.0);
            let next = containing.or_else(|| ranges.range((r.0 + 1, 0)..).next()).copied();
            match next {
                Some(q) if q.0 < r.1 => {
                    if self.rep.very_verbose() {
                        self.rep.discarded(q);
                    }
                    from = q.1;
                }
                _ => {
                    ranges.insert(r);
                    return Some(r);
                }
            }
        }
    }
}
