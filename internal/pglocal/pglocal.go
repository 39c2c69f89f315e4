// Package pglocal runs a private PostgreSQL cluster from the system's binaries:
// the throwaway cluster of the test suite (testkit/pgtest) and the embedded
// default of the msql shell. It never downloads anything; when the binaries are
// missing the error names the package to install.
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries means no PostgreSQL ≥ MinMajor server binaries were found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found (initdb, postgres): install them with `apt-get install postgresql`, or set MSQL_PG_BINDIR")

// MinMajor is the oldest PostgreSQL with everything the hot tier needs
// (declarative range partitioning with DETACH, DROP DATABASE … WITH (FORCE)).
const MinMajor = 14

// Superuser is the role initdb creates; the cluster trusts local connections only.
const Superuser = "postgres"

// FindBinaries returns the directory holding initdb and postgres: $MSQL_PG_BINDIR,
// else the newest /usr/lib/postgresql/<major>/bin with major ≥ MinMajor, else PATH.
func FindBinaries() (string, error) {
	if dir := os.Getenv("MSQL_PG_BINDIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err != nil {
			return "", fmt.Errorf("MSQL_PG_BINDIR=%s: %w", dir, ErrNoBinaries)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	type cand struct {
		dir   string
		major int
	}
	var cands []cand
	for _, d := range dirs {
		major, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || major < MinMajor {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			cands = append(cands, cand{d, major})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].major > cands[j].major })
	if len(cands) > 0 {
		return cands[0].dir, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoBinaries
}

// runAs returns the credential to run the server with: initdb and postgres refuse
// to run as root, so a root process runs them as the "postgres" system user (or
// "nobody" where that does not exist).
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// Server is a running private cluster.
type Server struct {
	BinDir  string
	DataDir string
	Port    int
	cmd     *exec.Cmd
	done    chan error
	logPath string
	// restarted: pg_ctl started the running postmaster, which is not cmd.
	restarted bool
}

// Durability says what a crash may cost a cluster.
type Durability uint8

const (
	// Durable: PostgreSQL's own guarantees — a transaction reported committed
	// survives a power loss. The hot tier and the SQL catalog (the pointer to
	// committed Iceberg metadata) live in the cluster, so anything holding data
	// that matters runs durable.
	Durable Durability = iota
	// Throwaway: fsync, synchronous_commit and full_page_writes off, and initdb
	// without its final sync. A power loss can lose rows reported written or
	// roll the catalog back behind a dropped partition; for test clusters and
	// demos asked to be fast, never for data that matters.
	Throwaway
)

func (d Durability) String() string {
	if d == Throwaway {
		return "throwaway"
	}
	return "durable"
}

// settings are the server settings a durability passes on the command line,
// so a data directory started once throwaway is durable again at its next
// durable start.
func (d Durability) settings() []string {
	v := "on"
	if d == Throwaway {
		v = "off"
	}
	return []string{"-c", "fsync=" + v, "-c", "synchronous_commit=" + v, "-c", "full_page_writes=" + v}
}

// Options for Start. Zero values mean: port chosen free, server dies with
// this process, durable.
type Options struct {
	Port int
	// Detach leaves the server running after this process exits, in a
	// session of its own (the embedded default, which the processes sharing
	// it stop); otherwise the kernel stops it when its parent dies, so a
	// killed test run leaves no cluster behind.
	Detach bool
	// Log receives the server's output; nil discards it (it is also in DataDir/server.log).
	LogFile    string
	Durability Durability
}

// New creates a cluster in dir from the system binaries, starts it with
// durability d and creates database db in it: a private deployment's
// PostgreSQL in one call.
func New(ctx context.Context, dir string, d Durability, db string) (*Server, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	if err := Init(ctx, bin, dir, d); err != nil {
		return nil, err
	}
	srv, err := Start(ctx, bin, dir, Options{Durability: d})
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		srv.Stop() //nolint:errcheck
		return nil, fmt.Errorf("create database %s: %w", db, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		srv.Stop() //nolint:errcheck
		return nil, fmt.Errorf("create database %s: %w", db, err)
	}
	return srv, nil
}

// Initialised reports whether dir holds a cluster.
func Initialised(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	return err == nil
}

// Init creates a cluster in dir (which must not hold one), owned by the
// server user; a durable one is synced to disk before Init returns.
func Init(ctx context.Context, binDir, dir string, d Durability) error {
	cred, err := runAs()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := chownTree(dir, cred); err != nil {
		return err
	}
	args := []string{"-D", dir, "-U", Superuser, "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if d == Throwaway {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", dir, err, out)
	}
	return nil
}

func chownTree(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	// The parents must be traversable by the server user.
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// FreePort asks the kernel for a free loopback port. Another process may take it
// before the server binds, so Start retries on a bind failure.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs the cluster in dataDir on a loopback port and waits until it accepts connections.
func Start(ctx context.Context, binDir, dataDir string, opt Options) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := opt.Port
		if port == 0 {
			p, err := FreePort()
			if err != nil {
				return nil, fmt.Errorf("find a free port: %w", err)
			}
			port = p
		}
		s, err := start(ctx, binDir, dataDir, port, opt)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if opt.Port != 0 {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, binDir, dataDir string, port int, opt Options) (*Server, error) {
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	logPath := opt.LogFile
	if logPath == "" {
		logPath = filepath.Join(dataDir, "server.log")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open server log: %w", err)
	}
	defer logf.Close()
	if cred != nil {
		_ = os.Chown(logPath, int(cred.Uid), int(cred.Gid))
	}
	args := []string{"-D", dataDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dataDir,
		"-c", "max_connections=200", "-c", "shared_buffers=256MB", "-c", "max_locks_per_transaction=1024"}
	cmd := exec.Command(filepath.Join(binDir, "postgres"), append(args, opt.Durability.settings()...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	attr := &syscall.SysProcAttr{Credential: cred}
	if opt.Detach {
		attr.Setsid = true // its own session: no Ctrl-C or hang-up of the starter's terminal reaches it
	} else {
		attr.Setpgid = true
		attr.Pdeathsig = syscall.SIGQUIT
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s := &Server{BinDir: binDir, DataDir: dataDir, Port: port, cmd: cmd, done: make(chan error, 1), logPath: logPath}
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			conn.Close(ctx)
			return s, nil
		}
		select {
		case werr := <-s.done:
			tail, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited on port %d: %v\n%s", port, werr, lastLines(string(tail), 5))
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("postgres on port %d not ready after 60s: %w", port, err)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// DSN connects as the superuser to database db over TCP loopback.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", Superuser, s.Port, db)
}

// RestartImmediate is `pg_ctl restart -m immediate`: every backend is killed
// without a checkpoint, as a crash would, and the cluster starts again with
// the same options and runs crash recovery. The new postmaster is pg_ctl's
// child, not this process's, so it outlives this process unless stopped.
func (s *Server) RestartImmediate(ctx context.Context) error {
	if err := s.pgCtl(ctx, "restart", "-m", "immediate", "-w", "-t", "120", "-l", s.logPath); err != nil {
		return err
	}
	s.restarted = true
	return nil
}

// pgCtl runs pg_ctl on the cluster as its owner.
func (s *Server) pgCtl(ctx context.Context, args ...string) error {
	cred, err := runAs()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.BinDir, "pg_ctl"), append([]string{"-D", s.DataDir, "-s"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Stop shuts the server down (fast mode) and waits for it.
func (s *Server) Stop() error {
	if s.restarted {
		return s.pgCtl(context.Background(), "stop", "-m", "fast", "-w")
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}
