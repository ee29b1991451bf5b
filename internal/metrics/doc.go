// Package metrics registers Tether's metrics and serves them on /metrics in
// the Prometheus text exposition format (version 0.0.4), which Prometheus
// scrapes as it scrapes any client library's output.
//
// It offers what the proxy uses and nothing more: counters, gauges and
// histograms, alone or as vectors keyed by label values, a [Registry] they
// are registered on (never a global one), the Go runtime and process
// collectors, and an [http.Handler] for the exposition.
//
// The hot path takes no lock and, for a series that exists, allocates
// nothing: a counter is two atomic words (integer increments and a float
// remainder), a gauge one, a histogram one per bucket plus its sum, and a
// vector finds a series in an immutable map replaced, copy on write, only
// when a new combination of label values first appears.
//
// Registering a collector whose name is already taken with the same type,
// help and labels returns an [AlreadyRegisteredError] carrying the collector
// registered first, so code that builds its collectors more than once (a
// pool per extractor route, a second ledger on one registry) shares one set;
// the same name with another shape is an error, and [Registry.MustRegister]
// panics on either.
package metrics
