// Command msql is the MeterStore shell: SQL over one relation, readings, that
// spans PostgreSQL (hot) and Iceberg (cold), plus the operator subcommands.
//
//	msql                       open the shell on the embedded default
//	msql demo                  load the demo portfolio and open the shell
//	msql --scratch -c "SQL"    bare DuckDB with the metering functions, no tiers
//	msql archive|verify|…      operator subcommands; msql <cmd> --help
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := Run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, tty: term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))})
	os.Exit(exitCode(err, os.Stderr))
}

// stdio is the process's terminal, injectable for tests.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
	tty bool // stdin and stdout are a terminal: interactive niceties on
}

// hinted is an error with the fix a user should try.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, hint string) error { return &hinted{err: err, hint: hint} }

// errUsage is a bad command line; the message already says what was wrong.
var errUsage = errors.New("usage")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "msql: %v\n", err)
	var h *hinted
	if errors.As(err, &h) && h.hint != "" {
		fmt.Fprintf(stderr, "Try: %s\n", h.hint)
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	var v *verifyFailed
	if errors.As(err, &v) {
		return 3
	}
	return 1
}

// Run is the whole program; main only maps its error to an exit status.
func Run(ctx context.Context, args []string, io stdio) error {
	if len(args) > 0 {
		if cmd, ok := subcommands[args[0]]; ok {
			return cmd.run(ctx, args[1:], io)
		}
	}
	return runShell(ctx, args, io)
}

// subcommand is one `msql <name>`.
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, io stdio) error
}

var subcommands = map[string]subcommand{}

func init() {
	subcommands["version"] = subcommand{"print the version", func(_ context.Context, _ []string, io stdio) error {
		fmt.Fprintln(io.out, "msql", version)
		return nil
	}}
}
