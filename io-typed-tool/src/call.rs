//! What a host hands one call besides its input: progress reporting and cancellation.
//!
//! Both are transport-neutral. The MCP server (`agentio-mcp`) turns a client's progress token into
//! a [`ProgressReporter`] and its `notifications/cancelled` into [`Cancellation::cancel`]; a
//! host of its own can do the same with a channel or a UI.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// One progress report from a running tool body: `progress` out of `total` (when known).
///
/// ```
/// use agentio_tools::Progress;
/// let report = Progress::new(3.0).with_total(10.0).with_message("indexing");
/// assert_eq!(report.total, Some(10.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// How far the call is. It should grow with each report.
    pub progress: f64,
    /// The value `progress` reaches when the call is done, when known.
    pub total: Option<f64>,
    /// A line for a person watching.
    pub message: Option<String>,
}

impl Progress {
    /// A report of `progress`, with no total and no message.
    ///
    /// ```
    /// use agentio_tools::Progress;
    /// let report = Progress::new(3.0).with_total(10.0).with_message("indexing");
    /// assert_eq!((report.progress, report.total), (3.0, Some(10.0)));
    /// assert_eq!(report.message.as_deref(), Some("indexing"));
    /// assert_eq!(Progress::new(1.0).total, None);
    /// ```
    pub fn new(progress: f64) -> Self {
        Progress {
            progress,
            total: None,
            message: None,
        }
    }

    /// Sets the total (an example is on [`Self::new`]).
    #[must_use]
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the message (an example is on [`Self::new`]).
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where a call's progress reports go; a tool body sends them with
/// [`ToolContext::report_progress`](crate::ToolContext::report_progress).
///
/// ```
/// use agentio_tools::{Progress, ProgressReporter};
/// use std::sync::{Arc, Mutex};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let reporter = ProgressReporter::new(move |p: Progress| sink.lock().unwrap().push(p.progress));
/// reporter.report(Progress::new(1.0));
/// assert_eq!(*seen.lock().unwrap(), vec![1.0]);
/// ```
#[derive(Clone)]
pub struct ProgressReporter {
    sink: Arc<dyn ProgressSink>,
}

/// Where a [`ProgressReporter`] sends reports: any `Fn(Progress)`, or a host's own type (which
/// then needs no second allocation for the closure around it).
pub trait ProgressSink: Send + Sync {
    /// Takes one report. It runs on the body's task: hand the report on (to a channel, a
    /// spawned send) rather than block.
    fn send(&self, progress: Progress);
}

impl<F: Fn(Progress) + Send + Sync> ProgressSink for F {
    fn send(&self, progress: Progress) {
        self(progress);
    }
}

impl ProgressReporter {
    /// A reporter that hands every report to `sink`. The sink runs on the body's task: it
    /// should hand the report on (to a channel, a spawned send) rather than block. (An example
    /// is on the type.)
    pub fn new(sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressReporter {
            sink: Arc::new(sink),
        }
    }

    /// A reporter over a shared sink.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use agentio_tools::{Progress, ProgressReporter, ProgressSink};
    ///
    /// #[derive(Default)]
    /// struct Last(Mutex<Option<f64>>);
    /// impl ProgressSink for Last {
    ///     fn send(&self, p: Progress) { *self.0.lock().unwrap() = Some(p.progress); }
    /// }
    /// let last = Arc::new(Last::default());
    /// ProgressReporter::from_sink(last.clone()).report(Progress::new(3.0));
    /// assert_eq!(*last.0.lock().unwrap(), Some(3.0));
    /// ```
    pub fn from_sink(sink: Arc<dyn ProgressSink>) -> Self {
        ProgressReporter { sink }
    }

    /// Sends one report (an example is on the type).
    pub fn report(&self, progress: Progress) {
        self.sink.send(progress);
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressReporter")
    }
}

/// A cancellation signal for one call, shared by the host (who cancels) and the registry
/// (who stops the call and answers `cancelled`).
///
/// Cancelling stops the call at its next `.await`: the body's future is dropped (where it runs
/// as a task of its own, on a multi-thread runtime with two workers or more, its task is
/// aborted), nothing after it runs (no retry, no output
/// validation), and the audit record says `cancelled`. A tool with a file contract syncs
/// nothing back from a cancelled call.
///
/// ```
/// use agentio_tools::Cancellation;
/// let cancel = Cancellation::new();
/// let seen_by_the_registry = cancel.clone();
/// assert!(!seen_by_the_registry.is_cancelled());
/// cancel.cancel();
/// assert!(seen_by_the_registry.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A signal that has not fired (an example is on the type).
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal; every clone sees it. Firing twice is harmless.
    ///
    /// ```
    /// use agentio_tools::Cancellation;
    /// let cancellation = Cancellation::new();
    /// cancellation.cancel();
    /// cancellation.cancel();
    /// assert!(cancellation.clone().is_cancelled());
    /// ```
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the signal has fired (an example is on the type).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once the signal has fired (at once if it already has).
    ///
    /// ```
    /// use agentio_tools::Cancellation;
    /// let cancellation = Cancellation::new();
    /// let waiter = cancellation.clone();
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// runtime.block_on(async {
    ///     let waiting = tokio::spawn(async move { waiter.cancelled().await });
    ///     cancellation.cancel();
    ///     waiting.await.unwrap();
    ///     // Already fired: resolves at once.
    ///     cancellation.cancelled().await;
    /// });
    /// ```
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // Register before checking the flag, so a `cancel` in between is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellation")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::sync::Mutex;

    #[test]
    fn a_closure_reporter_gets_each_report_whole() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let reporter = ProgressReporter::new(move |p| sink.lock().unwrap().push(p));
        reporter.report(Progress::new(1.0));
        reporter.report(Progress::new(2.0).with_total(4.0).with_message("half"));
        assert_eq!(
            *seen.lock().unwrap(),
            [
                Progress::new(1.0),
                Progress {
                    progress: 2.0,
                    total: Some(4.0),
                    message: Some("half".into())
                }
            ]
        );
        assert_eq!(format!("{reporter:?}"), "ProgressReporter");
    }

    #[test]
    fn cancellation_is_seen_by_every_clone_and_wakes_a_waiter() {
        let cancel = Cancellation::new();
        let other = cancel.clone();
        assert_eq!(format!("{other:?}"), "Cancellation { cancelled: false }");
        // Polled by hand: pending until the signal fires, then ready.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut waiting = std::pin::pin!(other.cancelled());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        cancel.cancel();
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
        assert!(other.is_cancelled());
        assert_eq!(format!("{other:?}"), "Cancellation { cancelled: true }");
        // Already fired: ready at the first poll.
        assert!(std::pin::pin!(other.cancelled()).poll(&mut cx).is_ready());
    }
}
