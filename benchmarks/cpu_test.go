package main

import (
	"os"
	"os/exec"
	"testing"
)

// procTimes reads this process's own line: its parent is the test binary's
// parent, and a child that has been reaped shows up in the children's times.
func TestProcTimesOfThisProcess(t *testing.T) {
	before, ppid, err := procTimes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if ppid != os.Getppid() {
		t.Fatalf("ppid %d, want %d", ppid, os.Getppid())
	}
	// A child that burns CPU, then exits and is waited for.
	if err := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	after, _, err := procTimes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after[2]+after[3] <= before[2]+before[3] {
		t.Fatalf("children's times did not grow after a busy child: %v then %v", before, after)
	}
}

// A command name holding spaces and parentheses does not shift the fields.
func TestProcTimesOddCommandName(t *testing.T) {
	dir := t.TempDir()
	odd := dir + "/a) (b c"
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_, ppid, err := procTimes(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if ppid != os.Getpid() {
		t.Fatalf("ppid %d, want %d (this process)", ppid, os.Getpid())
	}
}
