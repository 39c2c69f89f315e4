// Package promexport installs the OpenTelemetry metric SDK with the standard
// Prometheus exporter behind MeterStore's instruments (internal/telemetry),
// for msql's long-running processes: the instruments record into it, and
// Handler serves them in the Prometheus text format, with the Go runtime and
// process collectors beside them.
//
//	exp, err := promexport.New("msql serve")
//	defer exp.Close(ctx)
//	mux.Handle("GET /metrics", exp.Handler())
//
// OpenTelemetry names become Prometheus names by the exporter's rules: dots
// become underscores, the unit is appended (meterstore.statement.duration in
// s → meterstore_statement_duration_seconds, By → _bytes; {…} annotations are
// dropped) and counters end in _total.
package promexport

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/meterstore/meterstore/internal/telemetry"
)

// Exporter is an installed SDK and its Prometheus registry.
type Exporter struct {
	registry *prometheus.Registry
	provider *sdkmetric.MeterProvider
	restore  func()
}

// New installs the SDK for MeterStore's instruments; service names the
// process in target_info (service.name).
func New(service string) (*Exporter, error) {
	reg := prometheus.NewRegistry()
	if err := errors.Join(reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return nil, err
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
	return &Exporter{registry: reg, provider: mp, restore: telemetry.Use(mp)}, nil
}

// Handler serves the metrics in the Prometheus exposition formats.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{})
}

// Close puts the instruments back on the global MeterProvider and shuts the SDK down.
func (e *Exporter) Close(ctx context.Context) error {
	e.restore()
	return e.provider.Shutdown(ctx)
}
