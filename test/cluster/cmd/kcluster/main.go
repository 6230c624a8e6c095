// Command kcluster runs the project's test cluster: a real etcd and a real
// kube-apiserver on 127.0.0.1, with TLS, a client CA, static tokens and RBAC,
// Toxiproxy in front of the apiserver for fault-injection tests, and (unless
// --apiserver-only) kube-controller-manager, kube-scheduler and KWOK running
// a few fake nodes whose pods become Running (workloads.go).
//
//	kcluster up      --dir DIR --bin-dir BIN [--watch-pid N|parent|none] [--nodes N] [--apiserver-only]
//	kcluster down    --dir DIR
//	kcluster restart-apiserver | stop-apiserver | start-apiserver --dir DIR
//	kcluster kill-apiserver | pause-apiserver | resume-apiserver --dir DIR
//	kcluster compact --dir DIR
//	kcluster status  --dir DIR
//
// `up` starts a supervisor in its own session and returns once the cluster is
// ready. The supervisor owns every process it starts (they die with
// it through PR_SET_PDEATHSIG), tears everything down on `down`, on
// SIGTERM/SIGINT, and when the watched process (by default the caller of
// `up`, i.e. ctest) is gone, so an interrupted test run leaves nothing behind. A later `up` on the same
// directory also kills whatever a previous supervisor left.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, `usage: kcluster COMMAND --dir DIR [flags]
commands:
  up                 start etcd, kube-apiserver, Toxiproxy, kube-controller-manager,
                     kube-scheduler and KWOK with --nodes fake nodes (default 3;
                     --apiserver-only: the first three only); wait until ready
  down               stop everything started by up
  restart-apiserver  stop and start the apiserver (same etcd, same port)
  stop-apiserver     stop the apiserver only
  start-apiserver    start the apiserver unless it runs (after stop-apiserver,
                     kill-apiserver, or a kill from outside)
  kill-apiserver     kill the apiserver with SIGKILL (no graceful shutdown)
  pause-apiserver    pause the apiserver with SIGSTOP (connections stay open)
  resume-apiserver   resume it with SIGCONT
  compact            compact etcd to its current revision
  status             print the cluster's state`)
	os.Exit(2)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kcluster: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	dir := fs.String("dir", "", "state directory (created; wiped by up)")
	binDir := fs.String("bin-dir", "", "directory holding etcd and kube-apiserver (default: next to kcluster)")
	watch := fs.String("watch-pid", "parent", "tear down when this process exits: a pid, 'parent' or 'none'")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long up/start may wait for readiness")
	nodes := fs.Int("nodes", 3, "fake nodes KWOK runs (up)")
	apiserverOnly := fs.Bool("apiserver-only", false, "no controller manager, scheduler, KWOK or nodes (up)")
	_ = fs.Parse(os.Args[2:])
	if *dir == "" {
		fatalf("%s: --dir is required", cmd)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fatalf("%s: bad --dir %q: %v", cmd, *dir, err)
	}
	*dir = abs
	if *binDir == "" {
		self, err := os.Executable()
		if err != nil {
			fatalf("cannot locate own executable: %v", err)
		}
		*binDir = filepath.Dir(self)
	}

	switch cmd {
	case "up":
		watchPid := 0
		switch *watch {
		case "parent":
			watchPid = os.Getppid()
		case "none":
		default:
			if watchPid, err = strconv.Atoi(*watch); err != nil || watchPid <= 0 {
				fatalf("up: --watch-pid=%q is not a pid, 'parent' or 'none'", *watch)
			}
		}
		if *apiserverOnly {
			*nodes = 0
		} else if *nodes < 1 {
			fatalf("up: --nodes=%d: at least one node (or --apiserver-only)", *nodes)
		}
		up(*dir, *binDir, watchPid, *timeout, *nodes)
	case "supervise":
		pid, _ := strconv.Atoi(*watch)
		os.Exit(supervise(*dir, *binDir, pid, *timeout, *nodes))
	case "down":
		down(*dir)
	case "restart-apiserver", "stop-apiserver", "start-apiserver", "kill-apiserver", "pause-apiserver",
		"resume-apiserver", "compact", "status":
		reply, err := control(*dir, cmd)
		if err != nil {
			fatalf("%s: %v", cmd, err)
		}
		fmt.Println(reply)
	default:
		usage()
	}
}

// up wipes dir (killing leftovers of an earlier run), starts the supervisor
// detached from our session and waits for it to report ready or fail.
func up(dir, binDir string, watchPid int, timeout time.Duration, nodes int) {
	killLeftovers(dir)
	if err := os.RemoveAll(dir); err != nil {
		fatalf("up: cannot clear %s: %v", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fatalf("up: %v", err)
	}
	need := []string{"etcd", "kube-apiserver", "toxiproxy-server"}
	if nodes > 0 {
		need = append(need, "kube-controller-manager", "kube-scheduler", "kwok")
	}
	for _, b := range need {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			fatalf("up: %s not found in %s (build it with test/cluster/build.sh)", b, binDir)
		}
	}
	logPath := filepath.Join(dir, "logs", "supervisor.log")
	logf, err := os.Create(logPath)
	if err != nil {
		fatalf("up: %v", err)
	}
	self, _ := os.Executable()
	sup := exec.Command(self, "supervise", "--dir", dir, "--bin-dir", binDir,
		"--watch-pid", strconv.Itoa(watchPid), "--timeout", timeout.String(), "--nodes", strconv.Itoa(nodes))
	sup.Stdout, sup.Stderr = logf, logf
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		fatalf("up: cannot start supervisor: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sup.Wait() }()

	deadline := time.After(timeout + 30*time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			fmt.Fprintf(os.Stderr, "kcluster: up: supervisor exited before the cluster was ready (%v); last log lines:\n", err)
			printTail(os.Stderr, logPath, 40)
			os.Exit(1)
		case <-deadline:
			_ = sup.Process.Signal(syscall.SIGTERM)
			fmt.Fprintf(os.Stderr, "kcluster: up: cluster not ready after %v; last log lines:\n", timeout)
			printTail(os.Stderr, logPath, 40)
			os.Exit(1)
		case <-tick.C:
			if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
				env, _ := os.ReadFile(filepath.Join(dir, "cluster.env"))
				fmt.Printf("kcluster: cluster ready (supervisor pid %d)\n%s", sup.Process.Pid, env)
				return
			}
		}
	}
}

// down asks the supervisor to stop and waits for it; if it does not answer,
// the recorded processes are killed.
func down(dir string) {
	st, err := readState(dir)
	if err != nil {
		fmt.Println("kcluster: down: no running cluster in", dir)
		return
	}
	if _, err := control(dir, "stop"); err != nil {
		fmt.Fprintf(os.Stderr, "kcluster: down: supervisor did not answer (%v); killing recorded processes\n", err)
		killLeftovers(dir)
		return
	}
	for i := 0; i < 300 && alive(st.SupervisorPid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(st.SupervisorPid) {
		killLeftovers(dir)
	}
	fmt.Println("kcluster: cluster stopped")
}

// control sends one command line to the supervisor and returns its reply.
func control(dir, cmd string) (string, error) {
	st, err := readState(dir)
	if err != nil {
		return "", fmt.Errorf("no running cluster in %s: %w", dir, err)
	}
	conn, err := net.DialTimeout("unix", st.ControlSocket, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Minute))
	if _, err := fmt.Fprintln(conn, cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && line == "" {
		if cmd == "stop" && errors.Is(err, syscall.ECONNRESET) {
			return "ok", nil
		}
		return "", err
	}
	line = strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(line, "error "); ok {
		return "", errors.New(rest)
	}
	return strings.TrimPrefix(line, "ok "), nil
}

// killLeftovers kills the processes a previous supervisor recorded, if they
// still run one of our binaries.
func killLeftovers(dir string) {
	st, err := readState(dir)
	if err != nil {
		return
	}
	for _, pid := range []int{st.SupervisorPid, st.APIServerPid, st.EtcdPid, st.ToxiproxyPid,
		st.ControllerManagerPid, st.SchedulerPid, st.KwokPid} {
		if pid <= 0 || !alive(pid) {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		switch strings.TrimSuffix(filepath.Base(exe), " (deleted)") {
		case "kcluster", "etcd", "kube-apiserver", "toxiproxy-server", "kube-controller-manager", "kube-scheduler",
			"kwok":
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is not alive for our purposes.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func printTail(w *os.File, path string, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}
