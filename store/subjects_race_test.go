package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/store"
)

// TestRegisterRacingErasure: a Register of an identifier whose erasure is in
// flight must end refused once the erasure commits — never re-register the
// identifier the erasure suppressed because it checked before the erasure and
// inserted after it.
func TestRegisterRacingErasure(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	reg, err := store.NewSubjectRegistryWithSecret(e.ctx, e.pool, []byte(strings.Repeat("k", 32)))
	require.NoError(t, err)
	ref, err := reg.Register(e.ctx, "customer-77")
	require.NoError(t, err)

	erasure, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer erasure.Rollback(e.ctx) //nolint:errcheck
	require.NoError(t, reg.EraseTx(e.ctx, erasure, ref, "DSAR-7", "privacy-team", day0))

	done := make(chan error, 1)
	go func() {
		_, err := reg.Register(e.ctx, "customer-77")
		done <- err
	}()
	waiting := func() bool {
		var n int
		require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n))
		return n > 0
	}
	require.Eventually(t, waiting, time.Minute, 10*time.Millisecond, "the Register waits for the erasure")
	require.NoError(t, erasure.Commit(e.ctx))
	require.ErrorIs(t, <-done, store.ErrSubjectErased)
	var mapped int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM meterstore_subjects`).Scan(&mapped))
	require.Zero(t, mapped, "the erased identifier is not linked again")
}
