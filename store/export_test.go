package store

import "testing"

// ReadColdFilesInGo makes the checks read every cold file, until t ends, as
// they read files on object storage: with the Go reader.
func ReadColdFilesInGo(t *testing.T) {
	was := onObjectStorage
	onObjectStorage = func(string) bool { return true }
	t.Cleanup(func() { onObjectStorage = was })
}
