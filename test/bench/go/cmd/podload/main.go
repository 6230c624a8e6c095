// podload creates and updates pods for the informer benchmark
// (test/bench/informer/run.sh):
//
//	podload -kubeconfig F -namespace NS [-workload pending|status] create N    create N pods
//	podload -kubeconfig F -namespace NS update M    M updates (annotation changes), round-robin over the pods
//	podload -kubeconfig F -namespace NS delete      delete every pod of the namespace
//
// The pods look like a real cluster's rather than like copies of one pod
// (see podSet and pod): they belong to sets of about 8 pods, each set one
// workload's pods made from one template (Deployment's ReplicaSets,
// StatefulSets, Jobs, bare pods from kubectl run) of 50 apps in several
// revisions, so labels, annotations, containers, env, owners and images,
// and with them the managedFields' fieldsV1, differ between sets and are
// equal within one, as the pods of one ReplicaSet are. Each set's pods are
// spread over the whole creation (pod i is in set i % sets), so their
// managedFields times (whole seconds) differ too; the creating field manager
// is kube-controller-manager, or kubectl-run for bare pods.
//
// Workloads (-workload):
//
//	pending  the pods as created: never scheduled (the test cluster has no
//	         scheduler or nodes), Pending, no status but the server's,
//	         one managedFields entry each.
//	status   the pods run: each is created on a node (spec.nodeName, set by
//	         the creator: there is no scheduler to bind it), and a
//	         second field manager, kubelet, writes its status about a second
//	         later (UpdateStatus: phase, conditions, hostIP(s), podIP(s),
//	         startTime, containerStatuses), as the kubelet does once the
//	         containers run; two managedFields entries each, the second for
//	         the status subresource, whose fieldsV1 differs for every pod
//	         (it holds the pod's IP as a key of podIPs).
//
// Nothing runs the pods: no kubelet, no controllers. The owners named in
// ownerReferences do not exist (no garbage collector runs either).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The letters Kubernetes uses for generated names and template hashes.
const alphabet = "bcdfghjklmnpqrstvwxz2456789"

// mix scrambles x (splitmix64's finaliser): hashes and names derived from
// it look random but are the same in every run.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// letters is x written with n letters of the alphabet.
func letters(x uint64, n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = alphabet[x%uint64(len(alphabet))]
		x /= uint64(len(alphabet))
	}
	return string(b)
}

// hexOf is a 64-digit hex string derived from the words (image digests,
// container IDs).
func hexOf(words ...string) string {
	h := sha256.Sum256([]byte(strings.Join(words, "/")))
	return hex.EncodeToString(h[:])
}

const apps = 50

// podSet is the template shared by the pods of one set: one ReplicaSet,
// StatefulSet or Job, or the bare pods of one app.
type podSet struct {
	app     int    // 0..apps-1
	rev     int    // which revision of the app's template
	kind    string // ReplicaSet, StatefulSet, Job, or "" for bare pods
	owner   string // the owner's name
	uid     string // the owner's uid
	hash    string // pod-template-hash or controller-revision-hash
	version string // the image tag
	manager string // the field manager that creates the pods
}

// setOf is set s of sets: set s holds the pods i with i % sets == s.
func setOf(s int) podSet {
	app := s % apps
	rev := s / apps
	h := mix(uint64(s))
	ps := podSet{app: app, rev: rev, hash: letters(h, 10), version: fmt.Sprintf("1.%d.%d", app%7, rev),
		manager: "kube-controller-manager",
		uid:     fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", h>>32, h>>16&0xffff, h>>4&0xfff, mix(h)&0xfff, mix(h+1)&0xffffffffffff)}
	name := fmt.Sprintf("app-%02d", app)
	switch app % 10 {
	case 7:
		ps.kind, ps.owner = "StatefulSet", fmt.Sprintf("%s-%d", name, rev)
	case 8:
		ps.kind, ps.owner = "Job", fmt.Sprintf("%s-%d", name, 29000000+60*rev) // a CronJob's, one an hour
	case 9:
		ps.kind, ps.owner, ps.manager = "", name, "kubectl-run"
	default:
		ps.kind, ps.owner = "ReplicaSet", name+"-"+ps.hash
	}
	return ps
}

// suffix is the generated part of the name of pod k of a set: five
// letters, different for every k (7919 is prime to 27^5).
func suffix(ps podSet, k int) string {
	const space = 27 * 27 * 27 * 27 * 27
	return letters((uint64(k)*7919+mix(uint64(ps.app)<<32|uint64(ps.rev))%space)%space, 5)
}

// sets is how many sets n pods make: about 8 pods each.
func sets(n int) int { return max(1, (n+7)/8) }

// nodes is how many nodes the status workload spreads n pods over: at
// most 110 pods each (the kubelet's default limit).
func nodes(n int) int { return max(1, (n+109)/110) }

// pod is pod i of n. running: the status workload's pod, created on a
// node (its status is written later, by status).
func pod(i, n int, running bool) *corev1.Pod {
	ps := setOf(i % sets(n))
	k := i / sets(n) // the pod's index in its set
	app := fmt.Sprintf("app-%02d", ps.app)
	team := fmt.Sprintf("team-%d", ps.app%7)
	var name string
	labels := map[string]string{}
	if ps.app%2 == 0 {
		labels["app"] = app
	} else {
		labels["app.kubernetes.io/name"] = app
		labels["app.kubernetes.io/instance"] = app + "-prod"
		labels["app.kubernetes.io/version"] = ps.version
		labels["app.kubernetes.io/managed-by"] = "Helm"
	}
	if ps.app%3 != 1 {
		labels["tier"] = []string{"web", "api", "worker", "cache"}[ps.app%4]
	}
	if ps.app%7 != 0 {
		labels["team"] = team
	}
	if ps.app%5 == 2 {
		labels["release"] = []string{"stable", "canary"}[ps.rev%2]
	}
	annotations := map[string]string{"example.com/owner": team}
	var owners []metav1.OwnerReference
	controller := true
	switch ps.kind {
	case "ReplicaSet":
		name = ps.owner + "-" + suffix(ps, k)
		labels["pod-template-hash"] = ps.hash
		owners = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: ps.owner, UID: types.UID(ps.uid), Controller: &controller, BlockOwnerDeletion: &controller}}
	case "StatefulSet":
		name = fmt.Sprintf("%s-%d", ps.owner, k)
		labels["controller-revision-hash"] = ps.owner + "-" + ps.hash
		labels["statefulset.kubernetes.io/pod-name"] = name
		labels["apps.kubernetes.io/pod-index"] = strconv.Itoa(k)
		owners = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: ps.owner, UID: types.UID(ps.uid), Controller: &controller, BlockOwnerDeletion: &controller}}
	case "Job":
		name = ps.owner + "-" + suffix(ps, k)
		for _, p := range []string{"", "batch.kubernetes.io/"} {
			labels[p+"controller-uid"] = ps.uid
			labels[p+"job-name"] = ps.owner
		}
		owners = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: ps.owner, UID: types.UID(ps.uid), Controller: &controller, BlockOwnerDeletion: &controller}}
	default:
		name = fmt.Sprintf("%s-run-%d-%d", app, ps.rev, k)
		labels["run"] = name
	}
	scrape := ps.app%4 == 0
	if scrape {
		annotations["prometheus.io/scrape"] = "true"
		annotations["prometheus.io/port"] = "9090"
		annotations["prometheus.io/path"] = "/metrics"
	}
	if ps.app%5 == 1 {
		annotations["kubectl.kubernetes.io/restartedAt"] = time.Date(2026, 11, 1+ps.rev%28, ps.app%24, ps.rev*7%60, 0, 0, time.UTC).Format(time.RFC3339)
	}
	if ps.app%3 != 0 {
		annotations["example.com/description"] = strings.Repeat("a realistic annotation text ", 16+ps.app%30)
	}
	if ps.app%6 == 3 {
		annotations["sidecar.istio.io/inject"] = "false"
	}

	env := []corev1.EnvVar{}
	for e := 0; e < 4+ps.app%9; e++ {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", e), Value: fmt.Sprintf("value-%d-%d", i, e)})
	}
	env = append(env, corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 50+50*(ps.app%4))), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 256<<(ps.app%3)))},
	}
	ctr := corev1.Container{
		Name: []string{"app", "server", "worker", "web", "api"}[ps.app%5], Image: fmt.Sprintf("registry.example.com/%s/%s:%s", team, app, ps.version),
		Args:  []string{"--port=8080", "--log-level=info", "--config=/etc/app/config.yaml"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   env, Resources: res,
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "cache", MountPath: "/var/cache/app"}},
	}
	if scrape {
		ctr.Ports = append(ctr.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090})
	}
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	restart := corev1.RestartPolicyAlways
	if ps.kind == "Job" {
		restart = corev1.RestartPolicyNever
	} else {
		probe := &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			InitialDelaySeconds: 5, PeriodSeconds: 10,
		}
		ctr.LivenessProbe, ctr.ReadinessProbe = probe, probe
	}
	if ps.kind == "StatefulSet" {
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/var/lib/app"})
		volumes = append(volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}})
	}
	containers := []corev1.Container{ctr}
	if ps.app%3 != 0 && ps.kind != "Job" {
		containers = append(containers, corev1.Container{
			Name: "sidecar", Image: "registry.example.com/infra/proxy:4.5.6",
			Args:      []string{"proxy", "--upstream=127.0.0.1:8080"},
			Ports:     []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001}},
			Resources: res,
		})
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations, OwnerReferences: owners},
		Spec: corev1.PodSpec{
			Containers: containers, Volumes: volumes, RestartPolicy: restart,
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if ps.app%4 != 3 {
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	}
	if ps.kind == "StatefulSet" {
		p.Spec.Hostname, p.Spec.Subdomain = name, ps.owner
	}
	if running {
		p.Spec.NodeName = fmt.Sprintf("node-%03d", i%nodes(n))
	}
	return p
}

// status is the status the kubelet would write for pod i of n, created as
// p: running on its node since about a second after it was created.
func status(p *corev1.Pod, i, n int) corev1.PodStatus {
	node := i % nodes(n)
	hostIP := fmt.Sprintf("10.0.%d.%d", node/200, node%200+10)
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+node/250, node%250, i/nodes(n)%250+2)
	created := p.CreationTimestamp.Time
	started := metav1.NewTime(created.Add(time.Second))
	cond := func(t corev1.PodConditionType, at time.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}
	}
	st := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers, started.Time), cond(corev1.PodInitialized, created),
			cond(corev1.PodReady, started.Time), cond(corev1.ContainersReady, started.Time), cond(corev1.PodScheduled, created),
		},
		HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
		StartTime: &metav1.Time{Time: created},
		QOSClass:  p.Status.QOSClass,
	}
	ready := true
	for c, ctr := range p.Spec.Containers {
		repo, _, _ := strings.Cut(ctr.Image, ":")
		cs := corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, ImageID: repo + "@sha256:" + hexOf(ctr.Image),
			ContainerID: "containerd://" + hexOf(p.Name, ctr.Name, strconv.Itoa(i)),
			Ready:       true, Started: &ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		}
		if mix(uint64(i)+uint64(c)<<32)%20 == 0 { // one container in 20 has restarted once
			cs.RestartCount = 1
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "OOMKilled", StartedAt: metav1.NewTime(created), FinishedAt: started,
				ContainerID: "containerd://" + hexOf(p.Name, ctr.Name, strconv.Itoa(i), "0"),
			}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("namespace", "bench", "namespace")
	workers := flag.Int("workers", 32, "concurrent requests")
	workload := flag.String("workload", "pending", "create: pending (pods as created) or status (a second field manager writes each pod's status)")
	flag.Parse()
	if flag.NArg() < 1 || (*workload != "pending" && *workload != "status") {
		fmt.Fprintln(os.Stderr, "usage: podload [flags] [-workload pending|status] create N | update M | delete")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "podload:", err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	n := 0
	if flag.NArg() > 1 {
		n, _ = strconv.Atoi(flag.Arg(1))
	}
	start := time.Now()
	var failed atomic.Int64
	run := func(count int, fn func(i int) error) {
		var wg sync.WaitGroup
		var next atomic.Int64
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= count {
						return
					}
					if err := fn(i); err != nil {
						if failed.Add(1) < 5 {
							fmt.Fprintln(os.Stderr, "podload:", err)
						}
					}
				}
			}()
		}
		wg.Wait()
	}
	switch flag.Arg(0) {
	case "create":
		_, _ = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
		running := *workload == "status"
		// The status workload: the kubelet's status is written by other
		// workers, each pod a second after it was created (so that the two
		// managedFields entries carry different times), while the creation
		// goes on. The queue holds a few seconds of creations.
		type created struct {
			p  *corev1.Pod
			i  int
			at time.Time
		}
		queue := make(chan created, 8192)
		var writers sync.WaitGroup
		if running {
			for w := 0; w < *workers; w++ {
				writers.Add(1)
				go func() {
					defer writers.Done()
					for c := range queue {
						time.Sleep(time.Until(c.at.Add(time.Second)))
						c.p.Status = status(c.p, c.i, n)
						if _, err := cs.CoreV1().Pods(*ns).UpdateStatus(ctx, c.p, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
							if failed.Add(1) < 5 {
								fmt.Fprintln(os.Stderr, "podload:", err)
							}
						}
					}
				}()
			}
		}
		run(n, func(i int) error {
			manager := setOf(i % sets(n)).manager
			p, err := cs.CoreV1().Pods(*ns).Create(ctx, pod(i, n, running), metav1.CreateOptions{FieldManager: manager})
			if err == nil && running {
				queue <- created{p, i, time.Now()}
			}
			return err
		})
		close(queue)
		writers.Wait()
	case "update":
		list, err := cs.CoreV1().Pods(*ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil || len(list.Items) == 0 {
			fmt.Fprintln(os.Stderr, "podload: no pods to update:", err)
			os.Exit(1)
		}
		names := make([]string, len(list.Items))
		for i, p := range list.Items {
			names[i] = p.Name
		}
		stamp := time.Now().UnixNano()
		run(n, func(i int) error {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench/update":"%d-%d"}}}`, stamp, i)
			_, err := cs.CoreV1().Pods(*ns).Patch(ctx, names[i%len(names)], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		})
	case "delete":
		err = cs.CoreV1().Pods(*ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "podload:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "podload: unknown command", flag.Arg(0))
		os.Exit(2)
	}
	if f := failed.Load(); f > 0 {
		fmt.Fprintf(os.Stderr, "podload: %d requests failed\n", f)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "podload: %s %d in %.1fs\n", flag.Arg(0), n, time.Since(start).Seconds())
}
