package main

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// takeForeground gives the interactive shell the terminal to itself when it
// was started by a program that does no job control (go tool task demo,
// sh -c): it moves into a process group of its own and makes that group the
// terminal's foreground, so the Ctrl-C that cancels a statement reaches msql
// only. Otherwise the terminal signals the starter's whole group, and go-task
// answers the third Ctrl-C by exiting, leaving msql orphaned on the terminal.
// Ctrl-Z is ignored then: the starter could not resume a stopped msql. Started
// by a job-control shell, msql already leads its group and nothing changes.
// The returned func gives the terminal back to the starter's group.
func takeForeground(tty *os.File) (restore func()) {
	noop := func() {}
	fd := tty.Fd()
	starter := syscall.Getpgrp()
	if starter == os.Getpid() {
		return noop
	}
	if fg, err := foregroundGroup(fd); err != nil || fg != starter {
		return noop // a background job: the starter owns the terminal
	}
	// A background group that sets the foreground would be stopped by SIGTTOU.
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTSTP)
	if err := syscall.Setpgid(0, 0); err != nil {
		signal.Reset(syscall.SIGTTOU, syscall.SIGTSTP)
		return noop
	}
	if err := setForegroundGroup(fd, os.Getpid()); err != nil {
		_ = syscall.Setpgid(0, starter)
		signal.Reset(syscall.SIGTTOU, syscall.SIGTSTP)
		return noop
	}
	return func() { _ = setForegroundGroup(fd, starter) }
}

func foregroundGroup(fd uintptr) (int, error) {
	var pgid int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgid))); e != 0 {
		return 0, e
	}
	return int(pgid), nil
}

func setForegroundGroup(fd uintptr, pgid int) error {
	p := int32(pgid)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&p))); e != 0 {
		return e
	}
	return nil
}
