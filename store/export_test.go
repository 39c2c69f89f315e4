package store

import "testing"

// ReadColdFilesInGo makes the checks read every cold file, until t ends, as
// they read files on object storage without httpfs: with the Go reader
// (meter_cold_scan).
func ReadColdFilesInGo(t *testing.T) {
	was := readColdFilesInGo
	readColdFilesInGo = true
	t.Cleanup(func() { readColdFilesInGo = was })
}
