//! Numbers: bounds, `multipleOf`, exact on the validator's own reading of numbers, and the
//! search for a number the producer allows and the consumer refuses.

use serde_json::{Map, Value, json};

use super::checker::*;
use crate::types::INTEGER;

/// A numeric interval: bounds with exclusivity.
#[derive(Clone, Copy, Debug)]
pub(super) struct Interval {
    pub(super) lo: f64,
    pub(super) lo_excl: bool,
    pub(super) hi: f64,
    pub(super) hi_excl: bool,
}

impl Interval {
    pub(super) fn of(map: &Map<String, Value>, integer: bool) -> Interval {
        let mut iv = Interval {
            lo: f64::NEG_INFINITY,
            lo_excl: false,
            hi: f64::INFINITY,
            hi_excl: false,
        };
        if let Some(m) = number(map.get("minimum")) {
            iv.lo = m;
        }
        if let Some(m) = number(map.get("exclusiveMinimum"))
            && m >= iv.lo
        {
            iv.lo = m;
            iv.lo_excl = true;
        }
        if let Some(m) = number(map.get("maximum")) {
            iv.hi = m;
        }
        if let Some(m) = number(map.get("exclusiveMaximum"))
            && m <= iv.hi
        {
            iv.hi = m;
            iv.hi_excl = true;
        }
        if integer {
            // Over the integers, every bound is inclusive.
            if iv.lo.is_finite() {
                iv.lo = if iv.lo_excl {
                    iv.lo.floor() + 1.0
                } else {
                    iv.lo.ceil()
                };
                iv.lo_excl = false;
            }
            if iv.hi.is_finite() {
                iv.hi = if iv.hi_excl {
                    iv.hi.ceil() - 1.0
                } else {
                    iv.hi.floor()
                };
                iv.hi_excl = false;
            }
        }
        iv
    }

    /// Whether `x` lies within the interval.
    pub(super) fn holds(&self, x: f64) -> bool {
        (x > self.lo || (x == self.lo && !self.lo_excl))
            && (x < self.hi || (x == self.hi && !self.hi_excl))
    }

    /// Whether `self` lies within `other`.
    pub(super) fn within(&self, other: &Interval) -> bool {
        let lo_ok = self.lo > other.lo || (self.lo == other.lo && (self.lo_excl || !other.lo_excl));
        let hi_ok = self.hi < other.hi || (self.hi == other.hi && (self.hi_excl || !other.hi_excl));
        lo_ok && hi_ok
    }
}

/// A finite `f64` as the shortest decimal that reads back as it: `(mantissa, exponent)`, the
/// value being `mantissa * 10^exponent` (how the validator reads numbers for `multipleOf`).
pub(super) fn decimal(x: f64) -> Option<(i128, i32)> {
    if !x.is_finite() {
        return None;
    }
    // `{:e}` prints the shortest round-trip digits: `-1.25e-3`, `3e-1`.
    let text = format!("{x:e}");
    let (digits, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let decimals = digits.split_once('.').map_or(0, |(_, f)| f.len());
    let mantissa: i128 = digits.replace('.', "").parse().ok()?;
    Some((mantissa, exponent - i32::try_from(decimals).ok()?))
}

/// A `multipleOf`, with the validator's own test of it: which numbers are its multiples is
/// the validator's answer (decimal: `0.3` is a multiple of `0.1`), never a second reading.
pub(super) struct Multiple {
    pub(super) of: f64,
    pub(super) check: jsonschema::Validator,
}

impl Multiple {
    pub(super) fn new(of: Option<f64>) -> Option<Multiple> {
        let of = of.filter(|m| *m > 0.0 && m.is_finite())?;
        let check = jsonschema::validator_for(&json!({ "multipleOf": of })).ok()?;
        Some(Multiple { of, check })
    }

    pub(super) fn divides(&self, x: f64) -> bool {
        x.is_finite() && self.check.is_valid(&json!(x))
    }
}

/// The `k`-th multiple of `m` (`k` integral), computed on `m`'s shortest decimal so that the
/// third multiple of `0.1` is `0.3`, not `0.30000000000000004`.
pub(super) fn times(k: f64, m: f64) -> f64 {
    let whole = k as i128;
    if let Some((mantissa, exponent)) = decimal(m)
        // `k` as an integer, exactly (not saturated)
        && whole as f64 == k
        && let Some(product) = whole.checked_mul(mantissa)
        && let Ok(x) = format!("{product}e{exponent}").parse::<f64>()
    {
        return x;
    }
    k * m
}

/// A number as JSON: an integer as an integer, where `f64` holds it exactly (below 2^53).
pub(super) fn number_value(x: f64, integer: bool) -> Value {
    if integer && x.abs() < TWO_TO_53 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// How far from an anchor the witness search looks, in steps of the producer.
pub(super) const NEAR: i32 = 12;
/// A producer holding at most this many multiples is checked number by number.
pub(super) const ENUMERABLE: f64 = 256.0;

/// The numbers of one numeric type (`INTEGER` or `FRACTION`) that a producer's bounds and
/// `multipleOf` allow.
pub(super) struct Numbers {
    /// The range, its ends moved in to the first and last multiple where one was found.
    pub(super) range: Interval,
    /// The producer's `multipleOf`.
    pub(super) multiple: Option<Multiple>,
    pub(super) integer: bool,
}

impl Numbers {
    pub(super) fn of(map: &Map<String, Value>, t: u8) -> Numbers {
        let integer = t == INTEGER;
        let multiple = Multiple::new(number(map.get("multipleOf")));
        let step = multiple.as_ref().map(|m| m.of);
        let mut numbers = Numbers {
            range: Interval::of(map, integer),
            multiple,
            integer,
        };
        if let Some(m) = step {
            // The first and last multiple of the type inside the range bound every number of
            // the producer (when none is found near an end, that end stays: a looser bound).
            // (The search starts at the multiple `floor` / `ceil` of the quotient gives, which
            // is within rounding of the end and never past it.)
            let range = numbers.range;
            if range.lo.is_finite() {
                let k = (range.lo / m).floor();
                if let Some(x) = (0..=NEAR * 4)
                    .map(|i| times(k + f64::from(i), m))
                    .find(|x| numbers.holds(*x))
                {
                    numbers.range.lo = x;
                    numbers.range.lo_excl = false;
                }
            }
            if range.hi.is_finite() {
                let k = (range.hi / m).ceil();
                if let Some(x) = (0..=NEAR * 4)
                    .map(|i| times(k - f64::from(i), m))
                    .find(|x| numbers.holds(*x))
                {
                    numbers.range.hi = x;
                    numbers.range.hi_excl = false;
                }
            }
        }
        numbers
    }

    /// Whether there is no number at all (an empty range, or one holding no multiple).
    pub(super) fn is_empty(&self) -> bool {
        // A reversed range; the non-integers among the multiples of an integer (there are
        // none); a range of few numbers with none of them in it (one point among them: an
        // exclusive one, or an integer as a non-integer's range).
        self.range.lo > self.range.hi
            || (!self.integer && self.multiple.as_ref().is_some_and(|m| m.of.fract() == 0.0))
            || self.enumerate().is_some_and(|all| all.is_empty())
    }

    /// One of the numbers: the least when the range has a lower end, else the one nearest zero
    /// (or nearest the upper end, below zero), the larger on a tie (`2.5` of `±2.5`).
    pub(super) fn example(&self) -> Option<f64> {
        if let Some(all) = self.enumerate() {
            return all.first().copied();
        }
        let Interval { lo, hi, .. } = self.range;
        let anchor = if lo.is_finite() {
            lo
        } else if hi.is_finite() {
            hi.min(0.0)
        } else {
            0.0
        };
        let near = self.near(&[anchor]);
        if self.grid().is_some() {
            let distance = |x: &f64| (x - anchor).abs();
            near.into_iter()
                .min_by(|a, b| distance(a).total_cmp(&distance(b)).then(b.total_cmp(a)))
        } else {
            // In the order `near` tries offsets: the anchor, then halves, quarters, ...
            near.into_iter().next()
        }
    }

    /// The grid the numbers lie on, where they lie on one: the `multipleOf`, or the integers.
    pub(super) fn grid(&self) -> Option<f64> {
        self.multiple
            .as_ref()
            .map(|m| m.of)
            .or(self.integer.then_some(1.0))
    }

    /// Whether `x` is one of the numbers (by bounds, type and `multipleOf`).
    pub(super) fn holds(&self, x: f64) -> bool {
        x.is_finite()
            && self.range.holds(x)
            && (x.fract() == 0.0) == self.integer
            && self.multiple.as_ref().is_none_or(|m| m.divides(x))
    }

    /// The step between neighbouring numbers, where they have one: the `multipleOf`, or 1
    /// for integers (the smallest integer multiple of a fractional `multipleOf`).
    pub(super) fn step(&self) -> Option<f64> {
        match (&self.multiple, self.integer) {
            (None, true) => Some(1.0),
            (None, false) => None,
            (Some(m), false) => Some(m.of),
            (Some(m), true) => (1..=64)
                .map(|k| times(f64::from(k), m.of))
                .find(|x| x.fract() == 0.0 && m.divides(*x)),
        }
    }

    /// Whether every number is a multiple of `m`: `m` divides the step (a `multipleOf` `p`'s
    /// non-integer multiples have no larger common divisor than `p`). Without a step (the
    /// non-integers of a range), never.
    pub(super) fn implies_multiple(&self, m: &Multiple) -> bool {
        self.step().is_some_and(|step| m.divides(step))
    }

    /// Every number, in order, when there are few: a single point, or a bounded range of at
    /// most `ENUMERABLE` steps.
    pub(super) fn enumerate(&self) -> Option<Vec<f64>> {
        let Interval { lo, hi, .. } = self.range;
        if lo == hi {
            return Some([lo].into_iter().filter(|x| self.holds(*x)).collect());
        }
        let step = self.grid()?;
        // An unbounded range is infinitely many steps wide (and a range's ends are never NaN:
        // a schema cannot write one).
        if (hi - lo) / step > ENUMERABLE {
            return None;
        }
        // The quotients are within rounding of the first and last index, and `floor` / `ceil`
        // can only widen: a point outside the range is dropped by `holds`.
        let first = (lo / step).floor();
        let last = (hi / step).ceil();
        let count = (last - first) as i32;
        Some(
            (0..=count)
                .map(|i| times(first + f64::from(i), step))
                .filter(|x| self.holds(*x))
                .collect(),
        )
    }

    /// Numbers within `NEAR` steps of each anchor (for the non-integers of a range without a
    /// step: the anchor and points a fraction away from it, a third among them, which no
    /// binary `multipleOf` divides).
    pub(super) fn near(&self, anchors: &[f64]) -> Vec<f64> {
        const OFFSETS: [f64; 9] = [
            0.0,
            0.5,
            0.25,
            0.125,
            1.0 / 3.0,
            0.75,
            1.5,
            2.5,
            1.0 / 1024.0,
        ];
        let mut out = Vec::new();
        for &a in anchors.iter().filter(|a| a.is_finite()) {
            match self.grid() {
                Some(step) => {
                    let k = (a / step).floor();
                    for i in -NEAR..=NEAR {
                        out.push(times(k + f64::from(i), step));
                    }
                }
                None => {
                    for d in OFFSETS {
                        out.extend([a + d, a - d]);
                    }
                }
            }
        }
        out.retain(|x| self.holds(*x));
        out
    }
}

/// 2^53: past it, not every integer is an `f64`.
pub(super) const TWO_TO_53: f64 = 9_007_199_254_740_992.0;

/// Integers past 2^53 are not all exact as `f64`; bounds there are not reasoned about. The
/// test is on the `f64`, so it must exclude 2^53 itself: 2^53 + 1 written in the schema reads
/// as 2^53 (and a bound of 2^53 would then prove that a producer allowing 2^53 + 1 fits).
pub(super) fn exact(map: &Map<String, Value>) -> bool {
    [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]
    .iter()
    .all(|k| number(map.get(*k)).is_none_or(|n| n.abs() < TWO_TO_53))
}

impl<'a> Checker<'a> {
    pub(super) fn numbers(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &Map<String, Value>,
        c_map: &Map<String, Value>,
        t: u8,
    ) -> Outcome {
        if !exact(p_map) || !exact(c_map) {
            return unknown(p, c, "numeric bounds beyond 2^53 are not reasoned about");
        }
        let integer = t == INTEGER;
        // (A type whose range holds none of it never gets here: the type loop skips it.)
        let producer = Numbers::of(p_map, t);
        let ci = Interval::of(c_map, integer);
        let cm = Multiple::new(number(c_map.get("multipleOf")));
        if cm.is_none() && c_map.contains_key("multipleOf") {
            return unknown(p, c, "the consumer's `multipleOf` cannot be built");
        }
        // Refused by the consumer: outside its range, or not one of its multiples.
        let refused = |x: f64| !ci.holds(x) || cm.as_ref().is_some_and(|m| !m.divides(x));
        let reason = |x: f64| {
            if ci.holds(x) {
                "the consumer's `multipleOf` is not implied by the producer's"
            } else {
                "the producer allows numbers outside the consumer's range"
            }
        };
        // Past 2^53 the validator reads a number through `f64` before it divides it by a
        // fractional `multipleOf`, rounding it: there, which numbers it calls
        // multiples is not what arithmetic says (a multiple of 6 near 2^64 is refused as a
        // multiple of 1.5), so a proof by arithmetic would not hold against it. Only values the
        // validators themselves judge (a few numbers, or a witness) decide such a pair. (A
        // fraction that divides 1, like 0.25, divides every integer, and past 2^53 every number
        // is an integer, rounded or not: no hazard.)
        let rounds = |m: &Multiple| m.of.fract() != 0.0 && !m.divides(1.0);
        // (A consumer whose `multipleOf` divides 1 takes every number past 2^53, whatever the
        // producer's rounding.)
        // (Nor is there a hazard when both sides ask for the same `multipleOf`: the validator
        // then answers both the same way, rounded or not.)
        let same = matches!((&cm, &producer.multiple), (Some(c), Some(p)) if c.of == p.of);
        let rounding = !same
            && cm.as_ref().is_some_and(|m| !m.divides(1.0))
            && (cm.as_ref().is_some_and(rounds) || producer.multiple.as_ref().is_some_and(rounds))
            // Finite ends lie within 2^53 (`exact` let nothing else through, `multipleOf`s
            // included): only an open end reaches past it.
            && !(producer.range.lo.is_finite() && producer.range.hi.is_finite());
        if !rounding
            && producer.range.within(&ci)
            && cm.as_ref().is_none_or(|m| producer.implies_multiple(m))
        {
            return Outcome::Ok;
        }
        // A producer of few numbers: each is checked, and the answer is exact.
        if let Some(all) = producer.enumerate() {
            for x in all {
                let v = number_value(x, integer);
                match (
                    self.valid(Side::Producer, p, &v),
                    self.valid(Side::Consumer, c, &v),
                ) {
                    (Some(false), _) | (Some(true), Some(true)) => {}
                    (Some(true), Some(false)) => return fail(p, c, v, reason(x)),
                    _ => return unknown(p, c, "a numeric schema the validator cannot build"),
                }
            }
            return Outcome::Ok;
        }
        // Otherwise the producer's numbers nearest the places where the answer can change:
        // its own ends, the consumer's ends (both sides), and zero. A producer with infinitely
        // many numbers that the shortcut above did not prove has a refused one there: past a
        // consumer's end it reaches, or among two neighbours (not both multiples of a
        // `multipleOf` that does not divide the producer's step).
        let anchors = [producer.range.lo, producer.range.hi, ci.lo, ci.hi, 0.0];
        for x in producer.near(&anchors) {
            if !refused(x) {
                continue;
            }
            let v = number_value(x, integer);
            if self.valid(Side::Producer, p, &v) == Some(true)
                && self.valid(Side::Consumer, c, &v) == Some(false)
            {
                return fail(p, c, v, reason(x));
            }
        }
        if rounding {
            return unknown(
                p,
                c,
                "past 2^53 the validator rounds a number before it divides it by a fractional `multipleOf`, so the producer's multiples are not proven to be the consumer's",
            );
        }
        unknown(
            p,
            c,
            "numeric constraints differ and no value showing it was found",
        )
    }
}
