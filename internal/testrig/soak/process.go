package soak

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one msql server the soak supervises: it restarts it after an
// injected kill and records every exit it did not cause.
type process struct {
	name   string
	bin    string
	args   []string
	logf   *os.File
	health string // address of its /readyz

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	killing    bool     // the next exit is the soak's own kill
	stopping   bool     // the soak is ending: no restart
	unexpected []string // exits the soak did not cause
	starts     int
}

func newProcess(name, bin, logPath, health string, args ...string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &process{name: name, bin: bin, args: args, logf: f, health: health}, nil
}

// start runs the process and waits until it answers /readyz.
func (p *process) start(ctx context.Context) error {
	p.mu.Lock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.logf, p.logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.exited, p.killing = cmd, make(chan struct{}), false
	p.starts++
	exited := p.exited
	p.mu.Unlock()
	go p.wait(cmd, exited)
	return p.ready(ctx, exited)
}

func (p *process) wait(cmd *exec.Cmd, exited chan struct{}) {
	err := cmd.Wait()
	p.mu.Lock()
	if !p.killing && !p.stopping {
		p.unexpected = append(p.unexpected, fmt.Sprintf("%s exited at %s: %v", p.name, time.Now().UTC().Format(time.TimeOnly), err))
	}
	p.mu.Unlock()
	close(exited)
}

func (p *process) ready(ctx context.Context, exited chan struct{}) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get("http://" + p.health + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before it was ready (see %s)", p.name, p.logf.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 3 minutes (see %s)", p.name, p.logf.Name())
		}
	}
}

// kill9 kills the process with SIGKILL, starts it again and returns how long
// it took to be ready again.
func (p *process) kill9(ctx context.Context) (time.Duration, error) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killing = true
	p.mu.Unlock()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill -9 %s: %w", p.name, err)
	}
	<-exited
	err := p.start(ctx)
	return time.Since(start), err
}

// restartIfDead starts the process again when it died on its own (the death
// is already recorded); the soak goes on so the end checks still run.
func (p *process) restartIfDead(ctx context.Context) error {
	p.mu.Lock()
	exited, stopping := p.exited, p.stopping
	p.mu.Unlock()
	select {
	case <-exited:
		if !stopping {
			return p.start(ctx)
		}
	default:
	}
	return nil
}

// stop ends the process with SIGTERM (SIGKILL after 30 s).
func (p *process) stop() error {
	p.mu.Lock()
	p.stopping = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	defer p.logf.Close()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New(p.name + " did not stop on SIGTERM within 30 s")
	}
}

func (p *process) deaths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.unexpected...)
}

// log is the process's log so far.
func (p *process) log() string {
	b, _ := os.ReadFile(p.logf.Name())
	return string(b)
}

// logTail is the last n lines of the process's log.
func (p *process) logTail(n int) string {
	b, _ := os.ReadFile(p.logf.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
