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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/udf"
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

// hintOf is the fix to try for err: the hint it carries, or the .param that
// would bind a parameter the statement uses.
func hintOf(err error) string {
	var h *hinted
	if errors.As(err, &h) && h.hint != "" {
		return h.hint
	}
	var pe *engine.ParamError
	if errors.As(err, &pe) {
		return paramHint(pe)
	}
	return ""
}

// errUsage is a bad command line; the message already says what was wrong.
var errUsage = errors.New("usage")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "msql: %s\n", userMessage(err))
	if hint := hintOf(err); hint != "" {
		fmt.Fprintf(stderr, "Try: %s\n", hint)
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	var v *verifyFailed
	if errors.As(err, &v) {
		return 3
	}
	if errors.Is(err, store.ErrQuarantined) {
		return 4
	}
	var refused *importRefused
	if errors.As(err, &refused) {
		return 5
	}
	return 1
}

// Run is the whole program; main only maps its error to an exit status.
func Run(ctx context.Context, args []string, io stdio) error {
	args = subcommandFirst(args)
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
	subcommands["version"] = subcommand{"print msql's version and DuckDB's", func(ctx context.Context, _ []string, io stdio) error {
		return printVersion(ctx, io)
	}}
}

// subcommandFirst moves a subcommand typed after global flags to the front,
// so `msql --dsn … demo` is `msql demo --dsn …`. It stops at the first word
// that is neither a known flag, a flag's value nor a subcommand.
func subcommandFirst(args []string) []string {
	known := flag.NewFlagSet("msql", flag.ContinueOnError)
	new(shellFlags).register(known)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			if _, ok := subcommands[a]; ok && i > 0 {
				return slices.Concat([]string{a}, args[:i], args[i+1:])
			}
			return args
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := known.Lookup(name)
		if f == nil {
			return args
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !inline && !(ok && b.IsBoolFlag()) {
			i++ // the flag's value
		}
	}
	return args
}

// printVersion prints the module's version and the DuckDB library's, which
// decides what SQL runs and how values print.
func printVersion(ctx context.Context, io stdio) error {
	v := version
	driver := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, dep := range info.Deps {
			if dep.Path == "github.com/duckdb/duckdb-go/v2" {
				driver = dep.Version
			}
		}
	}
	fmt.Fprintf(io.out, "msql %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	db, err := udf.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	var lib, source string
	if err := db.QueryRowContext(ctx, "SELECT library_version, source_id FROM pragma_version()").Scan(&lib, &source); err != nil {
		return fmt.Errorf("read DuckDB's version: %w", err)
	}
	fmt.Fprintf(io.out, "DuckDB %s (%s) through duckdb-go %s\n", lib, source, driver)
	return nil
}
