package access

import (
	"context"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// ServerVersion is what clients are told they talk to (pgwire's
// server_version, Flight SQL's server version): the PostgreSQL release whose
// catalog queries pgwire's emulation answers (psql 15's \d).
const ServerVersion = "15.0"

// ReadOnlyReason is the rule every refused write names.
const ReadOnlyReason = "MeterStore serves queries only: a write here would bypass MeterStore's append, " +
	"and with it the tier routing (a correction below the watermark written to the hot tier is silently invisible) " +
	"and the subject-reference check (a replay could re-link an erased subject); " +
	"deliveries go in with msql import, or .import and INSERT … SELECT in msql's local shell"

// StatementLog ends a statement: its metrics record (the proto names the
// surface) and its one log line, which carries the provenance's fields — never
// a row value, never a bound parameter (the SQL text is the client's own).
func StatementLog(log *slog.Logger, proto, user, sql string, prov *engine.Provenance, rows int64, d time.Duration, err error) {
	telemetry.RecordStatement(context.Background(), engine.StatementRecord(proto, prov, rows, d, err))
	if log == nil {
		return
	}
	attrs := []any{"proto", proto, "user", user, "outcome", engine.Outcome(err), "duration_ms", float64(d.Microseconds()) / 1000,
		"rows", rows, "sql", truncate(strings.Join(strings.Fields(sql), " "), 500)}
	attrs = append(attrs, provenanceAttrs(prov)...)
	if err != nil {
		log.Warn("statement failed", append(attrs, "err", err.Error())...)
		return
	}
	log.Info("statement", attrs...)
}

// provenanceAttrs are a provenance's fields as log attributes: the boundary
// the statement ran against, the tiers and files it read, its ceilings, its scope.
func provenanceAttrs(prov *engine.Provenance) []any {
	if prov == nil {
		return nil
	}
	attrs := []any{"watermark", prov.Watermark.UTC().Format(time.RFC3339), "tiers", prov.Tiers.String(), "mode", prov.Mode.String()}
	if prov.TimeZone != "" {
		attrs = append(attrs, "time_zone", prov.TimeZone)
	}
	if len(prov.Tables) > 0 {
		attrs = append(attrs, "tables", strings.Join(prov.Tables, ","))
	}
	if len(prov.Watermarks) > 1 {
		var parts []string
		for _, t := range prov.Tables {
			parts = append(parts, t+"="+prov.Watermarks[t].UTC().Format(time.RFC3339))
		}
		attrs = append(attrs, "watermarks", strings.Join(parts, ","))
	}
	if len(prov.SnapshotIDs) > 0 {
		attrs = append(attrs, "snapshot", prov.SnapshotIDs[0])
	}
	if prov.ColdFiles > 0 {
		attrs = append(attrs, "cold_files", prov.ColdFiles, "resolved_files", prov.ResolvedFiles)
	}
	if prov.KnownAt != nil {
		attrs = append(attrs, "known_at", prov.KnownAt.UTC().Format(time.RFC3339))
	}
	if prov.MaxVersion != nil {
		attrs = append(attrs, "max_version", *prov.MaxVersion)
	}
	if len(prov.Scope) > 0 {
		attrs = append(attrs, "scope", strings.Join(prov.Scope, ","))
	}
	return attrs
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// LogPanic records a panic that ended one request — with its stack, at error
// level — and returns what that request's client is told: the value stays in
// the log, which the client may not read.
func LogPanic(log *slog.Logger, surface string, p any, attrs ...any) string {
	stack := strings.TrimSpace(string(debug.Stack()))
	log.Error(surface+": request panicked", append(attrs, "panic", p, "stack", stack)...)
	return "internal error: the server failed on this request and logged it; it keeps serving"
}

// OrDiscard is log, or a logger that drops everything when log is nil.
func OrDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
