package pgwire

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// A statement's provenance (watermark, tiers, snapshot) is told to a client
// that asks for it, and to no other: psql shows every NOTICE, also in the
// middle of a tab completion, and PostgreSQL's default client_min_messages is
// notice. So it is sent as a message of level LOG, which a client receives
// once it lowers client_min_messages to log or a debug level (SET
// client_min_messages = log, or the startup parameter, e.g. PGOPTIONS='-c
// client_min_messages=log'); and the last statement's provenance answers
// SHOW meterstore.provenance and current_setting('meterstore.provenance')
// whatever the level.

// messageLevels are client_min_messages' values, lowest first.
var messageLevels = []string{"debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"}

const (
	defaultMessageLevel = "notice"
	provenanceLevel     = "log"
	provenanceSetting   = "meterstore.provenance"
)

// messageLevel reads a client_min_messages value as PostgreSQL does.
func messageLevel(v string) (string, error) {
	v = strings.ToLower(strings.Trim(strings.TrimSpace(v), `'"`))
	if v == "debug" {
		v = "debug2"
	}
	if !slices.Contains(messageLevels, v) {
		return "", &pgError{code: "22023", msg: fmt.Sprintf("invalid value for parameter \"client_min_messages\": %q", v),
			hint: "Available values: " + strings.Join(messageLevels, ", ") + "."}
	}
	return v, nil
}

// startupMessageLevel is client_min_messages from a startup message.
func startupMessageLevel(params map[string]string) (string, error) {
	v := startupSetting(params, "client_min_messages")
	if v == "" {
		return defaultMessageLevel, nil
	}
	return messageLevel(v)
}

// startupSetting is a setting a startup message carries: as a parameter of
// its own (any case: pgjdbc sends TimeZone, libpq's PGTZ timezone), or as
// -c name=value in options (libpq's PGOPTIONS), which wins as in PostgreSQL.
func startupSetting(params map[string]string, name string) string {
	var v string
	for k, x := range params {
		if strings.EqualFold(k, name) {
			v = x
		}
	}
	opts := strings.Fields(params["options"])
	for i, o := range opts {
		o = strings.TrimPrefix(o, "--")
		if o == "-c" && i+1 < len(opts) {
			o = opts[i+1]
		} else {
			o = strings.TrimPrefix(o, "-c")
		}
		if n, val, ok := strings.Cut(o, "="); ok && strings.EqualFold(n, name) {
			v = val
		}
	}
	return v
}

// setMessageLevel applies SET client_min_messages and RESET
// client_min_messages / RESET ALL / DISCARD ALL; other statements pass.
func (sess *pgSession) setMessageLevel(q string) error {
	v, reset, ok := settingAssignment(q, "client_min_messages")
	switch {
	case !ok:
		return nil
	case reset:
		sess.minMessages = sess.startMessages
		return nil
	}
	level, err := messageLevel(v)
	if err != nil {
		return err
	}
	sess.minMessages = level
	return nil
}

// settingAssignment reads SET [SESSION|LOCAL] name {TO|=} value (value),
// SET name TO DEFAULT, RESET name, RESET ALL and DISCARD ALL (reset) for the
// setting name; ok is false for any other statement.
func settingAssignment(q, name string) (value string, reset, ok bool) {
	words := strings.Fields(strings.NewReplacer("=", " = ", ";", " ").Replace(sqltext.StripComments(q)))
	if len(words) == 2 && (strings.EqualFold(words[0], "RESET") || strings.EqualFold(words[0], "DISCARD")) {
		w := strings.Trim(words[1], `"`)
		return "", true, strings.EqualFold(w, "ALL") || strings.EqualFold(w, name)
	}
	if len(words) < 4 || !strings.EqualFold(words[0], "SET") {
		return "", false, false
	}
	words = words[1:]
	if strings.EqualFold(words[0], "SESSION") || strings.EqualFold(words[0], "LOCAL") {
		words = words[1:]
	}
	if len(words) < 3 || !strings.EqualFold(strings.Trim(words[0], `"`), name) || !(strings.EqualFold(words[1], "TO") || words[1] == "=") {
		return "", false, false
	}
	v := strings.Join(words[2:], " ")
	if strings.EqualFold(v, "DEFAULT") {
		return "", true, true
	}
	return v, false, true
}

// sends reports whether a message of level reaches the client.
func (sess *pgSession) sends(level string) bool {
	return slices.Index(messageLevels, level) >= slices.Index(messageLevels, sess.minMessages)
}

// provenance records a finished statement's provenance and sends it at
// provenanceLevel, if the client asked for that level.
func (sess *pgSession) provenance(p *engine.Provenance) {
	sess.lastProvenance = p.String()
	if !sess.sends(provenanceLevel) {
		return
	}
	severity := strings.ToUpper(provenanceLevel)
	sess.be.Send(&pgproto3.NoticeResponse{Severity: severity, SeverityUnlocalized: severity, Code: "00000",
		Message: "meterstore: " + sess.lastProvenance, Detail: provenanceDetail(p)})
}
