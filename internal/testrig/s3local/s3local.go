// Package s3local runs a private S3-compatible object store — SeaweedFS's
// `weed mini` with only the S3 gateway on — on free loopback ports in a
// directory of its own, with one bucket and one key pair: what the tests
// (internal/testrig/s3test) and the benchmarks put a warehouse on.
package s3local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/meterstore/meterstore/settings"
)

// Server is a running store.
type Server struct {
	Endpoint  string // http://127.0.0.1:port of the S3 gateway
	Bucket    string
	AccessKey string
	SecretKey string
	dir       string
	cmd       *exec.Cmd
	exited    chan struct{}
	log       string
}

// Settings are the [cold.s3] settings that reach the server.
func (s *Server) Settings() settings.S3Settings {
	return settings.S3Settings{Endpoint: s.Endpoint, Region: "us-east-1",
		AccessKeyID: s.AccessKey, SecretAccessKey: settings.Secret(s.SecretKey)}
}

// Client is an S3 client of the server.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// Keys lists the object keys under prefix in the bucket.
func (s *Server) Keys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// Binary finds the weed binary: $MSQL_WEED, on PATH, or in $(go env GOPATH)/bin
// (where `go tool task s3server` builds the pinned release).
func Binary() (string, error) {
	if p := os.Getenv("MSQL_WEED"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("weed"); err == nil {
		return p, nil
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "weed")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no weed binary ($MSQL_WEED, PATH, $(go env GOPATH)/bin): run go tool task s3server")
}

// Start runs a server in a new temporary directory with bucket created; Stop
// ends it and removes the directory. The process is in its own group and dies
// with this one.
func Start(ctx context.Context, bucket string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "s3local-")
	if err != nil {
		return nil, err
	}
	s := &Server{Bucket: bucket, AccessKey: "AK" + randomHex(8), SecretKey: randomHex(20), dir: dir, exited: make(chan struct{}), log: filepath.Join(dir, "weed.log")}
	if err := s.start(ctx, bin); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string) error {
	cfg := filepath.Join(s.dir, "s3.json")
	if err := writeIdentity(cfg, s.AccessKey, s.SecretKey); err != nil {
		return err
	}
	ports, err := freePorts(8)
	if err != nil {
		return err
	}
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	args := []string{"mini", "-dir=" + filepath.Join(s.dir, "data"), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.port=" + strconv.Itoa(ports[0]), "-s3.port.grpc=" + strconv.Itoa(ports[1]),
		"-master.port=" + strconv.Itoa(ports[2]), "-master.port.grpc=" + strconv.Itoa(ports[3]),
		"-volume.port=" + strconv.Itoa(ports[4]), "-volume.port.grpc=" + strconv.Itoa(ports[5]),
		"-filer.port=" + strconv.Itoa(ports[6]), "-filer.port.grpc=" + strconv.Itoa(ports[7]),
		"-s3.config=" + cfg, "-bucket=" + s.Bucket, "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-webdav=false", "-admin.ui=false", "-master.telemetry=false", "-debug.port=0",
		"-filer.localSocket=" + filepath.Join(s.dir, "filer.sock"), "-s3.localSocket=" + filepath.Join(s.dir, "s3.sock")}
	if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o755); err != nil {
		return err
	}
	out, err := os.Create(s.log)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); out.Close(); close(s.exited) }()
	return s.waitReady(ctx, 2*time.Minute)
}

// waitReady polls until the gateway lists the bucket.
func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("weed exited while starting: %s", tail(s.log))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, last = s.Client().ListObjectsV2(c, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), MaxKeys: aws.Int32(1)})
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("weed's S3 gateway at %s not ready after %s: %v; log: %s", s.Endpoint, limit, last, tail(s.log))
}

// Stop ends the server and removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}
	}
	_ = os.RemoveAll(s.dir)
}

// writeIdentity writes the gateway's one identity, allowed everything.
func writeIdentity(path, key, secret string) error {
	doc := map[string]any{"identities": []any{map[string]any{
		"name":        "meterstore",
		"credentials": []any{map[string]string{"accessKey": key, "secretKey": secret}},
		"actions":     []string{"Admin", "Read", "Write", "List", "Tagging"},
	}}}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// freePorts reserves n distinct loopback ports by binding them all at once,
// then releases them for the server.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
