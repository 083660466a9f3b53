//! Progress bars on stderr, shown only when it is a terminal and the run is not quiet.

use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup::run::Stage;
use neardup::Observer;

/// The bars of one run; every method is a no-op when hidden. Clones share the bar.
#[derive(Clone)]
pub struct Bars {
    visible: bool,
    bar: Arc<Mutex<Option<ProgressBar>>>,
}

impl Bars {
    /// Bars that draw on stderr if it is a terminal and `quiet` is off.
    pub fn new(quiet: bool) -> Self {
        use std::io::IsTerminal;
        Bars {
            visible: !quiet && std::io::stderr().is_terminal(),
            bar: Arc::new(Mutex::new(None)),
        }
    }

    fn set(&self, bar: Option<ProgressBar>) {
        let mut slot = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.take() {
            old.finish_and_clear();
        }
        *slot = bar;
    }

    /// A spinner counting items of unknown total.
    pub fn spinner(&self, what: &str) {
        if !self.visible {
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg:8} {human_pos} {per_sec}").unwrap(),
        );
        bar.set_message(what.to_string());
        self.set(Some(bar));
    }

    /// One more item.
    pub fn tick(&self) {
        self.inc(1);
    }

    fn inc(&self, n: u64) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            bar.inc(n);
        }
    }

    /// The current bar is over.
    pub fn done(&self) {
        self.set(None);
    }
}

impl Observer for Bars {
    fn start(&mut self, stage: Stage, total: u64) {
        // The group stage's sorting buffers are free by now, in the arenas of the
        // threads that sorted: verification and clustering need them back less than the
        // system does.
        if stage == Stage::Verify {
            crate::trim_memory::trim();
        }
        if !self.visible {
            return;
        }
        if total == 0 {
            // No count to show: the stage's name and how long it has run.
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{spinner} {msg:10} {elapsed}").unwrap());
            bar.set_message(stage.name());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            self.set(Some(bar));
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{msg:8} [{bar:40}] {human_pos}/{human_len} {eta}")
                .unwrap()
                .progress_chars("=> "),
        );
        bar.set_message(stage.name());
        self.set(Some(bar));
    }

    fn advance(&mut self, n: u64) {
        self.inc(n);
    }

    fn finish(&mut self) {
        self.done();
    }
}
