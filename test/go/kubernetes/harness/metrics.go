package harness

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Sample is one line of Prometheus text exposition: name{labels} value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Metrics is a scrape of /metrics.
type Metrics []Sample

// Metrics scrapes the apiserver's /metrics.
func (a *APIServer) Metrics(t testing.TB) Metrics {
	t.Helper()
	code, body, err := a.Get("/metrics")
	if err != nil || code != 200 {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	return ParseMetrics(body)
}

// ParseMetrics parses Prometheus text exposition (comments and malformed lines are skipped).
func ParseMetrics(text string) Metrics {
	var out Metrics
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, rest := line, map[string]string{}, ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, rest = line[:i], strings.TrimSpace(line[j+1:])
			for _, pair := range splitLabels(line[i+1 : j]) {
				if k, v, ok := strings.Cut(pair, "="); ok {
					labels[k] = strings.Trim(v, `"`)
				}
			}
		} else if sp := strings.IndexByte(line, ' '); sp >= 0 {
			name, rest = line[:sp], strings.TrimSpace(line[sp+1:])
		}
		if f := strings.Fields(rest); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				out = append(out, Sample{Name: name, Labels: labels, Value: v})
			}
		}
	}
	return out
}

// splitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Sum adds the samples named `name` whose labels include every pair of `match`.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range m {
		if s.Name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			total += s.Value
		}
	}
	return total
}

// Describe lists the samples named `name`, for failure messages.
func (m Metrics) Describe(name string) string {
	var b strings.Builder
	for _, s := range m {
		if s.Name == name {
			fmt.Fprintf(&b, "%s%v %g\n", s.Name, s.Labels, s.Value)
		}
	}
	return b.String()
}
