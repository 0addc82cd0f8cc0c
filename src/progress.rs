//! The progress line on stderr (docs/cli.md, "Progress"): what a long run is doing, with the
//! time it has taken, redrawn in place. It appears only when stderr is a terminal, and only
//! after the run has taken [`DELAY`], so short runs and redirected output stay as they were.

use indicatif::{ProgressBar, ProgressStyle};
use smrtl_hdl::progress::{set_sink, Event};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a run goes before its progress line appears.
const DELAY: Duration = Duration::from_secs(2);

struct Line {
    bar: Option<ProgressBar>,
    start: Instant,
}

/// Installs the progress sink when stderr is a terminal; otherwise nothing is ever drawn.
pub fn install() {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let line = Mutex::new(Line {
        bar: None,
        start: Instant::now(),
    });
    set_sink(Box::new(move |event| {
        let mut l = line.lock().unwrap_or_else(|p| p.into_inner());
        if let Event::Done = event {
            if let Some(bar) = l.bar.take() {
                bar.finish_and_clear();
            }
            l.start = Instant::now();
            return;
        }
        if l.bar.is_none() && l.start.elapsed() < DELAY {
            return;
        }
        let elapsed = l.start.elapsed();
        let bar = l.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new_spinner().with_elapsed(elapsed);
            bar.set_style(
                ProgressStyle::with_template("{elapsed:>4} {spinner} {wide_msg}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        match event {
            Event::Status(text) => bar.set_message(text.to_string()),
            Event::Count {
                what,
                done,
                total,
                unit,
            } => {
                bar.set_message(match (done * 100).checked_div(total) {
                    Some(pct) => format!("{what}: {done} of {total} {unit} ({pct} %)"),
                    None => format!("{what}: {done} {unit}"),
                });
            }
            Event::Done => {}
        }
    }));
}
