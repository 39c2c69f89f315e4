package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/term"
)

// page writes b to the terminal, through $PAGER (default less -FRX) when it is
// taller than the terminal. Without a pager program it writes b as it is.
func page(w io.Writer, b []byte) error {
	_, height, err := term.GetSize(int(os.Stdout.Fd()))
	if err != nil || bytes.Count(b, []byte("\n")) < height-1 {
		_, err := w.Write(b)
		return err
	}
	pager := os.Getenv("PAGER")
	if pager == "" {
		pager = "less -FRX"
	}
	args := strings.Fields(pager)
	path, err := exec.LookPath(args[0])
	if err != nil {
		_, err := w.Write(b)
		return err
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = bytes.NewReader(b) // less reads its keys from /dev/tty
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		_, werr := w.Write(b)
		return werr
	}
	return nil
}

// progressAfter is how long a statement runs before the indicator appears.
var progressAfter = 2 * time.Second

// startProgress shows, on stderr and only on a terminal, the elapsed time and
// the rows streamed from PostgreSQL of a statement running longer than
// progressAfter. The returned func stops it and clears the line.
func startProgress(ctx context.Context, sess session, p *printer) func() {
	if !p.progress {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		shown := false
		t := time.NewTimer(progressAfter)
		defer t.Stop()
		tick := (<-chan time.Time)(nil)
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(p.errOut, "\r\x1b[2K")
				}
				return
			case <-ctx.Done():
				if shown {
					fmt.Fprint(p.errOut, "\r\x1b[2K")
				}
				return
			case <-t.C:
				tk := time.NewTicker(250 * time.Millisecond)
				defer tk.Stop()
				tick = tk.C
				shown = true
				fmt.Fprint(p.errOut, progressLine(time.Since(start), sess.hotRows()))
			case <-tick:
				fmt.Fprint(p.errOut, progressLine(time.Since(start), sess.hotRows()))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

func progressLine(elapsed time.Duration, hotRows int64) string {
	s := spinner[int(elapsed/(250*time.Millisecond))%len(spinner)]
	line := fmt.Sprintf("\r\x1b[2K%c %.1fs", s, elapsed.Seconds())
	if hotRows > 0 {
		line += fmt.Sprintf(" · %s rows from PostgreSQL", groupDigits(hotRows))
	}
	return line + " · Ctrl-C cancels"
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
