// The supervisor: starts etcd, the apiserver, KWOK and Toxiproxy, restarts
// and kills them on request, and records what runs in DIR/state.json.
// Size: about 710 lines, one function per process and per command; they
// share the state file and the process helpers below.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// state is what the supervisor records in DIR/state.json for the other
// commands (and for killing leftovers after a crash).
type state struct {
	SupervisorPid int    `json:"supervisorPid"`
	EtcdPid       int    `json:"etcdPid"`
	APIServerPid  int    `json:"apiserverPid"`
	ToxiproxyPid  int    `json:"toxiproxyPid"`
	ControlSocket string `json:"controlSocket"`
	Server        string `json:"server"`
	EtcdURL       string `json:"etcdURL"`
	// ProxyServer is Toxiproxy's listener in front of the apiserver
	// (https://127.0.0.1:PORT), ToxiproxyAPI its HTTP API.
	ProxyServer  string `json:"proxyServer"`
	ToxiproxyAPI string `json:"toxiproxyAPI"`
	// The workload parts (0 in an apiserver-only cluster).
	ControllerManagerPid int `json:"controllerManagerPid,omitempty"`
	SchedulerPid         int `json:"schedulerPid,omitempty"`
	KwokPid              int `json:"kwokPid,omitempty"`
	Nodes                int `json:"nodes"`
}

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s/state.json: %w", dir, err)
	}
	return &st, nil
}

type supervisor struct {
	dir, binDir string
	timeout     time.Duration
	pki         *pkiFiles
	nodes       int // fake nodes; 0: apiserver only (no controller manager, scheduler, KWOK)

	etcdPort, etcdPeerPort, apiPort, proxyPort, toxiPort, kwokPort, portForwardPort int

	mu        sync.Mutex
	st        state
	etcd, api *exec.Cmd
	apiDone   chan struct{}
	toxi      *exec.Cmd

	kcm, sched, kwok    *exec.Cmd
	portForwardListener net.Listener
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func supervise(dir, binDir string, watchPid int, timeout time.Duration, nodes int) int {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	s := &supervisor{dir: dir, binDir: binDir, timeout: timeout, pki: newPKIFiles(filepath.Join(dir, "pki")), nodes: nodes}
	s.st.Nodes = nodes
	s.st.SupervisorPid = os.Getpid()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	if err := s.start(); err != nil {
		log.Printf("start failed: %v", err)
		s.teardown()
		return 1
	}

	stop := make(chan string, 1)
	ln, err := s.listenControl(stop)
	if err != nil {
		log.Printf("control socket: %v", err)
		s.teardown()
		return 1
	}
	defer ln.Close()
	if err := s.writeState(); err != nil {
		log.Printf("state: %v", err)
		s.teardown()
		return 1
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		log.Printf("ready: %v", err)
	}
	log.Printf("cluster ready at %s", s.st.Server)

	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case sig := <-sigs:
			log.Printf("received %v", sig)
			s.teardown()
			return 0
		case why := <-stop:
			log.Printf("stopping: %s", why)
			s.teardown()
			return 0
		case <-tick.C:
			if watchPid > 0 && !alive(watchPid) {
				log.Printf("watched process %d is gone", watchPid)
				s.teardown()
				return 0
			}
		}
	}
}

func (s *supervisor) start() error {
	if err := s.pki.generate(); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	var err error
	for _, p := range []*int{&s.etcdPort, &s.etcdPeerPort, &s.apiPort, &s.proxyPort, &s.toxiPort, &s.kwokPort,
		&s.portForwardPort} {
		if *p, err = freePort(); err != nil {
			return err
		}
	}
	s.st.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", s.etcdPort)
	s.st.Server = fmt.Sprintf("https://127.0.0.1:%d", s.apiPort)
	s.st.ProxyServer = fmt.Sprintf("https://127.0.0.1:%d", s.proxyPort)
	s.st.ToxiproxyAPI = fmt.Sprintf("http://127.0.0.1:%d", s.toxiPort)
	if err := s.startEtcd(); err != nil {
		return err
	}
	if err := s.startAPIServer(); err != nil {
		return err
	}
	if err := s.grantNamespaceReader(); err != nil {
		return err
	}
	if err := s.startToxiproxy(); err != nil {
		return err
	}
	if err := s.writeKubeconfigs(); err != nil {
		return err
	}
	if s.nodes > 0 {
		if err := s.startWorkloads(); err != nil {
			return err
		}
	}
	return s.writeEnv()
}

// spawn starts a child that is killed if the supervisor dies, whatever the
// reason (PR_SET_PDEATHSIG), with `env` added to the supervisor's
// environment. Output goes to DIR/logs/NAME.log.
func (s *supervisor) spawn(env []string, name string, args ...string) (*exec.Cmd, error) {
	logf, err := os.OpenFile(filepath.Join(s.dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(s.binDir, name), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logf.Close()
	log.Printf("started %s (pid %d)", name, cmd.Process.Pid)
	return cmd, nil
}

func (s *supervisor) startEtcd() error {
	peer := fmt.Sprintf("http://127.0.0.1:%d", s.etcdPeerPort)
	cmd, err := s.spawn(nil, "etcd",
		"--name=default",
		"--data-dir="+filepath.Join(s.dir, "etcd-data"),
		"--listen-client-urls="+s.st.EtcdURL,
		"--advertise-client-urls="+s.st.EtcdURL,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer,
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn")
	if err != nil {
		return err
	}
	s.etcd = cmd
	s.st.EtcdPid = cmd.Process.Pid
	go func() { _ = cmd.Wait(); log.Printf("etcd exited: %v", cmd.ProcessState) }()
	return s.waitFor("etcd /health", func() error {
		return getContains(s.st.EtcdURL+"/health", `"health":"true"`)
	}, func() bool { return cmd.ProcessState != nil })
}

func (s *supervisor) apiServerArgs() []string {
	p := s.pki
	issuer := "https://kubernetes.default.svc.cluster.local"
	return []string{
		"--etcd-servers=" + s.st.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", s.apiPort),
		"--tls-cert-file=" + p.ServingCert,
		"--tls-private-key-file=" + p.ServingKey,
		"--client-ca-file=" + p.ClientCA,
		"--token-auth-file=" + p.TokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + issuer,
		"--api-audiences=" + issuer,
		"--service-account-key-file=" + p.SAPub,
		"--service-account-signing-key-file=" + p.SAKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		// The "kubernetes" Service would point at a loopback address, which
		// Endpoints validation rejects; nothing here needs it.
		"--endpoint-reconciler-type=none",
		// The fake nodes' kubelet (KWOK) is reached at the node's InternalIP.
		"--kubelet-preferred-address-types=InternalIP",
		"--cert-dir=" + filepath.Join(s.dir, "apiserver-certs"),
		"--profiling=false",
		"--v=1",
	}
}

func (s *supervisor) startAPIServer() error {
	cmd, err := s.spawn(nil, "kube-apiserver", s.apiServerArgs()...)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.api, s.apiDone = cmd, done
	s.st.APIServerPid = cmd.Process.Pid
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		log.Printf("kube-apiserver exited: %v", cmd.ProcessState)
		// An apiserver killed from outside is forgotten here, so that
		// start-apiserver starts a new one.
		s.mu.Lock()
		if s.api == cmd {
			s.api = nil
			s.st.APIServerPid = 0
		}
		s.mu.Unlock()
		close(done)
	}()
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	client, err := s.adminHTTPClient()
	if err != nil {
		return err
	}
	get := func(path string) error {
		resp, err := client.Get(s.st.Server + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return nil
	}
	if err := s.waitFor("kube-apiserver /readyz", func() error { return get("/readyz") }, exited); err != nil {
		return err
	}
	return s.waitFor("namespace default", func() error { return get("/api/v1/namespaces/default") }, exited)
}

// grantNamespaceReader lets the unprivileged user list namespaces (and
// nothing else beyond what RBAC gives every authenticated user), so each
// identity can be checked against the same read.
func (s *supervisor) grantNamespaceReader() error {
	client, err := s.adminHTTPClient()
	if err != nil {
		return err
	}
	objects := []struct{ path, body string }{
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
"metadata":{"name":"kube-test:namespace-reader"},
"rules":[{"apiGroups":[""],"resources":["namespaces"],"verbs":["get","list","watch"]}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
"metadata":{"name":"kube-test:namespace-reader"},
"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"kube-test:namespace-reader"},
"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"}]}`},
	}
	for _, o := range objects {
		resp, err := client.Post(s.st.Server+o.path, "application/json", strings.NewReader(o.body))
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != 201 {
			return fmt.Errorf("POST %s: %d %s", o.path, resp.StatusCode, body)
		}
	}
	return nil
}

func (s *supervisor) stopAPIServer() {
	s.mu.Lock()
	cmd, done := s.api, s.apiDone
	s.api = nil
	s.st.APIServerPid = 0
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	terminate(cmd.Process, done, 15*time.Second)
}

// terminate sends SIGTERM (and SIGCONT, in case the process is paused), then
// SIGKILL if the process has not exited in time.
func terminate(p *os.Process, done <-chan struct{}, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	_ = p.Signal(syscall.SIGCONT)
	select {
	case <-done:
	case <-time.After(grace):
		_ = p.Kill()
		<-done
	}
}

// killAPIServer sends SIGKILL to the apiserver and waits until it is gone:
// no graceful shutdown, open connections are reset by the kernel.
func (s *supervisor) killAPIServer() error {
	s.mu.Lock()
	cmd, done := s.api, s.apiDone
	s.api = nil
	s.st.APIServerPid = 0
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("the apiserver is not running")
	}
	_ = cmd.Process.Kill()
	<-done
	return nil
}

// signalAPIServer sends sig (SIGSTOP, SIGCONT) to the running apiserver.
func (s *supervisor) signalAPIServer(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.api
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("the apiserver is not running")
	}
	return cmd.Process.Signal(sig)
}

// startToxiproxy starts Toxiproxy with one proxy, "apiserver", listening on
// 127.0.0.1 (s.proxyPort) in front of the apiserver's port. The serving
// certificate's SANs include 127.0.0.1, so clients verify TLS through the
// proxy as they do directly. Toxics are added by the tests over its HTTP API.
func (s *supervisor) startToxiproxy() error {
	cfg := filepath.Join(s.dir, "toxiproxy.json")
	proxies := fmt.Sprintf(`[{"name":"apiserver","listen":"127.0.0.1:%d","upstream":"127.0.0.1:%d","enabled":true}]`,
		s.proxyPort, s.apiPort)
	if err := os.WriteFile(cfg, []byte(proxies+"\n"), 0o644); err != nil {
		return err
	}
	cmd, err := s.spawn(nil, "toxiproxy-server", "-host", "127.0.0.1", "-port", fmt.Sprint(s.toxiPort), "-config", cfg)
	if err != nil {
		return err
	}
	s.toxi = cmd
	s.st.ToxiproxyPid = cmd.Process.Pid
	go func() { _ = cmd.Wait(); log.Printf("toxiproxy-server exited: %v", cmd.ProcessState) }()
	return s.waitFor("toxiproxy proxy apiserver", func() error {
		return getContains(s.st.ToxiproxyAPI+"/proxies/apiserver", `"enabled":true`)
	}, func() bool { return cmd.ProcessState != nil })
}

// getContains is nil when GET url answers 200 with `want` in its body.
func getContains(url, want string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(want)) {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	return nil
}

func (s *supervisor) teardown() {
	s.stopWorkloads()
	if s.toxi != nil && s.toxi.Process != nil {
		_ = s.toxi.Process.Kill()
	}
	s.stopAPIServer()
	if s.etcd != nil && s.etcd.Process != nil && s.etcd.ProcessState == nil {
		_ = s.etcd.Process.Signal(syscall.SIGTERM)
		for i := 0; i < 100 && alive(s.etcd.Process.Pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		_ = s.etcd.Process.Kill()
	}
	for _, f := range []string{"ready", "state.json", "etcd-data"} {
		_ = os.RemoveAll(filepath.Join(s.dir, f))
	}
	if s.st.ControlSocket != "" {
		_ = os.Remove(s.st.ControlSocket)
	}
	log.Printf("torn down")
}

func (s *supervisor) waitFor(what string, probe func() error, exited func() bool) error {
	deadline := time.Now().Add(s.timeout)
	var last error
	for time.Now().Before(deadline) {
		if exited() {
			return fmt.Errorf("%s: process exited; see %s", what, filepath.Join(s.dir, "logs"))
		}
		if last = probe(); last == nil {
			log.Printf("%s ok", what)
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: not ready after %v: %v", what, s.timeout, last)
}

func (s *supervisor) adminHTTPClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(s.pki.ServingCA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(s.pki.AdminCert, s.pki.AdminKey)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}},
	}, nil
}

// writeKubeconfigs writes one kubeconfig per identity. Credentials are
// referenced by absolute path (client certificates) or inlined (tokens).
func (s *supervisor) writeKubeconfigs() error {
	dir := filepath.Join(s.dir, "kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	user := map[string]string{
		"admin-cert":  fmt.Sprintf("    client-certificate: %s\n    client-key: %s\n", s.pki.AdminCert, s.pki.AdminKey),
		"admin-token": fmt.Sprintf("    token: %s\n", s.pki.AdminToken),
		"user-token":  fmt.Sprintf("    token: %s\n", s.pki.UserToken),
	}
	servers := map[string]string{}
	for name := range user {
		servers[name] = s.st.Server
	}
	// The admin certificate again, through Toxiproxy.
	user["admin-cert-proxied"] = user["admin-cert"]
	servers["admin-cert-proxied"] = s.st.ProxyServer
	for name, creds := range user {
		cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kube-test
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
%scontexts:
- name: %s
  context:
    cluster: kube-test
    user: %s
    namespace: default
current-context: %s
`, servers[name], s.pki.ServingCA, name, creds, name, name, name)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(cfg), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (s *supervisor) writeEnv() error {
	self, _ := os.Executable()
	kc := func(n string) string { return filepath.Join(s.dir, "kubeconfig", n+".yaml") }
	lines := []string{
		"KUBE_TEST_CLUSTER_DIR=" + s.dir,
		"KUBE_TEST_SERVER=" + s.st.Server,
		"KUBE_TEST_CA=" + s.pki.ServingCA,
		"KUBE_TEST_WRONG_CA=" + s.pki.WrongCA,
		"KUBE_TEST_ADMIN_CERT=" + s.pki.AdminCert,
		"KUBE_TEST_ADMIN_KEY=" + s.pki.AdminKey,
		"KUBE_TEST_KUBECONFIG_ADMIN=" + kc("admin-cert"),
		"KUBE_TEST_KUBECONFIG_ADMIN_TOKEN=" + kc("admin-token"),
		"KUBE_TEST_KUBECONFIG_USER=" + kc("user-token"),
		"KUBE_TEST_KCLUSTER=" + self,
		"KUBE_TEST_ETCD_URL=" + s.st.EtcdURL,
		"KUBE_TEST_PROXY_SERVER=" + s.st.ProxyServer,
		"KUBE_TEST_TOXIPROXY_API=" + s.st.ToxiproxyAPI,
		"KUBE_TEST_KUBECONFIG_ADMIN_PROXIED=" + kc("admin-cert-proxied"),
		fmt.Sprintf("KUBE_TEST_NODES=%d", s.nodes),
		"KUBE_TEST_KUBECTL=" + filepath.Join(s.binDir, "kubectl"),
	}
	if s.nodes > 0 {
		lines = append(lines,
			"KUBE_TEST_KWOK_DIR="+s.kwokDir(),
			fmt.Sprintf("KUBE_TEST_PORT_FORWARD_TARGET=127.0.0.1:%d", s.portForwardPort),
			fmt.Sprintf("KUBE_TEST_REFUSED_POD_PORT=%d", refusedPodPort))
	}
	return os.WriteFile(filepath.Join(s.dir, "cluster.env"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func (s *supervisor) writeState() error {
	s.mu.Lock()
	data, err := json.MarshalIndent(s.st, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, "state.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "state.json"))
}

// listenControl serves one-line commands on a unix socket. Socket paths are
// limited to ~108 bytes, so long state directories get one in the temp dir.
func (s *supervisor) listenControl(stop chan<- string) (net.Listener, error) {
	path := filepath.Join(s.dir, "control.sock")
	if len(path) > 100 {
		sum := sha256.Sum256([]byte(s.dir))
		path = filepath.Join(os.TempDir(), "kcluster-"+hex.EncodeToString(sum[:8])+".sock")
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	s.st.ControlSocket = path
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			// Commands run one at a time: a restart never overlaps a compaction.
			s.serve(conn, stop)
		}
	}()
	return ln, nil
}

func (s *supervisor) serve(conn net.Conn, stop chan<- string) {
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return
	}
	cmd := strings.TrimSpace(line)
	log.Printf("control: %s", cmd)
	reply := func(err error, ok string) {
		if err != nil {
			log.Printf("control: %s failed: %v", cmd, err)
			fmt.Fprintf(conn, "error %v\n", err)
			return
		}
		fmt.Fprintf(conn, "ok %s\n", ok)
	}
	switch cmd {
	case "stop":
		fmt.Fprintln(conn, "ok stopping")
		stop <- "stop requested"
	case "stop-apiserver":
		s.stopAPIServer()
		reply(s.writeState(), "apiserver stopped")
	case "start-apiserver":
		err := s.ensureAPIServer()
		if err == nil {
			err = s.writeState()
		}
		reply(err, "apiserver started")
	case "kill-apiserver":
		err := s.killAPIServer()
		if err == nil {
			err = s.writeState()
		}
		reply(err, "apiserver killed")
	case "pause-apiserver":
		reply(s.signalAPIServer(syscall.SIGSTOP), "apiserver paused")
	case "resume-apiserver":
		reply(s.signalAPIServer(syscall.SIGCONT), "apiserver resumed")
	case "restart-apiserver":
		s.stopAPIServer()
		err := s.ensureAPIServer()
		if err == nil {
			err = s.writeState()
		}
		reply(err, "apiserver restarted")
	case "compact":
		rev, err := s.compact()
		reply(err, fmt.Sprintf("compacted to revision %d", rev))
	case "status":
		s.mu.Lock()
		data, _ := json.Marshal(s.st)
		s.mu.Unlock()
		reply(nil, string(data))
	default:
		reply(fmt.Errorf("unknown command %q", cmd), "")
	}
}

// ensureAPIServer starts the apiserver unless one is running. A process that
// died (killed from outside, crashed) counts as not running, also in the
// moment before its exit is noticed.
func (s *supervisor) ensureAPIServer() error {
	s.mu.Lock()
	running := s.api != nil && alive(s.api.Process.Pid)
	s.mu.Unlock()
	if running {
		return nil
	}
	return s.startAPIServer()
}

// compact compacts etcd's keyspace up to its current revision through etcd's
// JSON gateway, so that watches resuming from an older resourceVersion get
// 410 Gone.
func (s *supervisor) compact() (int64, error) {
	post := func(path string, body any, out any) error {
		data, _ := json.Marshal(body)
		resp, err := http.Post(s.st.EtcdURL+path, "application/json", bytes.NewReader(data))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, raw)
		}
		return json.Unmarshal(raw, out)
	}
	var rng struct {
		Header struct {
			Revision json.Number `json:"revision"`
		} `json:"header"`
	}
	key := base64.StdEncoding.EncodeToString([]byte("/"))
	if err := post("/v3/kv/range", map[string]any{"key": key, "limit": 1, "keys_only": true}, &rng); err != nil {
		return 0, err
	}
	rev, err := rng.Header.Revision.Int64()
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", rng.Header.Revision, err)
	}
	var out map[string]any
	if err := post("/v3/kv/compaction", map[string]any{"revision": rev, "physical": true}, &out); err != nil {
		return 0, err
	}
	return rev, nil
}
