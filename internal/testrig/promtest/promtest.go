// Package promtest scrapes a Prometheus endpoint for tests and reads its
// series by name and labels.
//
//	m := promtest.Scrape(t, srv.URL+"/metrics")
//	n := m.Value("meterstore_write_rows_total", "meterstore_effect", "inserted")
package promtest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// Metrics is one scrape, by family name.
type Metrics map[string]*dto.MetricFamily

// Scrape GETs url and parses the text exposition format.
func Scrape(t testing.TB, url string) Metrics {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s", url)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err, "parse %s", url)
	return fams
}

// Value sums the samples of name whose labels include every given
// label/value pair (a histogram's name_count and name_sum read its count and
// sum). ok is false when no series matches.
func (m Metrics) Value(name string, labels ...string) (v float64, ok bool) {
	fam, part := m[name], ""
	if fam == nil {
		for _, suffix := range []string{"_count", "_sum"} {
			if f := m[strings.TrimSuffix(name, suffix)]; f != nil && strings.HasSuffix(name, suffix) {
				fam, part = f, suffix
			}
		}
	}
	if fam == nil {
		return 0, false
	}
	for _, s := range fam.Metric {
		if !matches(s, labels) {
			continue
		}
		ok = true
		switch {
		case s.Counter != nil:
			v += s.Counter.GetValue()
		case s.Gauge != nil:
			v += s.Gauge.GetValue()
		case s.Histogram != nil && part == "_count":
			v += float64(s.Histogram.GetSampleCount())
		case s.Histogram != nil && part == "_sum":
			v += s.Histogram.GetSampleSum()
		}
	}
	return v, ok
}

// Must is Value for a series the test requires to exist.
func (m Metrics) Must(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, ok := m.Value(name, labels...)
	require.True(t, ok, "no series %s%v; the scrape has %s", name, labels, m.names())
	return v
}

// IsLabel reports whether name is a label of some series in the scrape.
func (m Metrics) IsLabel(name string) bool {
	for _, f := range m {
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == name {
					return true
				}
			}
		}
	}
	return false
}

func matches(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range s.Label {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (m Metrics) names() string {
	var out []string
	for n := range m {
		if strings.HasPrefix(n, "meterstore_") || strings.HasPrefix(n, "http_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}
