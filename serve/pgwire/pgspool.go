package pgwire

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgproto3"
)

const (
	// spoolMemory is the default of how much of a held-back result stays in
	// memory; the rest goes to a temporary file (Server.spoolMemory overrides it).
	spoolMemory = 1 << 20
	// spoolLimit is the default bound on a held-back result, in wire bytes: a
	// result that grows past it is sent from then on, and no longer run again
	// when it meets an archival (Server.spoolLimit overrides it).
	spoolLimit = 256 << 20
	// spoolChunk is how much of a spooled file is sent per write.
	spoolChunk = 64 << 10
)

// spool holds a statement's messages, encoded as they go on the wire, until
// the statement has passed its boundary check: the first spoolMemory bytes in
// memory, the rest in a temporary file, unlinked as soon as it is created so
// that nothing outlives the server.
type spool struct {
	memory int // bytes held in memory before the file is used; 0 is spoolMemory
	buf    []byte
	file   *os.File
	filed  int64 // bytes in file
}

// size is how many bytes the spool holds.
func (s *spool) size() int64 { return s.filed + int64(len(s.buf)) }

// add encodes msg onto the spool.
func (s *spool) add(msg pgproto3.BackendMessage) error {
	buf, err := msg.Encode(s.buf)
	if err != nil {
		return fmt.Errorf("encode a result row: %w", err)
	}
	return s.grown(buf)
}

// addRow appends a row onto the spool with appendRow, which encodes it
// straight into the spool's buffer.
func (s *spool) addRow(appendRow func([]byte) ([]byte, error)) error {
	buf, err := appendRow(s.buf)
	if err != nil {
		return err
	}
	return s.grown(buf)
}

// grown takes buf, the spool's buffer with messages appended, and moves it to
// the spool's file once it reaches the spool's memory.
func (s *spool) grown(buf []byte) error {
	s.buf = buf
	memory := s.memory
	if memory <= 0 {
		memory = spoolMemory
	}
	if len(s.buf) < memory {
		return nil
	}
	return s.spill()
}

// spill moves the bytes held in memory to the spool's file.
func (s *spool) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp("", "msql-pgwire-spool-*")
		if err != nil {
			return fmt.Errorf("hold back a result of over %d bytes: %w", len(s.buf), err)
		}
		os.Remove(f.Name()) //nolint:errcheck // the open file stays readable; nothing is left behind
		s.file = f
	}
	if _, err := s.file.Write(s.buf); err != nil {
		return fmt.Errorf("hold back a result of %d bytes in %s: %w", s.size(), os.TempDir(), err)
	}
	s.filed += int64(len(s.buf))
	s.buf = s.buf[:0]
	return nil
}

// sendTo sends what the spool holds — the file, then memory — flushing as it
// goes, and empties it.
func (s *spool) sendTo(be *pgproto3.Backend) error {
	defer s.discard()
	if s.file != nil {
		if _, err := s.file.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("send a held-back result: %w", err)
		}
		chunk := make([]byte, spoolChunk)
		for {
			n, err := s.file.Read(chunk)
			if n > 0 {
				be.Send(rawMessages(chunk[:n]))
				if ferr := be.Flush(); ferr != nil {
					return ferr
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("send a held-back result: %w", err)
			}
		}
	}
	if len(s.buf) > 0 {
		be.Send(rawMessages(s.buf))
	}
	return nil
}

// discard drops what the spool holds.
func (s *spool) discard() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.buf, s.filed = nil, 0
}

// rawMessages are backend messages already encoded (a spool's bytes).
type rawMessages []byte

func (r rawMessages) Decode([]byte) error {
	return errors.New("pgwire: encoded messages are sent, never decoded")
}
func (r rawMessages) Encode(dst []byte) ([]byte, error) { return append(dst, r...), nil }
func (rawMessages) Backend()                            {}
