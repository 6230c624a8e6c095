package main

// The parts that make the test cluster run workloads: kube-controller-manager
// (Deployments make ReplicaSets make Pods, Services get EndpointSlices,
// namespaces are finalized, the garbage collector deletes dependents),
// kube-scheduler, and KWOK as the kubelet of a few fake nodes. KWOK turns a
// scheduled pod Running with a pod IP (no container runs) and answers the
// kubelet's streams that the apiserver forwards: logs, exec (a local
// command), attach and port-forward (to a TCP server of the supervisor).

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed kwok-stages.yaml
var kwokStages string

// The text the port-forward target sends first on every connection; then it
// echoes what it receives.
const portForwardGreeting = "kcluster port-forward target\n"

// A pod port whose forwarding KWOK cannot connect (the failure path of
// port-forward); cluster.env says it as KUBE_TEST_REFUSED_POD_PORT.
const refusedPodPort = 9

// CRI log lines (what KWOK reads for pods/log): the current and the previous
// container's.
var (
	containerLog = []string{
		"2026-01-01T00:00:00.000000000Z stdout F first line from the fake container",
		"2026-01-01T00:00:01.000000000Z stderr F second line, on stderr",
		"2026-01-01T00:00:02.000000000Z stdout F third line",
	}
	previousContainerLog = []string{
		"2025-12-31T23:59:00.000000000Z stdout F a line from the previous container",
	}
)

func (s *supervisor) kwokDir() string { return filepath.Join(s.dir, "kwok") }

// startWorkloads starts the port-forward target, the controller manager, the
// scheduler and KWOK, creates the nodes and waits until the scheduler can
// place pods on them.
func (s *supervisor) startWorkloads() error {
	if err := s.startPortForwardTarget(); err != nil {
		return err
	}
	if err := s.writeKwokConfig(); err != nil {
		return err
	}
	kubeconfig := filepath.Join(s.dir, "kubeconfig", "admin-cert.yaml")
	var err error
	if s.kcm, err = s.spawn(nil, "kube-controller-manager",
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		// Every default controller but the one that publishes the
		// kube-root-ca.crt ConfigMap into every namespace: tests count the
		// ConfigMaps of namespaces they make (docs/building.md).
		"--controllers=*,-root-ca-certificate-publisher-controller",
		"--service-account-private-key-file="+s.pki.SAKey,
		"--root-ca-file="+s.pki.ServingCA,
		"--kube-api-qps=100", "--kube-api-burst=200",
		"--v=1"); err != nil {
		return err
	}
	s.st.ControllerManagerPid = s.kcm.Process.Pid
	if s.sched, err = s.spawn(nil, "kube-scheduler",
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--v=1"); err != nil {
		return err
	}
	s.st.SchedulerPid = s.sched.Process.Pid
	// HOME points away from ~/.kwok, which kwok would read first.
	if s.kwok, err = s.spawn([]string{"HOME=" + s.kwokDir()}, "kwok",
		"--kubeconfig="+kubeconfig,
		"--config="+filepath.Join(s.kwokDir(), "kwok.yaml"),
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--node-port=%d", s.kwokPort),
		fmt.Sprintf("--server-address=127.0.0.1:%d", s.kwokPort),
		// Pod IPs: not the service range (10.0.0.0/24), not loopback
		// (EndpointSlice validation refuses it). Never dialled.
		"--cidr=10.244.0.0/16",
		"--node-lease-duration-seconds=40"); err != nil {
		return err
	}
	s.st.KwokPid = s.kwok.Process.Pid
	for _, c := range []*exec.Cmd{s.kcm, s.sched, s.kwok} {
		go func(c *exec.Cmd) {
			_ = c.Wait()
			log.Printf("%s exited: %v", filepath.Base(c.Path), c.ProcessState)
		}(c)
	}
	client, err := s.adminHTTPClient()
	if err != nil {
		return err
	}
	if err := s.createNodes(client); err != nil {
		return err
	}
	return s.waitFor(fmt.Sprintf("%d nodes Ready and schedulable", s.nodes),
		func() error { return s.nodesReady(client) }, s.workloadPartExited)
}

// workloadPartExited is true when the controller manager, the scheduler or
// KWOK has exited.
func (s *supervisor) workloadPartExited() bool {
	for _, c := range []*exec.Cmd{s.kcm, s.sched, s.kwok} {
		if c != nil && c.ProcessState != nil {
			return true
		}
	}
	return false
}

// writeKwokConfig writes KWOK's --config: the stages, then what its kubelet
// stand-in answers for every pod (no selector): exec runs the command on this
// machine in the kwok directory, logs and attach read CRI log files,
// port-forward of any port reaches the supervisor's target, except
// refusedPodPort, whose target (127.0.0.1:1) refuses the connection.
func (s *supervisor) writeKwokConfig() error {
	dir := s.kwokDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]string{
		"container.log":          containerLog,
		"previous-container.log": previousContainerLog,
		"attach.log":             nil,
	}
	for name, lines := range files {
		text := ""
		if len(lines) > 0 {
			text = strings.Join(lines, "\n") + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	streams := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: exec-local
spec:
  execs:
  - local:
      workDir: %[1]s
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: logs
spec:
  logs:
  - logsFile: %[1]s/container.log
    previousLogsFile: %[1]s/previous-container.log
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterAttach
metadata:
  name: attach
spec:
  attaches:
  - logsFile: %[1]s/attach.log
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: port-forward
spec:
  forwards:
  - ports: [%[3]d]
    target:
      address: 127.0.0.1
      port: 1
  - target:
      address: 127.0.0.1
      port: %[2]d
`, dir, s.portForwardPort, refusedPodPort)
	return os.WriteFile(filepath.Join(dir, "kwok.yaml"), []byte(kwokStages+"---\n"+streams), 0o644)
}

// startPortForwardTarget listens on 127.0.0.1: every connection gets the
// greeting and then its own bytes back.
func (s *supervisor) startPortForwardTarget() error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.portForwardPort))
	if err != nil {
		return err
	}
	s.portForwardListener = ln
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if _, err := io.WriteString(conn, portForwardGreeting); err != nil {
					return
				}
				_, _ = io.Copy(conn, conn)
			}()
		}
	}()
	return nil
}

// createNodes creates the fake nodes KWOK manages (by their annotation).
// Their status is what KWOK's node-initialize stage completes: the kubelet
// address the apiserver dials for logs, exec, attach and port-forward is
// KWOK's server.
func (s *supervisor) createNodes(client *http.Client) error {
	for i := 0; i < s.nodes; i++ {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := map[string]any{
			"apiVersion": "v1",
			"kind":       "Node",
			"metadata": map[string]any{
				"name":        name,
				"annotations": map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				"labels": map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
					"kubernetes.io/arch": "amd64", "type": "kwok"},
			},
			"status": map[string]any{
				// Both kinds: KWOK's node-initialize stage rewrites the
				// addresses (without the ones it lacks a value for) unless
				// both are there.
				"addresses": []map[string]string{{"type": "InternalIP", "address": "127.0.0.1"},
					{"type": "Hostname", "address": name}},
				"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]int{"Port": s.kwokPort}},
				"allocatable":     map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
				"capacity":        map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
			},
		}
		body, _ := json.Marshal(node)
		resp, err := client.Post(s.st.Server+"/api/v1/nodes", "application/json", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("create node %s: %d %s", name, resp.StatusCode, answer)
		}
	}
	return nil
}

// nodesReady is nil once every node is Ready and the controller manager has
// taken the not-ready taint (which admission puts on a new node) off it:
// then the scheduler places pods.
func (s *supervisor) nodesReady(client *http.Client) error {
	resp, err := client.Get(s.st.Server + "/api/v1/nodes")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Taints []struct {
					Key string `json:"key"`
				} `json:"taints"`
			} `json:"spec"`
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return err
	}
	if len(list.Items) < s.nodes {
		return fmt.Errorf("%d of %d nodes exist", len(list.Items), s.nodes)
	}
	for _, n := range list.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				ready = true
			}
		}
		if !ready {
			return fmt.Errorf("node %s is not Ready", n.Metadata.Name)
		}
		for _, t := range n.Spec.Taints {
			if strings.HasPrefix(t.Key, "node.kubernetes.io/") {
				return fmt.Errorf("node %s still has the taint %s", n.Metadata.Name, t.Key)
			}
		}
	}
	return nil
}

// stopWorkloads kills KWOK, the scheduler and the controller manager.
func (s *supervisor) stopWorkloads() {
	for _, c := range []*exec.Cmd{s.kwok, s.sched, s.kcm} {
		if c != nil && c.Process != nil && c.ProcessState == nil {
			_ = c.Process.Kill()
		}
	}
	if s.portForwardListener != nil {
		_ = s.portForwardListener.Close()
	}
	// Give them a moment to go, so that a later up on the same ports is clean.
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range []*exec.Cmd{s.kwok, s.sched, s.kcm} {
		for c != nil && c.Process != nil && alive(c.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}
