//! `/metrics`: requests, latencies, documents and errors in Prometheus' text format.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    code: String,
}

fn latency_histogram() -> Histogram {
    // 50 µs to ~1.6 s.
    Histogram::new(exponential_buckets(5e-5, 2.0, 16))
}

/// The server's counters, shared by every request.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    errors: Family<ErrorLabels, Counter>,
    documents: Gauge,
    memory_held: Gauge,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("neardup");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        let errors = Family::<ErrorLabels, Counter>::default();
        let documents = Gauge::default();
        let memory_held = Gauge::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "Time to answer a request, by route",
            latency.clone(),
        );
        registry.register(
            "errors",
            "Requests answered with an error, by error code",
            errors.clone(),
        );
        registry.register(
            "documents",
            "Live documents in the index",
            documents.clone(),
        );
        registry.register(
            "request_memory_bytes",
            "Bytes of the memory budget held by the requests in flight",
            memory_held.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            errors,
            documents,
            memory_held,
        }
    }

    pub(crate) fn request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_string(),
                method: method.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_string(),
            })
            .observe(seconds);
    }

    pub(crate) fn error(&self, code: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                code: code.to_string(),
            })
            .inc();
    }

    pub(crate) fn documents(&self, live: u64) {
        self.documents.set(i64::try_from(live).unwrap_or(i64::MAX));
    }

    /// Read when scraped: the budget is a semaphore, its permits taken and given back
    /// by every request, with no hook of its own.
    pub(crate) fn memory_held(&self, bytes: u64) {
        self.memory_held
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
    }

    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
