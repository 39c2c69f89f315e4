package udf

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// stringCache memoises a parse of a repeated string (an OBIS code, a quality,
// an EIC) so that a UDF call does not re-parse, and does not allocate, per
// row. Reads are lock-free: the map is copy-on-write behind an atomic
// pointer, which suits sets of a few dozen distinct values read millions of
// times from several DuckDB threads at once. The cache stops growing at
// maxEntries (free text in a column must not grow it without bound); values
// beyond that are computed every time, which is still correct.
type stringCache[V any] struct {
	m          atomic.Pointer[map[string]V]
	mu         sync.Mutex // serialises writers
	maxEntries int
}

func newStringCache[V any](maxEntries int) *stringCache[V] {
	c := &stringCache[V]{maxEntries: maxEntries}
	m := map[string]V{}
	c.m.Store(&m)
	return c
}

// get returns the cached value for key, computing it with fn on a miss. key
// may be borrowed from DuckDB memory: it is cloned before it is stored.
// Errors are not cached.
func (c *stringCache[V]) get(key string, fn func(string) (V, error)) (V, error) {
	if v, ok := (*c.m.Load())[key]; ok {
		return v, nil
	}
	owned := strings.Clone(key)
	v, err := fn(owned)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.m.Load()
	if _, ok := old[owned]; ok || len(old) >= c.maxEntries {
		return v, nil
	}
	next := make(map[string]V, len(old)+1)
	for k, x := range old {
		next[k] = x
	}
	next[owned] = v
	c.m.Store(&next)
	return v, nil
}

// hourMemo memoises a calendar function f(t) → metering.Date per UTC hour.
//
// It is a cache of metering's answer, not a second implementation of it: a
// slot is filled by calling f, and only for an hour in which Europe/Berlin
// keeps one UTC offset and f gives the same date at the first and the last
// microsecond. Local time is then monotone across the hour, so every
// calendar function of it (the local day, the Gastag, their months) is
// constant across it. Hours failing that check (none since 1893 for Berlin,
// but the memo does not assume it) call f every time.
//
// The table is direct-mapped (hour mod memoSlots) with immutable entries
// behind atomic pointers, so concurrent DuckDB threads read it without locks
// and a hit allocates nothing: the DATE result is stored pre-boxed as the
// driver.Value the executor returns.
type hourMemo struct {
	f     func(time.Time) metering.Date
	slots []atomic.Pointer[hourEntry]
}

// memoSlots covers about 3.7 years of contiguous hours without collisions.
const memoSlots = 1 << 15

const microsPerHour = int64(time.Hour / time.Microsecond)

type hourEntry struct {
	hour int64
	date any // time.Time, midnight UTC of the metering.Date
}

func newHourMemo(f func(time.Time) metering.Date) *hourMemo {
	return &hourMemo{f: f, slots: make([]atomic.Pointer[hourEntry], memoSlots)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// date returns f(t) as a DATE driver value.
func (m *hourMemo) date(t time.Time) any {
	hour := floorDiv(t.UnixMicro(), microsPerHour)
	slot := &m.slots[uint64(hour)%memoSlots]
	if e := slot.Load(); e != nil && e.hour == hour {
		return e.date
	}
	d := m.f(t)
	boxed := any(d.Time())
	start := time.UnixMicro(hour * microsPerHour)
	end := time.UnixMicro((hour+1)*microsPerHour - 1)
	_, o1 := start.In(metering.Berlin()).Zone()
	_, o2 := end.In(metering.Berlin()).Zone()
	if o1 == o2 && m.f(start) == d && m.f(end) == d {
		slot.Store(&hourEntry{hour: hour, date: boxed})
	}
	return boxed
}
