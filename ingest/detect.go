package ingest

import (
	"bytes"
	"fmt"
	"io"
)

// Detect tells a delivery's format from its first bytes: Parquet starts with
// the magic PAR1, an EDIFACT interchange with UNA or UNB (after an optional
// byte-order mark and white space); anything else is taken for CSV. It
// reads from r, so rewind a file afterwards.
func Detect(r io.Reader) (Format, error) {
	head := make([]byte, 512)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("detect format: %w", err)
	}
	return detect(head[:n]), nil
}

func detect(head []byte) Format {
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return Parquet
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if bytes.HasPrefix(t, []byte("UNA")) || bytes.HasPrefix(t, []byte("UNB+")) {
		return MSCONS
	}
	return CSV
}
