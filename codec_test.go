package meterstore_test

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// TestRowCodecCoversTheLayout: every column of the physical layout reaches
// exactly one field of Row through Row.Field, every field of Row but Extra is
// reached by exactly one core column, and the field's Go type is the one its
// column's type and nullability call for. A core column added to the schema
// and not to the codec — or a Row field added without a column — fails here,
// not silently in a tier.
func TestRowCodecCoversTheLayout(t *testing.T) {
	// A point table not identified by MeLo: there every column whose Row field
	// can hold NULL is nullable.
	byMalo := false
	cfg, err := meterstore.TableSpec{Name: "readings_versions", TimeModel: meterstore.Point, IdentifyByMelo: &byMalo,
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "note", Nullable: true}}}.Build()
	require.NoError(t, err)
	cols := cfg.Columns()
	require.Len(t, meterstore.CoreColumns(meterstore.Interval), meterstore.CoreColumnCount)

	var r meterstore.Row
	r.Extra = make([]*string, len(cols)-meterstore.CoreColumnCount)
	rt := reflect.TypeOf(r)
	base := uintptr(unsafe.Pointer(&r))
	fieldAt := map[uintptr]string{}
	for i := 0; i < rt.NumField(); i++ {
		if f := rt.Field(i); f.Name != "Extra" {
			fieldAt[base+f.Offset] = f.Name
		}
	}
	require.Len(t, fieldAt, meterstore.CoreColumnCount, "Row fields besides Extra")

	reached := map[string]string{}
	for i, c := range cols {
		f := r.Field(i)
		require.NotNil(t, f, "column %d %s has no Row field", i, c.Name)
		p := reflect.ValueOf(f)
		require.Equal(t, reflect.Pointer, p.Kind(), c.Name)
		require.Equal(t, wantFieldType(c).String(), p.Type().String(), "Go type of column %s field", c.Name)
		require.Equal(t, i, cfg.ColumnIndex(c.Name), c.Name)
		if i >= meterstore.CoreColumnCount {
			require.Same(t, &r.Extra[i-meterstore.CoreColumnCount], f.(**string), c.Name)
			continue
		}
		name, ok := fieldAt[p.Pointer()]
		require.True(t, ok, "column %s does not reach a field of Row", c.Name)
		require.NotContains(t, reached, name, "columns %s and %s reach the same field", reached[name], c.Name)
		reached[name] = c.Name
	}
	require.Len(t, reached, meterstore.CoreColumnCount)
	require.Nil(t, r.Field(len(cols)), "past the layout")
	require.Equal(t, -1, cfg.ColumnIndex("nope"))
}

func wantFieldType(c meterstore.ColumnDef) reflect.Type {
	var t reflect.Type
	switch c.Type {
	case meterstore.TypeText:
		t = reflect.TypeFor[string]()
	case meterstore.TypeTimestamp, meterstore.TypeDate:
		t = reflect.TypeFor[time.Time]()
	case meterstore.TypeDecimal18_6:
		t = reflect.TypeFor[decimal.Decimal]()
	case meterstore.TypeDecimal20_0:
		t = reflect.TypeFor[uint64]()
	}
	if c.Nullable || c.Extra != nil { // declared columns are held as *string, null or not
		t = reflect.PointerTo(t)
	}
	return reflect.PointerTo(t)
}

// TestRowAccessors: Text and Time read through Row.Field, NULL included.
func TestRowAccessors(t *testing.T) {
	melo := "DE0001234567890123456789012345678"
	to := time.Date(2026, 1, 1, 0, 15, 0, 0, time.UTC)
	r := meterstore.Row{MaloID: "41373559241", MeloID: &melo, To: &to, Extra: []*string{nil}}
	s, ok := r.Text(meterstore.ColMaloID)
	require.True(t, ok)
	require.Equal(t, "41373559241", s)
	s, ok = r.Text(meterstore.ColMeloID)
	require.True(t, ok)
	require.Equal(t, melo, s)
	_, ok = r.Text(meterstore.ColResolution)
	require.False(t, ok, "NULL")
	_, ok = r.Text(meterstore.CoreColumnCount)
	require.False(t, ok, "a NULL declared column")
	_, ok = r.Text(meterstore.ColFrom)
	require.False(t, ok, "not text")
	got, ok := r.Time(meterstore.ColTo)
	require.True(t, ok)
	require.Equal(t, to, got)
	r.To = nil
	_, ok = r.Time(meterstore.ColTo)
	require.False(t, ok)
}
