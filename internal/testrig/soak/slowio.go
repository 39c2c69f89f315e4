package soak

import (
	"context"
	"net/url"
	"sync/atomic"
	"time"

	iceio "github.com/apache/iceberg-go/io"
)

// slowWarehouse puts latency into the file IO of this process's cold tier:
// iceberg-go's local file IO, through which the soak's writers append late
// corrections and read table metadata, waits before every open, create,
// write, read-whole-file and remove while the fault is on. msql serve and msql
// maintenance are other binaries and keep their IO.
type slowWarehouse struct {
	delay atomic.Int64 // nanoseconds
}

// install replaces the "file" scheme of iceberg-go's IO registry with the
// delaying one; the returned function restores iceberg-go's own.
func (s *slowWarehouse) install() (restore func()) {
	iceio.Unregister("file")
	iceio.Register("file", func(context.Context, *url.URL, map[string]string) (iceio.IO, error) {
		return slowFS{delay: &s.delay}, nil
	})
	return func() {
		iceio.Unregister("file")
		iceio.Register("file", func(context.Context, *url.URL, map[string]string) (iceio.IO, error) {
			return iceio.LocalFS{}, nil
		})
	}
}

// slowFS is iceberg-go's local file IO, every method it overrides waiting the
// current delay first; the rest (stat, walk, rename) are LocalFS's own.
type slowFS struct {
	iceio.LocalFS
	delay *atomic.Int64
}

func (s slowFS) wait() { time.Sleep(time.Duration(s.delay.Load())) }

func (s slowFS) Open(name string) (iceio.File, error) { s.wait(); return s.LocalFS.Open(name) }

func (s slowFS) ReadFile(name string) ([]byte, error) { s.wait(); return s.LocalFS.ReadFile(name) }

func (s slowFS) Create(name string) (iceio.FileWriter, error) {
	s.wait()
	return s.LocalFS.Create(name)
}

func (s slowFS) WriteFile(name string, p []byte) error { s.wait(); return s.LocalFS.WriteFile(name, p) }

func (s slowFS) Remove(name string) error { s.wait(); return s.LocalFS.Remove(name) }
