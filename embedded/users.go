package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// users is this process's use of a home's cluster, counted by the kernel
// with two flock(2) locks: every process using the cluster holds
// home/pg.users shared, and a process starting or stopping the cluster holds
// home/pg.lock exclusively while it decides — so a process never stops the
// cluster another has just found running. A process that dies releases its
// locks with it, so a crash never leaves the count wrong. The descriptors
// are close-on-exec: PostgreSQL started by a holder does not inherit them.
//
// Each process counted also leaves a file named by its pid in
// home/pg.users.d, holding its command line, so a Stop that finds the cluster
// in use can say by whom; the locks count, the files only name. A file a
// crash left behind names a process that no longer runs and is skipped.
type users struct {
	use, decide *os.File
	named       string // this process's file in pg.users.d, "" when none
}

// usersDir holds one file per process using home's cluster, named by its pid.
func usersDir(home string) string { return filepath.Join(home, "pg.users.d") }

func openUsers(home string) (*users, error) {
	use, err := os.OpenFile(filepath.Join(home, "pg.users"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the users lock: %w", err)
	}
	decide, err := os.OpenFile(filepath.Join(home, "pg.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		use.Close()
		return nil, fmt.Errorf("open the start lock: %w", err)
	}
	return &users{use: use, decide: decide}, nil
}

// lockUsers counts this process among the users of home's cluster and holds
// the start lock (waiting while another process starts or stops the
// cluster); done releases the start lock once the cluster runs.
func lockUsers(ctx context.Context, home string) (*users, error) {
	u, err := openUsers(home)
	if err != nil {
		return nil, err
	}
	if err := u.lockDecide(ctx); err != nil {
		u.release()
		return nil, err
	}
	if err := syscall.Flock(int(u.use.Fd()), syscall.LOCK_SH); err != nil {
		u.release()
		return nil, fmt.Errorf("lock %s: %w", u.use.Name(), err)
	}
	if err := u.name(home); err != nil {
		u.release()
		return nil, err
	}
	return u, nil
}

// name leaves this process's pid and command line in usersDir(home), readable
// by its owner only: a command line may carry what others should not read.
func (u *users) name(home string) error {
	dir := usersDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("name this process among the users: %w", err)
	}
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	path := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(path, []byte(strings.Join(args, " ")), 0o600); err != nil {
		return fmt.Errorf("name this process among the users: %w", err)
	}
	u.named = path
	return nil
}

// holders names the processes using home's cluster:
// "pid 1234 (msql serve)", in pid order, skipping files of processes gone.
func holders(home string) []string {
	entries, err := os.ReadDir(usersDir(home))
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	out := make([]string, 0, len(pids))
	for _, pid := range pids {
		cmd, err := os.ReadFile(filepath.Join(usersDir(home), strconv.Itoa(pid)))
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("pid %d (%s)", pid, cmd))
	}
	return out
}

func (u *users) lockDecide(ctx context.Context) error {
	for {
		err := syscall.Flock(int(u.decide.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", u.decide.Name(), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// done releases the start lock: the cluster runs, and this process uses it.
func (u *users) done() error {
	if err := syscall.Flock(int(u.decide.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", u.decide.Name(), err)
	}
	return nil
}

// last holds the start lock and reports whether this process is the only
// user of the cluster, which it may then stop (the start lock is held until
// release).
func (u *users) last() bool {
	if u.lockDecide(context.Background()) != nil {
		return false
	}
	return syscall.Flock(int(u.use.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

func (u *users) release() {
	if u.named != "" {
		os.Remove(u.named)
	}
	u.use.Close()
	u.decide.Close()
}
