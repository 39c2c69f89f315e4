package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// spillDirectory is where one of the engine's DuckDB databases spills what
// exceeds its memory_limit (sorts, hash joins and aggregates that can): a
// directory of its own below Config.TempDirectory, else below the system's
// temporary directory. Its own, because two databases of one process sharing a
// directory would write temporary files of the same names; DuckDB creates it
// when it first spills and removes it when the database closes. A database
// file keeps DuckDB's default (the file's name + ".tmp") unless TempDirectory
// is set; an in-memory database would otherwise spill into the process's
// working directory.
func (e *Engine) spillDirectory(path string) string {
	base := e.cfg.TempDirectory
	if base == "" {
		if path != "" {
			return ""
		}
		base = os.TempDir()
	}
	b := make([]byte, 6)
	rand.Read(b)
	return filepath.Join(base, fmt.Sprintf("meterstore-duckdb-%d-%s", os.Getpid(), hex.EncodeToString(b)))
}
