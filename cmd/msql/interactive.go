package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
)

// interactive is the read-eval-print loop.
func interactive(ctx context.Context, sess session, p *printer, io stdio) error {
	fmt.Fprintf(io.out, "msql %s — statements end with ;  .help for commands, .quit to leave\n", version)
	in := bufio.NewScanner(io.in)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	var sp splitter
	prompt := func() {
		if sp.pending() == "" {
			fmt.Fprint(io.out, "msql> ")
		} else {
			fmt.Fprint(io.out, "   -> ")
		}
	}
	prompt()
	for in.Scan() {
		line := in.Text()
		if sp.pending() == "" && strings.HasPrefix(strings.TrimSpace(line), ".") {
			quit, err := dotCommand(ctx, sess, p, strings.TrimSpace(line))
			if err != nil {
				fmt.Fprintf(io.err, "error: %v\n", err)
			}
			if quit {
				return nil
			}
			prompt()
			continue
		}
		for _, stmt := range sp.feed(line + "\n") {
			if err := runStatement(ctx, sess, p, stmt); err != nil {
				fmt.Fprintf(io.err, "error: %v\n", err)
			}
		}
		prompt()
	}
	fmt.Fprintln(io.out)
	return in.Err()
}

func dotCommand(ctx context.Context, sess session, p *printer, line string) (bool, error) {
	fields := strings.Fields(line)
	switch fields[0] {
	case ".quit", ".exit", ".q":
		return true, nil
	case ".help":
		fmt.Fprintln(p.out, ".help  .quit  .mode FORMAT  .maxrows N")
	case ".mode":
		if len(fields) != 2 {
			return false, fmt.Errorf(".mode takes one of %s", strings.Join(formats, ", "))
		}
		if err := validFormat(fields[1]); err != nil {
			return false, err
		}
		p.format = fields[1]
	default:
		return false, fmt.Errorf("unknown command %s; .help lists them", fields[0])
	}
	return false, nil
}
