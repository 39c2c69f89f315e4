package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/rulecases"
)

// ruleRows is ds of a rule case whose base is base, as rows, at versions from
// 20260310000001; each row's version scope names its own balancing month.
func ruleRows(t testing.TB, base time.Time, ds []rulecases.Delivery) []meterstore.Row {
	t.Helper()
	var rows []meterstore.Row
	for _, d := range ds {
		obis, op := obisImport, op1
		if d.Reading == rulecases.Export {
			obis = obisExport
		}
		if d.Operator == rulecases.SecondOperator {
			op = op2
		}
		bo, err := metering.ParseBdewCode(op)
		require.NoError(t, err)
		for _, x := range d.Intervals {
			from := base.Add(x.From)
			r := iv(maloA, obis, from, x.To-x.From, x.Value, 20260310000001+d.Version)
			r.VersionScope = metering.ScopeFor(bo, from, metering.SparteStrom).String()
			if d.WithMelo {
				r.MeloID = ptr(meloA)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestRuleCases runs every case of rulecases — the list store's tests also
// run through each cold write path — through PostgreSQL: each refusal names
// its rule's sentinel and writes nothing; each control is accepted.
func TestRuleCases(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	cases := rulecases.Cases()
	base := func(i int) time.Time { return day10.Add(time.Duration(i) * rulecases.Span) }
	for i, c := range cases {
		if len(c.Stored) > 0 {
			_, err := st.Write(ctx, ruleRows(t, base(i), c.Stored))
			require.NoError(t, err, c.Name)
		}
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			before := count(t, st)
			_, err := st.Write(ctx, ruleRows(t, base(i), c.Offered))
			if c.Want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.Want)
			require.ErrorIs(t, err, hot.ErrIntegrity)
			require.Equal(t, before, count(t, st), "nothing written")
		})
	}
}
