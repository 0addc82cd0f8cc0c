//! Functional coverage (docs/coverage.md): each block's [`Bench::coverpoints`] name the rules
//! of its spec that a random run must exercise — a condition on one cycle's typed inputs and
//! outputs and the model's state after that cycle's edge — and [`measure`] counts how often the
//! random stimulus of `smrtl cosim` hits each. A point no legal stimulus can reach is declared
//! [`Cover::unreachable`] with the reason, and is not counted as a miss.

use crate::check::runner;
use crate::design::{Bench, Case};
use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::{BlockModel, Layout, Simulator};
use smrtl_hdl::HasPorts;

/// A coverpoint's condition: the params, one cycle's inputs and outputs, and the model after
/// that cycle's edge.
pub type Condition<P> = Box<
    dyn Fn(&P, &<P as HasPorts>::Inputs, &<P as HasPorts>::Outputs, &<P as Bench>::Model) -> bool
        + Send
        + Sync,
>;

/// One named coverpoint of a block, with the spec section whose rule it covers.
pub struct Cover<P: Bench> {
    pub name: String,
    /// The rule's section in the block's docs page (`§3.2`).
    pub spec: &'static str,
    /// The condition, or why no legal stimulus reaches the point.
    pub kind: Kind<P>,
}

/// What a coverpoint checks.
pub enum Kind<P: Bench> {
    /// Hit in every cycle where the condition holds.
    Hit(Condition<P>),
    /// Not reachable by any legal stimulus of these params, with the reason.
    Unreachable(&'static str),
}

impl<P: Bench> Cover<P> {
    /// A point hit in every cycle where `hit` holds.
    pub fn point(
        name: impl Into<String>,
        spec: &'static str,
        hit: impl Fn(&P, &P::Inputs, &P::Outputs, &P::Model) -> bool + Send + Sync + 'static,
    ) -> Cover<P> {
        Cover {
            name: name.into(),
            spec,
            kind: Kind::Hit(Box::new(hit)),
        }
    }

    /// [`Cover::point`], or [`Cover::unreachable`] when these params give a reason
    /// (`unreachable_because`) no legal stimulus reaches it.
    pub fn unless(
        unreachable_because: Option<&'static str>,
        name: impl Into<String>,
        spec: &'static str,
        hit: impl Fn(&P, &P::Inputs, &P::Outputs, &P::Model) -> bool + Send + Sync + 'static,
    ) -> Cover<P> {
        match unreachable_because {
            Some(why) => Cover::unreachable(name, spec, why),
            None => Cover::point(name, spec, hit),
        }
    }

    /// A point no legal stimulus reaches, and `why`.
    pub fn unreachable(name: impl Into<String>, spec: &'static str, why: &'static str) -> Cover<P> {
        Cover {
            name: name.into(),
            spec,
            kind: Kind::Unreachable(why),
        }
    }
}

/// A coverpoint as reports show it, with its hits.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PointHits {
    pub name: String,
    pub spec: &'static str,
    pub hits: u64,
    /// Why the point is unreachable (then it is not a miss).
    pub unreachable: Option<&'static str>,
}

impl PointHits {
    /// Reachable and never hit.
    pub fn missed(&self) -> bool {
        self.hits == 0 && self.unreachable.is_none()
    }
}

/// The coverage of one run: cycles observed and every point's hits.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Coverage {
    pub cycles: u64,
    pub points: Vec<PointHits>,
}

impl Coverage {
    /// The reachable points never hit.
    pub fn missed(&self) -> impl Iterator<Item = &PointHits> {
        self.points.iter().filter(|p| p.missed())
    }

    /// `(hit, reachable)`.
    pub fn score(&self) -> (usize, usize) {
        let reachable = self.points.iter().filter(|p| p.unreachable.is_none());
        let hit = reachable.clone().filter(|p| p.hits > 0).count();
        (hit, reachable.count())
    }

    /// One line: `coverage: H of R coverpoints hit (U unreachable)`, then the points missed.
    pub fn summary(&self) -> String {
        let (hit, reachable) = self.score();
        let unreachable = self.points.len() - reachable;
        let mut s = format!(
            "coverage: {hit} of {reachable} coverpoints hit in {} cycles ({unreachable} unreachable)",
            self.cycles
        );
        let missed: Vec<String> = self
            .missed()
            .map(|p| format!("{} ({})", p.name, p.spec))
            .collect();
        if !missed.is_empty() {
            s += &format!("; never hit: {}", missed.join(", "));
        }
        s
    }

    /// One line per unreachable point: its name, section and why.
    pub fn unreachable_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.points.iter().filter_map(|p| {
            p.unreachable
                .map(|why| format!("  unreachable: {} ({}): {why}", p.name, p.spec))
        })
    }
}

/// Counts a block's coverpoints over cases, on a model of its own (the co-simulation proved
/// the RTL equal to the model on the same cases).
pub trait Counter: Send {
    /// Runs `case` from reset and counts every point it hits.
    fn observe(&mut self, case: &Case);
    /// The points and their hits so far.
    fn points(&self) -> Vec<PointHits>;
}

/// The [`Counter`] of block `P` at params `p`.
pub fn counter<P: Bench>(p: &P, layout: &Layout) -> Box<dyn Counter> {
    let points = p.coverpoints();
    Box::new(TypedCounter {
        hits: vec![0; points.len()],
        points,
        io: p.io(layout),
        inputs: p.idle_inputs(),
        outputs: p.zero_outputs(),
        out: vec![0; layout.out_words],
        layout: layout.clone(),
        p: p.clone(),
    })
}

struct TypedCounter<P: Bench> {
    p: P,
    layout: Layout,
    io: P::Io,
    points: Vec<Cover<P>>,
    hits: Vec<u64>,
    inputs: P::Inputs,
    outputs: P::Outputs,
    out: Vec<u64>,
}

impl<P: Bench> Counter for TypedCounter<P> {
    fn observe(&mut self, case: &Case) {
        let mut model = P::Model::new(&self.p, &self.layout);
        for cycle in case {
            model.step(cycle, &mut self.out);
            P::decode_inputs(&self.io, cycle, &mut self.inputs);
            P::read_outputs(&self.io, &self.out, &mut self.outputs);
            for (point, hits) in self.points.iter().zip(&mut self.hits) {
                if let Kind::Hit(hit) = &point.kind {
                    *hits += u64::from(hit(&self.p, &self.inputs, &self.outputs, &model));
                }
            }
        }
    }

    fn points(&self) -> Vec<PointHits> {
        self.points
            .iter()
            .zip(&self.hits)
            .map(|(point, &hits)| PointHits {
                name: point.name.clone(),
                spec: point.spec,
                hits,
                unreachable: match point.kind {
                    Kind::Hit(_) => None,
                    Kind::Unreachable(why) => Some(why),
                },
            })
            .collect()
    }
}

/// The coverage of the random cases `smrtl cosim` runs with `seed` for at least `cycles`
/// cycles: the same cases ([`crate::check::random`] draws them the same way), on the model.
pub fn measure(design: &crate::Design, cycles: u64, seed: u64) -> Coverage {
    let mut counter = design.coverage_counter();
    if counter.points().is_empty() {
        return Coverage {
            cycles: 0,
            points: vec![],
        };
    }
    let mut runner = runner(seed);
    let strategy = design.cases();
    let mut total = 0;
    while total < cycles {
        let case = strategy
            .new_tree(&mut runner)
            .expect("case strategy")
            .current();
        counter.observe(&case);
        total += case.len() as u64;
    }
    Coverage {
        cycles: total,
        points: counter.points(),
    }
}
