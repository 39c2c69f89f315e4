package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// statusLine reports the progress of long work (the demo's load, archival)
// on stderr. On a terminal it redraws one line in place (\r); elsewhere — a
// log, CI — it writes whole lines, at most one per statusEvery, so a log holds
// no carriage returns and no thousand updates.
type statusLine struct {
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

// statusEvery spaces the lines written off a terminal.
var statusEvery = 10 * time.Second

func newStatusLine(w io.Writer) *statusLine {
	f, ok := w.(*os.File)
	return &statusLine{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

// update shows the work's state now (throttled off a terminal).
func (s *statusLine) update(format string, args ...any) {
	if s.tty {
		fmt.Fprintf(s.w, "\r\x1b[2K  "+format, args...)
		s.shown = true
		return
	}
	if time.Since(s.last) < statusEvery {
		return
	}
	s.last = time.Now()
	fmt.Fprintf(s.w, "  "+format+"\n", args...)
}

// done replaces the state with a line that stays.
func (s *statusLine) done(format string, args ...any) {
	if s.tty && s.shown {
		fmt.Fprint(s.w, "\r\x1b[2K")
	}
	s.shown = false
	fmt.Fprintf(s.w, "  "+format+"\n", args...)
}
