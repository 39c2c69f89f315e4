// Package s3test gives tests a real S3-compatible object store: one SeaweedFS
// server (internal/testrig/s3local) per test binary, started on first use, and stopped
// with the PostgreSQL cluster of testkit/pgtest when the binary's TestMain
// ends — also when tests fail. Each test's warehouse is a fresh prefix of one
// bucket.
//
//	loc, s3 := s3test.Warehouse(t) // s3://<bucket>/<fresh prefix>/warehouse and how to reach it
//
// MSQL_TEST_WAREHOUSE=s3 makes Local put the warehouse of every test that asks
// for one on this server instead of a temporary directory: CI runs the
// archive, catalog, engine, store and proof suites once so.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/meterstore/meterstore/internal/testrig/s3local"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// Bucket is the bucket every test's warehouse lives in, under its own prefix.
const Bucket = "meterstore-test"

var (
	once     sync.Once
	shared   *s3local.Server
	startErr error
)

// Enabled is whether this run asks for the S3 server: MSQL_TEST_S3=1 or
// MSQL_TEST_WAREHOUSE=s3 (go tool task test:s3 sets both).
func Enabled() bool { return os.Getenv("MSQL_TEST_S3") == "1" || OnS3() }

// Start returns the shared server, starting it on first use; it fails the test
// with the fix when the weed binary is missing or does not start. Without
// Enabled it skips the test, saying how to run it.
func Start(t testing.TB) *s3local.Server {
	t.Helper()
	if !Enabled() {
		t.Skip("needs the S3 server: MSQL_TEST_S3=1 (go tool task test:s3; weed from go tool task s3server)")
	}
	once.Do(func() {
		shared, startErr = s3local.Start(context.Background(), Bucket)
		if shared != nil {
			pgtest.OnShutdown(shared.Stop)
		}
	})
	if startErr != nil {
		t.Fatalf("s3test: a real S3-compatible server is required: %v", startErr)
	}
	return shared
}

// Warehouse is a fresh, empty warehouse location on the shared server, and the
// settings that reach it.
func Warehouse(t testing.TB) (string, settings.S3Settings) {
	t.Helper()
	s := Start(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s3://" + Bucket + "/" + hex.EncodeToString(b[:]) + "/warehouse", s.Settings()
}

// OnS3 is whether MSQL_TEST_WAREHOUSE=s3 asks for warehouses on the S3 server.
func OnS3() bool { return os.Getenv("MSQL_TEST_WAREHOUSE") == "s3" }

// Local is the warehouse a test gets by default: a file:// temporary directory,
// or, under MSQL_TEST_WAREHOUSE=s3, a fresh prefix on the S3 server.
func Local(t testing.TB) (string, settings.S3Settings) {
	t.Helper()
	if OnS3() {
		return Warehouse(t)
	}
	return "file://" + t.TempDir(), settings.S3Settings{}
}

// Files lists the files under a warehouse location whose names end in suffix:
// a file:// directory walked, an s3:// prefix listed on the shared server.
func Files(t testing.TB, loc, suffix string) []string {
	t.Helper()
	var out []string
	if dir, ok := strings.CutPrefix(loc, "file://"); ok {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
				out = append(out, p)
			}
			return err
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("s3test: walk %s: %v", dir, err)
		}
		return out
	}
	rest, ok := strings.CutPrefix(loc, "s3://"+Bucket+"/")
	if !ok {
		t.Fatalf("s3test: %s is neither file:// nor on the test bucket", loc)
	}
	keys, err := Start(t).Keys(context.Background(), rest)
	if err != nil {
		t.Fatalf("s3test: list %s: %v", loc, err)
	}
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			out = append(out, "s3://"+Bucket+"/"+k)
		}
	}
	return out
}

// LocalCopy is a local path holding the file at loc: the file itself for a
// local one, a copy in the test's temporary directory for an s3:// object —
// for readers that need a local file (Parquet footers, say).
func LocalCopy(t testing.TB, loc string) string {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+Bucket+"/")
	if !ok {
		return strings.TrimPrefix(loc, "file://")
	}
	obj, err := Start(t).Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(Bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("s3test: get %s: %v", loc, err)
	}
	defer obj.Body.Close()
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatalf("s3test: read %s: %v", loc, err)
	}
	p := filepath.Join(t.TempDir(), path.Base(key))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteFile writes data to loc, a local path, file:// URL or s3:// object on
// the shared server (a stray file beside a table's, say).
func WriteFile(t testing.TB, loc string, data []byte) {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+Bucket+"/")
	if !ok {
		if err := os.WriteFile(strings.TrimPrefix(loc, "file://"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	_, err := Start(t).Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(Bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatalf("s3test: put %s: %v", loc, err)
	}
}

// Exists is whether the file at loc (local path, file:// or s3://) exists.
func Exists(t testing.TB, loc string) bool {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+Bucket+"/")
	if !ok {
		_, err := os.Stat(strings.TrimPrefix(loc, "file://"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("s3test: stat %s: %v", loc, err)
		}
		return err == nil
	}
	_, err := Start(t).Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(Bucket), Key: aws.String(key)})
	var nf *types.NotFound
	if err != nil && !errors.As(err, &nf) {
		t.Fatalf("s3test: head %s: %v", loc, err)
	}
	return err == nil
}
