package pgwire

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// COPY … TO STDOUT is a read: COPY (query) TO STDOUT and COPY relation
// [(columns)] TO STDOUT — what psql's \copy … TO 'file' sends — run the query
// like any other and send its rows in the copy-out protocol (CopyOutResponse,
// a CopyData per row, CopyDone, COPY n), in PostgreSQL's text or CSV format.
// COPY … FROM is a write and refused as one; COPY … TO a file is refused: the
// server writes no files.

// copyOut is a COPY … TO STDOUT: its query and format.
type copyOut struct {
	query        string
	csv, header  bool
	delim, quote byte
	escape       byte
	null         string
	nullSet      bool // NULL given: CSV's default (the empty string) does not apply
}

// parseCopy reads a COPY statement; ok is false for a COPY that is not to
// STDOUT (left to the engine, which refuses a write).
func parseCopy(q string) (c *copyOut, ok bool, err error) {
	toks := tokenize(q)
	if len(toks) < 2 || !toks[0].is("copy") {
		return nil, false, nil
	}
	i := 1
	c = &copyOut{null: `\N`}
	if toks[1].text == "(" {
		end := matchingToken(toks, 1)
		if end < 0 {
			return nil, false, nil
		}
		c.query = q[toks[1].end:toks[end].start]
		i = end + 1
	} else {
		j := i
		for j < len(toks) && (toks[j].kind == tokWord || toks[j].kind == tokQuoted || toks[j].text == ".") && !toks[j].is("to") && !toks[j].is("from") {
			j++
		}
		if j == i {
			return nil, false, nil
		}
		rel, cols := q[toks[i].start:toks[j-1].end], "*"
		if j < len(toks) && toks[j].text == "(" {
			end := matchingToken(toks, j)
			if end < 0 {
				return nil, false, nil
			}
			cols = q[toks[j].end:toks[end].start]
			j = end + 1
		}
		c.query = "SELECT " + cols + " FROM " + rel
		i = j
	}
	if i >= len(toks) || !toks[i].is("to") {
		return nil, false, nil
	}
	if i+1 >= len(toks) || !toks[i+1].is("stdout") {
		return nil, false, &pgError{code: "42501", msg: "COPY to a file is not allowed: the server writes no files",
			hint: `Use COPY … TO STDOUT, or psql's \copy … TO 'file', which writes the file on the client.`}
	}
	return c, true, c.options(toks[i+2:])
}

// matchingToken is the index of the parenthesis closing the one at open, or -1.
func matchingToken(toks []token, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// options reads COPY's options: WITH (name value, …) or the older keywords
// (CSV, HEADER, DELIMITER [AS] 'x', NULL [AS] 'x', QUOTE, ESCAPE).
func (c *copyOut) options(toks []token) error {
	if len(toks) > 0 && toks[0].is("with") {
		toks = toks[1:]
	}
	if len(toks) > 0 && toks[0].text == "(" {
		end := matchingToken(toks, 0)
		if end < 0 {
			return &pgError{code: "42601", msg: "syntax error in COPY options: unclosed parenthesis"}
		}
		var opt []token
		for _, t := range append(toks[1:end], token{text: ","}) {
			if t.text != "," {
				opt = append(opt, t)
				continue
			}
			if len(opt) > 0 {
				if err := c.option(opt[0].word(), opt[1:]); err != nil {
					return err
				}
			}
			opt = nil
		}
		toks = toks[end+1:]
	} else {
		for len(toks) > 0 {
			name, n := toks[0].word(), 1
			if name == "force" {
				return &pgError{code: "0A000", msg: "COPY option FORCE QUOTE is not supported here"}
			}
			if name == "delimiter" || name == "null" || name == "quote" || name == "escape" || name == "encoding" {
				if n < len(toks) && toks[n].is("as") {
					n++
				}
				n++
			}
			if err := c.option(name, toks[1:min(n, len(toks))]); err != nil {
				return err
			}
			toks = toks[min(n, len(toks)):]
		}
	}
	if len(toks) > 0 && toks[0].text != ";" {
		return &pgError{code: "42601", msg: fmt.Sprintf("syntax error at or near %q", toks[0].text)}
	}
	if c.delim == 0 {
		c.delim = '\t'
		if c.csv {
			c.delim = ','
		}
	}
	if c.csv {
		if !c.nullSet {
			c.null = ""
		}
		if c.quote == 0 {
			c.quote = '"'
		}
		if c.escape == 0 {
			c.escape = c.quote
		}
	}
	return nil
}

// option applies one COPY option with its value tokens.
func (c *copyOut) option(name string, val []token) error {
	var v string
	if len(val) > 0 {
		if val[len(val)-1].kind == tokString {
			v = val[len(val)-1].stringValue()
		} else {
			v = strings.ToLower(val[len(val)-1].text)
		}
	}
	char := func() (byte, error) {
		if len(v) != 1 {
			return 0, &pgError{code: "0A000", msg: fmt.Sprintf("COPY %s must be a single one-byte character", name)}
		}
		return v[0], nil
	}
	var err error
	switch name {
	case "format":
		switch v {
		case "text":
		case "csv":
			c.csv = true
		default:
			return &pgError{code: "0A000", msg: fmt.Sprintf("COPY format %q is not supported here: use text or csv", v)}
		}
	case "csv":
		c.csv = true
	case "text":
	case "header":
		switch v {
		case "", "true", "on", "1":
			c.header = true
		case "false", "off", "0":
			c.header = false
		default:
			return &pgError{code: "22023", msg: fmt.Sprintf("header requires a Boolean value, not %q", v)}
		}
	case "delimiter":
		c.delim, err = char()
	case "null":
		c.null, c.nullSet = v, true
	case "quote":
		c.quote, err = char()
	case "escape":
		c.escape, err = char()
	case "encoding":
		if n := strings.ReplaceAll(strings.ToLower(v), "-", ""); n != "utf8" && n != "unicode" {
			return &pgError{code: "0A000", msg: fmt.Sprintf("COPY encoding %q is not supported here: the server sends UTF8", v)}
		}
	case "binary":
		return &pgError{code: "0A000", msg: "COPY format binary is not supported here: use text or csv"}
	default:
		return &pgError{code: "42601", msg: fmt.Sprintf("option %q not recognized", name)}
	}
	return err
}

// copyStart is the CopyOutResponse of a copy of n columns, in text.
func copyStart(n int) *pgproto3.CopyOutResponse {
	return &pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, n)}
}

// line renders one row of values in PostgreSQL's text format (nil is NULL)
// as a line of the copy's format.
func (c *copyOut) line(vals [][]byte) []byte {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(c.delim)
		}
		switch {
		case v == nil:
			b.WriteString(c.null)
		case c.csv:
			c.csvField(&b, v)
		default:
			c.textField(&b, v)
		}
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func (c *copyOut) textField(b *bytes.Buffer, v []byte) {
	for _, ch := range v {
		switch ch {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if ch == c.delim {
				b.WriteByte('\\')
			}
			b.WriteByte(ch)
		}
	}
}

// csvField quotes a value that holds the delimiter, the quote or a line
// break, or equals the NULL string (so it is not read back as NULL).
func (c *copyOut) csvField(b *bytes.Buffer, v []byte) {
	needs := string(v) == c.null || bytes.IndexByte(v, c.delim) >= 0 || bytes.IndexByte(v, c.quote) >= 0 ||
		bytes.ContainsAny(v, "\r\n")
	if !needs {
		b.Write(v)
		return
	}
	b.WriteByte(c.quote)
	for _, ch := range v {
		if ch == c.quote || ch == c.escape {
			b.WriteByte(c.escape)
		}
		b.WriteByte(ch)
	}
	b.WriteByte(c.quote)
}

// headerLine is the line of the column names.
func (c *copyOut) headerLine(cols []pgColumn) []byte {
	names := make([][]byte, len(cols))
	for i, col := range cols {
		names[i] = []byte(col.name)
	}
	return c.line(names)
}

// beginCopy sends a copy's CopyOutResponse (once for the portal) and returns
// its header line, if it has one and no row was sent yet.
func (sess *pgSession) beginCopy(p *pgPortal) []pgproto3.BackendMessage {
	if !p.copyStarted {
		sess.be.Send(copyStart(len(p.cols)))
		p.copyStarted = true
	}
	if !p.copy.header || p.sent > 0 || p.flushed {
		return nil
	}
	return []pgproto3.BackendMessage{&pgproto3.CopyData{Data: p.copy.headerLine(p.cols)}}
}

// appendRow appends a row as the portal sends it to buf: a DataRow, or a
// CopyData line.
func (sess *pgSession) appendRow(buf []byte, p *pgPortal, vals []any) ([]byte, error) {
	if p.copy == nil {
		return sess.appendDataRow(buf, p, vals)
	}
	dr, err := sess.dataRow(p, vals)
	if err != nil {
		return buf, err
	}
	out, err := (&pgproto3.CopyData{Data: p.copy.line(dr.Values)}).Encode(buf)
	if err != nil {
		return buf, fmt.Errorf("encode a result row: %w", err)
	}
	return out, nil
}

// completion is a finished portal's CommandComplete, after CopyDone for a copy.
func (sess *pgSession) completion(p *pgPortal, tag string) *pgproto3.CommandComplete {
	if p.copy != nil {
		sess.be.Send(&pgproto3.CopyDone{})
		tag = fmt.Sprintf("COPY %d", p.sent)
	}
	return &pgproto3.CommandComplete{CommandTag: []byte(tag)}
}
