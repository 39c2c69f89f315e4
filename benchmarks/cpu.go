package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CPU accounting for the archival children. On a machine of few cores the
// archiver's throughput is bounded by the CPU that its Go side and PostgreSQL
// together spend per row, not by either one's speed alone; the wall-clock
// ratio to the read limit cannot show that, these seconds do.

// cpuUse is CPU time, user plus system, in seconds: Go is this process, PG the
// PostgreSQL cluster — the postmaster, its live children (backends, autovacuum,
// checkpointer, WAL writer) and the children it has reaped, so a connection
// closed during a measurement still counts.
type cpuUse struct{ Go, PG float64 }

func (a cpuUse) minus(b cpuUse) cpuUse { return cpuUse{Go: a.Go - b.Go, PG: a.PG - b.PG} }

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux ABI, whatever the kernel's internal tick rate.
const clockTicks = 100

// postmasterPID reads the cluster's postmaster.pid, whose first line is the PID.
func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid in %s: %w", dataDir, err)
	}
	return pid, nil
}

// cpuNow is the CPU this process and the cluster of postmaster have used so far.
func cpuNow(postmaster int) (cpuUse, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuUse{}, err
	}
	use := cpuUse{Go: seconds(ru.Utime) + seconds(ru.Stime)}
	pm, _, err := procTimes(postmaster)
	if err != nil {
		return cpuUse{}, fmt.Errorf("postmaster %d: %w", postmaster, err)
	}
	ticks := pm[0] + pm[1] + pm[2] + pm[3]
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return cpuUse{}, err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == postmaster {
			continue
		}
		t, ppid, err := procTimes(pid)
		if err != nil || ppid != postmaster {
			continue // not a process, or gone since the listing
		}
		ticks += t[0] + t[1]
	}
	use.PG = float64(ticks) / clockTicks
	return use, nil
}

// procTimes reads utime, stime, cutime and cstime (in clock ticks) and the
// parent PID of pid from /proc/<pid>/stat.
func procTimes(pid int) (times [4]int64, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return times, 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces or
	// parentheses itself: the fields that follow start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return times, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime…cstime fields 14–17.
	if len(f) < 15 {
		return times, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return times, 0, fmt.Errorf("/proc/%d/stat ppid: %w", pid, err)
	}
	for k := range times {
		if times[k], err = strconv.ParseInt(f[11+k], 10, 64); err != nil {
			return times, 0, fmt.Errorf("/proc/%d/stat field %d: %w", pid, 14+k, err)
		}
	}
	return times, ppid, nil
}

func seconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// cpuNote says what a window's CPU per million rows allows on this machine's
// cores if every part overlapped perfectly.
func cpuNote(rows int64, read, archive cpuUse, cores int) string {
	perM := func(s float64) float64 { return s / float64(rows) * 1e6 }
	total := perM(archive.Go + archive.PG)
	return fmt.Sprintf("CPU-seconds per million rows: read limit %.2f Go + %.2f PostgreSQL; archival %.2f Go + %.2f PostgreSQL = %.2f, so %d cores allow at most %.0f rows/s with perfect overlap",
		perM(read.Go), perM(read.PG), perM(archive.Go), perM(archive.PG), total, cores, float64(cores)/total*1e6)
}
