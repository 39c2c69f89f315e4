package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// SubjectRef is an opaque subject reference: what the lake stores in a table's
// subject column instead of the natural identifier (a customer number, a name).
// It is drawn from the OS CSPRNG, so it cannot be guessed or recomputed from
// the identifier it stands for.
type SubjectRef string

// String returns the reference as stored.
func (r SubjectRef) String() string { return string(r) }

// Registry tables in PostgreSQL. The mapping is the only place the natural
// identifier lives; deleting a row there is a real deletion.
const (
	subjectsTable     = "meterstore_subjects"
	erasuresTable     = "meterstore_subject_erasures"
	suppressionsTable = "meterstore_subject_suppressions"
	// MinErasureSecret is the shortest erasure secret accepted (bytes).
	MinErasureSecret = 32
)

// SubjectRegistry maps opaque subject references to natural identifiers, in
// PostgreSQL, and erases that mapping on request (GDPR Art. 17 where retention
// does not forbid it): the readings stay, nothing can attribute them.
//
// With an erasure secret, erasure also records a keyed hash (HMAC-SHA-256) of
// the erased identifier and Register refuses any identifier matching one, so a
// replayed batch cannot rebuild the link erasure destroyed. Without one
// (NewSubjectRegistry) a replay re-registers an erased identifier under a new
// reference; use that only where ingest cannot replay.
//
// Every erasure and every lifted suppression writes an append-only audit record
// that omits the natural identifier. The registry is safe for concurrent use.
type SubjectRegistry struct {
	pool   *pgxpool.Pool
	secret []byte // nil: no suppression
}

// NewSubjectRegistry opens (creating if missing) a registry without an erasure
// secret: an erased identifier can be registered again by a replay.
func NewSubjectRegistry(ctx context.Context, pool *pgxpool.Pool) (*SubjectRegistry, error) {
	r := &SubjectRegistry{pool: pool}
	return r, r.create(ctx)
}

// NewSubjectRegistryWithSecret opens (creating if missing) a registry whose
// erasures suppress re-registration. The secret must be at least
// MinErasureSecret bytes and must stay the same for the deployment's lifetime:
// a changed secret no longer recognises earlier erasures.
func NewSubjectRegistryWithSecret(ctx context.Context, pool *pgxpool.Pool, secret []byte) (*SubjectRegistry, error) {
	if len(secret) < MinErasureSecret {
		return nil, fmt.Errorf("subject registry: erasure secret of %d bytes; use at least %d random bytes", len(secret), MinErasureSecret)
	}
	r := &SubjectRegistry{pool: pool, secret: slices.Clone(secret)}
	return r, r.create(ctx)
}

// Suppresses reports whether erasures suppress re-registration (an erasure secret is set).
func (r *SubjectRegistry) Suppresses() bool { return r.secret != nil }

func (r *SubjectRegistry) create(ctx context.Context) error {
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + subjectsTable + ` (
			ref text PRIMARY KEY,
			identifier text NOT NULL UNIQUE,
			registered_at timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE IF NOT EXISTS ` + erasuresTable + ` (
			id bigserial PRIMARY KEY,
			action text NOT NULL CHECK (action IN ('erase', 'lift_suppression')),
			ref text,
			ticket text NOT NULL,
			actor text NOT NULL,
			at timestamptz NOT NULL,
			suppressed boolean NOT NULL,
			recorded_at timestamptz NOT NULL DEFAULT now())`,
		// Append-only: the audit trail refuses UPDATE and DELETE.
		`CREATE OR REPLACE FUNCTION meterstore_subject_erasures_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'meterstore_subject_erasures is append-only'; END $$`,
		`DO $$ BEGIN
			IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'meterstore_subject_erasures_append_only') THEN
				CREATE TRIGGER meterstore_subject_erasures_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ` + erasuresTable + `
				FOR EACH STATEMENT EXECUTE FUNCTION meterstore_subject_erasures_append_only();
			END IF;
		END $$`,
		`CREATE TABLE IF NOT EXISTS ` + suppressionsTable + ` (
			hash bytea PRIMARY KEY,
			erasure_id bigint NOT NULL REFERENCES ` + erasuresTable + `(id),
			created_at timestamptz NOT NULL DEFAULT now())`,
	}
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create subject registry: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	// Two stores opening at once must not race on CREATE … IF NOT EXISTS.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('meterstore:subject-registry'))"); err != nil {
		return fmt.Errorf("create subject registry: %w", err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("create subject registry: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create subject registry: %w", err)
	}
	return nil
}

func (r *SubjectRegistry) hash(identifier string) []byte {
	m := hmac.New(sha256.New, r.secret)
	m.Write([]byte(identifier))
	return m.Sum(nil)
}

func newRef() (SubjectRef, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("draw subject reference: %w", err)
	}
	return SubjectRef("subj_" + hex.EncodeToString(b[:])), nil
}

// Register returns the reference for identifier, issuing a new one on first
// sight. It is idempotent: registering the same identifier again returns the
// same reference, so a redelivered batch maps to the same subject. An
// identifier erased under an erasure secret is refused with ErrSubjectErased.
//
// Register and an erasure of the same identifier serialise on the
// identifier's lock, and Register decides in one statement read after it: the
// suppression check, the insert and the existing reference see one state, so
// a Register never links again what an erasure committed meanwhile.
func (r *SubjectRegistry) Register(ctx context.Context, identifier string) (SubjectRef, error) {
	if strings.TrimSpace(identifier) == "" {
		return "", errors.New("register subject: empty identifier")
	}
	ref, err := newRef()
	if err != nil {
		return "", err
	}
	var hash []byte
	if r.secret != nil {
		hash = r.hash(identifier)
	}
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return "", fmt.Errorf("register subject: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := lockIdentifier(ctx, tx, identifier); err != nil {
		return "", fmt.Errorf("register subject: %w", err)
	}
	var suppressed bool
	var got *string
	err = tx.QueryRow(ctx, `WITH sup AS (SELECT EXISTS (SELECT 1 FROM `+suppressionsTable+` WHERE hash = $3) AS erased),
		ins AS (INSERT INTO `+subjectsTable+` (ref, identifier) SELECT $1, $2 FROM sup WHERE NOT sup.erased
			ON CONFLICT (identifier) DO NOTHING RETURNING ref)
		SELECT (SELECT erased FROM sup), coalesce((SELECT ref FROM ins), (SELECT ref FROM `+subjectsTable+` WHERE identifier = $2))`,
		string(ref), identifier, hash).Scan(&suppressed, &got)
	if err != nil {
		return "", fmt.Errorf("register subject: %w", err)
	}
	if suppressed {
		return "", fmt.Errorf("register subject: %w; a replay must not rebuild the link, LiftSuppression reverses a mistaken erasure", ErrSubjectErased)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", fmt.Errorf("register subject: commit: %w", err)
	}
	return SubjectRef(*got), nil
}

// lockIdentifier takes the transaction-scoped lock Register and an erasure of
// identifier serialise on.
func lockIdentifier(ctx context.Context, tx pgx.Tx, identifier string) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1::int4, hashtext($2))", int32(pglock.Key("subject-registry")), identifier)
	return err
}

// Identifier returns the natural identifier a reference stands for, or
// ErrUnknownSubject when the registry does not back it (never issued, or erased).
func (r *SubjectRegistry) Identifier(ctx context.Context, ref SubjectRef) (string, error) {
	var id string
	err := r.pool.QueryRow(ctx, `SELECT identifier FROM `+subjectsTable+` WHERE ref = $1`, string(ref)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("subject %s: %w", ref, ErrUnknownSubject)
	}
	if err != nil {
		return "", fmt.Errorf("look up subject %s: %w", ref, err)
	}
	return id, nil
}

// Unbacked returns the references among refs the registry does not back, in
// input order without repeats; empty means all are backed.
func (r *SubjectRegistry) Unbacked(ctx context.Context, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT u.ref FROM unnest($1::text[]) AS u(ref)
		WHERE NOT EXISTS (SELECT 1 FROM `+subjectsTable+` s WHERE s.ref = u.ref)`, refs)
	if err != nil {
		return nil, fmt.Errorf("check subject references: %w", err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("check subject references: %w", err)
	}
	set := map[string]bool{}
	for _, m := range missing {
		set[m] = true
	}
	var out []string
	for _, ref := range refs {
		if set[ref] {
			out = append(out, ref)
			delete(set, ref)
		}
	}
	return out, nil
}

// Erase destroys the link between ref and its identifier, in its own
// transaction (see EraseTx). It is irreversible for that reference.
func (r *SubjectRegistry) Erase(ctx context.Context, ref SubjectRef, ticket, actor string, at time.Time) error {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("erase subject: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := r.EraseTx(ctx, tx, ref, ticket, actor, at); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("erase subject: commit: %w", err)
	}
	return nil
}

// EraseTx erases inside the caller's transaction, so an erasure commits or
// rolls back together with the caller's own bookkeeping (a DSAR ticket closed,
// a CRM record deleted). It deletes the mapping row (a real deletion, not a
// flag), appends an audit record (reference, ticket, actor, time — never the
// identifier) and, with an erasure secret, records the identifier's keyed hash
// so Register refuses it from then on. An unknown reference is ErrUnknownSubject
// and nothing is written.
func (r *SubjectRegistry) EraseTx(ctx context.Context, tx pgx.Tx, ref SubjectRef, ticket, actor string, at time.Time) error {
	if ticket == "" || actor == "" {
		return errors.New("erase subject: ticket and actor are required for the audit record")
	}
	var identifier string
	err := tx.QueryRow(ctx, `SELECT identifier FROM `+subjectsTable+` WHERE ref = $1`, string(ref)).Scan(&identifier)
	if err == nil {
		err = lockIdentifier(ctx, tx, identifier)
	}
	if err == nil {
		// After the lock: a concurrent erasure of the same reference may have won.
		err = tx.QueryRow(ctx, `DELETE FROM `+subjectsTable+` WHERE ref = $1 RETURNING identifier`, string(ref)).Scan(&identifier)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("erase subject %s: %w", ref, ErrUnknownSubject)
	}
	if err != nil {
		return fmt.Errorf("erase subject %s: %w", ref, err)
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO `+erasuresTable+` (action, ref, ticket, actor, at, suppressed)
		VALUES ('erase', $1, $2, $3, $4, $5) RETURNING id`, string(ref), ticket, actor, at.UTC(), r.secret != nil).Scan(&id); err != nil {
		return fmt.Errorf("erase subject %s: audit: %w", ref, err)
	}
	if r.secret != nil {
		if _, err := tx.Exec(ctx, `INSERT INTO `+suppressionsTable+` (hash, erasure_id) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`,
			r.hash(identifier), id); err != nil {
			return fmt.Errorf("erase subject %s: suppress: %w", ref, err)
		}
	}
	return nil
}

// LiftSuppression reverses a mistaken erasure's suppression: identifier may be
// registered again — under a new reference, never the old link. It writes an
// audit record (without the identifier). Lifting what is not suppressed is a
// no-op that is still audited. It needs an erasure secret.
func (r *SubjectRegistry) LiftSuppression(ctx context.Context, identifier, ticket, actor string, at time.Time) error {
	if r.secret == nil {
		return errors.New("lift suppression: this registry has no erasure secret, so nothing is suppressed")
	}
	if ticket == "" || actor == "" {
		return errors.New("lift suppression: ticket and actor are required for the audit record")
	}
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("lift suppression: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `DELETE FROM `+suppressionsTable+` WHERE hash = $1`, r.hash(identifier)); err != nil {
		return fmt.Errorf("lift suppression: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+erasuresTable+` (action, ref, ticket, actor, at, suppressed)
		VALUES ('lift_suppression', NULL, $1, $2, $3, false)`, ticket, actor, at.UTC()); err != nil {
		return fmt.Errorf("lift suppression: audit: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("lift suppression: commit: %w", err)
	}
	return nil
}

// ErasureRecord is one entry of the append-only audit trail. It carries no
// natural identifier.
type ErasureRecord struct {
	ID         int64
	Action     string // "erase" or "lift_suppression"
	Ref        SubjectRef
	Ticket     string
	Actor      string
	At         time.Time
	Suppressed bool
}

// AuditTrail lists every erasure and lifted suppression, oldest first.
func (r *SubjectRegistry) AuditTrail(ctx context.Context) ([]ErasureRecord, error) {
	rows, err := r.pool.Query(ctx, `SELECT id, action, coalesce(ref, ''), ticket, actor, at, suppressed FROM `+erasuresTable+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read erasure audit trail: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ErasureRecord, error) {
		var e ErasureRecord
		var ref string
		err := row.Scan(&e.ID, &e.Action, &ref, &e.Ticket, &e.Actor, &e.At, &e.Suppressed)
		e.Ref = SubjectRef(ref)
		return e, err
	})
}

// checkSubjects refuses a subject reference the store's registry does not back,
// on a table that declares a subject column: either the pipeline invented it
// (rows nobody can attribute, from birth) or it belongs to an erased subject (a
// replay rebuilding the link erasure destroyed). Null is allowed where the
// column is nullable.
func (t *Table) checkSubjects(ctx context.Context, rows []meterstore.Row) error {
	col := t.cfg.SubjectColumn()
	reg := t.st.cfg.Subjects
	if col == "" || reg == nil || len(rows) == 0 {
		return nil
	}
	idx := -1
	for i, c := range t.cfg.ExtraColumns() {
		if c.Name == col {
			idx = i
		}
	}
	seen := map[string]bool{}
	var refs []string
	for _, r := range rows {
		if idx < len(r.Extra) && r.Extra[idx] != nil && !seen[*r.Extra[idx]] {
			seen[*r.Extra[idx]] = true
			refs = append(refs, *r.Extra[idx])
		}
	}
	missing, err := reg.Unbacked(ctx, refs)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("append to %s: column %s: %w: %s (never issued by the registry, or erased); register the subject first, and never replay rows of an erased one",
			t.cfg.Name(), col, ErrUnknownSubject, strings.Join(missing, ", "))
	}
	return nil
}

// RegisterSubject registers identifier with the store's registry (see SubjectRegistry.Register).
func (s *Store) RegisterSubject(ctx context.Context, identifier string) (SubjectRef, error) {
	if s.cfg.Subjects == nil {
		return "", errors.New("register subject: the store has no subject registry (Config.Subjects)")
	}
	return s.cfg.Subjects.Register(ctx, identifier)
}

// EraseSubject erases ref with the store's registry (see SubjectRegistry.Erase).
// The readings stay; nothing can attribute them any more.
func (s *Store) EraseSubject(ctx context.Context, ref SubjectRef, ticket, actor string, at time.Time) error {
	if s.cfg.Subjects == nil {
		return errors.New("erase subject: the store has no subject registry (Config.Subjects)")
	}
	return s.cfg.Subjects.Erase(ctx, ref, ticket, actor, at)
}
