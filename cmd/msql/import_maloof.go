package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/meterstore/meterstore/metering"
)

// loadMaloOf reads the Messlokation → Marktlokation mapping of --malo-of: a
// CSV file (comma or semicolon) whose header names the columns melo_id and
// malo_id, other columns ignored. A MeLo mapped to two MaLos is refused,
// naming both lines; a MeLo an MSCONS message names that the file lacks
// refuses that message, naming the MeLo and the file.
func loadMaloOf(path string) (func(metering.MeloID) (metering.MaloID, error), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--malo-of: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("--malo-of: %w", err)
	}
	text := strings.TrimPrefix(string(b), "\ufeff")
	r := csv.NewReader(strings.NewReader(text))
	head, _, _ := strings.Cut(text, "\n")
	if strings.Count(head, ";") > strings.Count(head, ",") {
		r.Comma = ';'
	}
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("--malo-of %s: %w", path, err)
	}
	for i := range header {
		header[i] = strings.ToLower(strings.TrimSpace(header[i]))
	}
	meloCol, maloCol := slices.Index(header, "melo_id"), slices.Index(header, "malo_id")
	if meloCol < 0 || maloCol < 0 {
		return nil, fmt.Errorf("--malo-of %s: the header names %q; it needs the columns melo_id and malo_id, e.g. melo_id,malo_id", path, strings.Join(header, ","))
	}
	m := map[metering.MeloID]metering.MaloID{}
	lineOf := map[metering.MeloID]int{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--malo-of %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) <= max(meloCol, maloCol) {
			return nil, fmt.Errorf("--malo-of %s: line %d has %d fields; it needs melo_id and malo_id", path, line, len(rec))
		}
		melo, err := metering.ParseMeloID(strings.TrimSpace(rec[meloCol]))
		if err != nil {
			return nil, fmt.Errorf("--malo-of %s: line %d, column melo_id: %w", path, line, err)
		}
		malo, err := metering.ParseMaloID(strings.TrimSpace(rec[maloCol]))
		if err != nil {
			return nil, fmt.Errorf("--malo-of %s: line %d, column malo_id: %w", path, line, err)
		}
		if prev, ok := m[melo]; ok && prev != malo {
			return nil, fmt.Errorf("--malo-of %s: MeLo %s is mapped to MaLo %s on line %d and to %s on line %d; a Messlokation's readings are stored on one Marktlokation",
				path, melo, prev, lineOf[melo], malo, line)
		}
		m[melo], lineOf[melo] = malo, line
	}
	return func(melo metering.MeloID) (metering.MaloID, error) {
		if malo, ok := m[melo]; ok {
			return malo, nil
		}
		return metering.MaloID{}, fmt.Errorf("MeLo %s is not in --malo-of %s; add a line %s,<malo_id>", melo, path, melo)
	}, nil
}
