package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chzyer/readline"
)

// shell is one msql session: statements, dot-commands and the settings they change.
type shell struct {
	sess   session
	es     *engineSession // nil in --scratch
	p      *printer
	io     stdio
	rl     *readline.Instance
	ctx    context.Context
	quit   bool
	depth  int // .read nesting
	params params
	last   *table // the last statement's result, for .plot
	cancel struct {
		sync.Mutex
		f context.CancelFunc
	}
}

func newShell(ctx context.Context, sess session, p *printer, io stdio) *shell {
	sh := &shell{sess: sess, p: p, io: io, ctx: ctx}
	sh.es, _ = sess.(*engineSession)
	return sh
}

// duckDB is the session's DuckDB database: the scratch database, or the
// engine's unrestricted handle (for parsing, completion and the catalog only —
// queries of readings go through the engine).
func (sh *shell) duckDB() *sql.DB {
	switch s := sh.sess.(type) {
	case *scratchSession:
		return s.db
	case *engineSession:
		return s.d.engine.DB()
	}
	return nil
}

// historyPath is where the interactive shell keeps its history: $MSQL_HISTORY,
// else msql_history under $MSQL_HOME when that is set, else ~/.msql_history.
func historyPath() string {
	if h := os.Getenv("MSQL_HISTORY"); h != "" {
		return h
	}
	if h := os.Getenv("MSQL_HOME"); h != "" {
		return filepath.Join(h, "msql_history")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".msql_history")
	}
	return ""
}

// interactive is the read-eval-print loop: line editing, history (Ctrl-R),
// completion, multi-line statements ended by ';'. Ctrl-C clears the line being
// typed or cancels the running statement; Ctrl-D on an empty line leaves.
func interactive(ctx context.Context, sess session, p *printer, io stdio) error {
	sh := newShell(ctx, sess, p, io)
	if tty, ok := io.in.(*os.File); ok {
		defer takeForeground(tty)()
	}
	p.pager = os.Getenv("MSQL_PAGER") != "off"
	hist := historyPath()
	if hist != "" {
		_ = os.MkdirAll(filepath.Dir(hist), 0o755)
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 "msql> ",
		HistoryFile:            hist,
		HistoryLimit:           5000,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           newCompleter(sh),
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	sh.rl = rl

	// Ctrl-C while a statement runs arrives as SIGINT (the terminal is not in raw
	// mode then): cancel that statement, never the shell.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			sh.cancel.Lock()
			if sh.cancel.f != nil {
				sh.cancel.f()
			}
			sh.cancel.Unlock()
		}
	}()

	fmt.Fprintf(p.out, "msql %s — statements end with ;  .help for commands, .quit or Ctrl-D to leave\n", version)
	if sh.es != nil {
		fmt.Fprintf(p.out, "%s\n", sh.es.describe())
	}
	var sp splitter
	var entry strings.Builder // the statement as typed, for history
	for !sh.quit {
		if sp.pending() == "" {
			rl.SetPrompt("msql> ")
		} else {
			rl.SetPrompt("   -> ")
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			if sp.pending() == "" && line == "" {
				fmt.Fprintln(p.out, "(.quit or Ctrl-D to leave)")
			}
			sp = splitter{}
			entry.Reset()
			continue
		}
		if errors.Is(err, io_EOF) {
			if sp.pending() != "" {
				sp = splitter{}
				entry.Reset()
				fmt.Fprintln(p.out)
				continue
			}
			break
		}
		if err != nil {
			return err
		}
		if onlyComments(sp.pending()) && strings.HasPrefix(strings.TrimSpace(line), ".") {
			sp = splitter{}
			entry.Reset()
			_ = rl.SaveHistory(strings.TrimSpace(line))
			sh.dotCommand(strings.TrimSpace(line))
			continue
		}
		if entry.Len() > 0 {
			entry.WriteByte(' ')
		}
		entry.WriteString(strings.TrimSpace(line))
		stmts := sp.feed(line + "\n")
		if len(stmts) > 0 {
			_ = rl.SaveHistory(entry.String())
			entry.Reset()
			if rest := strings.TrimSpace(sp.pending()); rest != "" {
				entry.WriteString(rest)
			}
		}
		for _, stmt := range stmts {
			sh.runInteractive(stmt)
		}
	}
	fmt.Fprintln(p.out)
	return nil
}

var io_EOF = io.EOF

// runInteractive runs one statement with Ctrl-C wired to its context and
// reports an error without leaving the shell.
func (sh *shell) runInteractive(stmt string) {
	err := sh.runCancellable(stmt)
	sh.report(err)
}

func (sh *shell) runCancellable(stmt string) error {
	ctx, cancel := context.WithCancel(sh.ctx)
	defer cancel()
	sh.cancel.Lock()
	sh.cancel.f = cancel
	sh.cancel.Unlock()
	defer func() {
		sh.cancel.Lock()
		sh.cancel.f = nil
		sh.cancel.Unlock()
	}()
	err := sh.runStatement(ctx, stmt)
	if err != nil && ctx.Err() != nil && sh.ctx.Err() == nil {
		return errCancelled
	}
	return err
}

var errCancelled = errors.New("statement cancelled")

func (sh *shell) report(err error) {
	if err == nil {
		return
	}
	fmt.Fprintf(sh.io.err, "Error: %s\n", userMessage(err))
	if hint := hintOf(err); hint != "" {
		fmt.Fprintf(sh.io.err, "Try: %s\n", hint)
	}
}

// runText runs statements and dot-commands (a dot-command is a line starting
// with '.' outside a statement), stopping at the first failure.
func (sh *shell) runText(text string) error {
	var sp splitter
	for _, line := range strings.SplitAfter(text, "\n") {
		if onlyComments(sp.pending()) && strings.HasPrefix(strings.TrimSpace(line), ".") {
			sp = splitter{}
			if err := sh.dot(strings.TrimSpace(line)); err != nil {
				return err
			}
			if sh.quit {
				return nil
			}
			continue
		}
		for _, stmt := range sp.feed(line) {
			if err := sh.runStatement(sh.ctx, stmt); err != nil {
				return err
			}
		}
	}
	if rest := sp.pending(); rest != "" && !onlyComments(rest) {
		return sh.runStatement(sh.ctx, rest)
	}
	return nil
}
