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
	"unicode/utf8"

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
	cmd, err := pagerCommand()
	if err != nil {
		_, err := w.Write(b)
		return err
	}
	cmd.Stdin = bytes.NewReader(b) // less reads its keys from /dev/tty
	if err := cmd.Run(); err != nil {
		_, werr := w.Write(b)
		return werr
	}
	return nil
}

// pagerCommand is $PAGER (default less -FRX) writing to the terminal.
func pagerCommand() (*exec.Cmd, error) {
	pager := os.Getenv("PAGER")
	if pager == "" {
		pager = "less -FRX"
	}
	args := strings.Fields(pager)
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd, nil
}

// pagerPipe is the pager reading a result as the shell writes it; writes
// fail once the user has left the pager.
type pagerPipe struct {
	io.WriteCloser
	cmd *exec.Cmd
}

// startPager starts the pager for a result streamed into it.
func startPager() (*pagerPipe, error) {
	cmd, err := pagerCommand()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &pagerPipe{WriteCloser: in, cmd: cmd}, nil
}

// Close ends the input and waits until the user leaves the pager.
func (p *pagerPipe) Close() error {
	p.WriteCloser.Close()
	p.cmd.Wait() //nolint:errcheck // less exits non-zero when quit early
	return nil
}

// progressAfter is how long a statement runs before the progress bar appears
// (the DuckDB CLI waits 2 s too).
var progressAfter = 2 * time.Second

// startProgress shows, on stderr and only on a terminal, how far a statement
// running longer than progressAfter has got: DuckDB's own estimate as a
// percentage bar, as the DuckDB CLI draws it, where DuckDB can estimate the
// plan, and always the time and the rows streamed from PostgreSQL. The line
// is redrawn in place (\r); the returned func stops it and clears the line.
func startProgress(ctx context.Context, sess session, p *printer) func() {
	if !p.progress {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	prog := sess.progress()
	go func() {
		defer close(finished)
		shown := false
		t := time.NewTimer(progressAfter)
		defer t.Stop()
		tick := (<-chan time.Time)(nil)
		draw := func() {
			pct, ok := prog.Percent()
			fmt.Fprint(p.errOut, progressLine(time.Since(start), pct, ok, prog.HotRows()))
		}
		for {
			select {
			case <-done:
			case <-ctx.Done():
			case <-t.C:
				tk := time.NewTicker(250 * time.Millisecond)
				defer tk.Stop()
				tick, shown = tk.C, true
				draw()
				continue
			case <-tick:
				draw()
				continue
			}
			if shown {
				fmt.Fprint(p.errOut, "\r\x1b[2K")
			}
			return
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// progressBarWidth is the bar's width in cells; each cell has eight steps.
const progressBarWidth = 40

// progressLine is one redraw: " 42% ▕████████▍      ▏ 3.2s · … · Ctrl-C cancels".
func progressLine(elapsed time.Duration, pct float64, estimated bool, hotRows int64) string {
	line := "\r\x1b[2K"
	if estimated {
		pct = min(100, max(0, pct))
		eighths := int(pct / 100 * progressBarWidth * 8)
		bar := strings.Repeat("█", eighths/8)
		if rest := eighths % 8; rest > 0 {
			bar += string([]rune("▏▎▍▌▋▊▉")[rest-1])
		}
		bar += strings.Repeat(" ", progressBarWidth-utf8.RuneCountInString(bar))
		line += fmt.Sprintf("%3.0f%% ▕%s▏ ", pct, bar)
	} else {
		line += string(spinner[int(elapsed/(250*time.Millisecond))%len(spinner)]) + " "
	}
	line += fmt.Sprintf("%.1fs", elapsed.Seconds())
	if hotRows > 0 {
		line += fmt.Sprintf(" · %s rows from PostgreSQL", groupDigits(hotRows))
	}
	return line + " · Ctrl-C cancels"
}

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

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
