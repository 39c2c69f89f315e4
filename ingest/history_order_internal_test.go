package ingest

import (
	"errors"
	"testing"
)

// The second read refuses a channel's month met after a later month, or
// again after it ended: the sort and the parse disagreed, and the file is to
// be read whole rather than committed in pieces of one unit.
func TestSecondReadRefusesAUnitOutOfOrder(t *testing.T) {
	hs := &historyStream{ended: map[unitOf]bool{}, unit: unitOf{month: 5, malo: "a", obis: "x"}}
	step := func(u unitOf) error {
		err := hs.follows(u)
		if err == nil {
			hs.unit = u
		}
		return err
	}
	if err := step(unitOf{month: 5, malo: "b", obis: "x"}); err != nil {
		t.Fatalf("the next channel of the month: %v", err)
	}
	if err := step(unitOf{month: 5, malo: "a", obis: "x"}); !errors.Is(err, errOutOfOrder) {
		t.Fatalf("a channel's month again after it ended: got %v, want errOutOfOrder", err)
	}
	if err := step(unitOf{month: 6, malo: "a", obis: "x"}); err != nil {
		t.Fatalf("the next month: %v", err)
	}
	if err := step(unitOf{month: 5, malo: "c", obis: "x"}); !errors.Is(err, errOutOfOrder) {
		t.Fatalf("an earlier month: got %v, want errOutOfOrder", err)
	}
}
