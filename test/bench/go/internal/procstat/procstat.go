// Package procstat is what the Go benchmark programs report about their own
// process, read the same way as test/bench/tools/process_stats.hpp does for
// the C++ ones.
package procstat

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Usage is the process's getrusage so far.
type Usage struct {
	CPU      float64 // user + system seconds
	System   float64 // system seconds
	MaxRSSKB int64   // peak resident set, KiB
}

// Now reads the process's usage.
func Now() Usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Usage{
		CPU:      float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6,
		System:   float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6,
		MaxRSSKB: ru.Maxrss,
	}
}

// CPUSeconds is the user + system CPU time of the whole process so far.
func CPUSeconds() float64 { return Now().CPU }

// RSSKB is the current resident set (VmRSS), KiB; -1 when unreadable.
func RSSKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmRSS:") {
			v, _ := strconv.ParseInt(strings.Fields(s.Text())[1], 10, 64)
			return v
		}
	}
	return -1
}
