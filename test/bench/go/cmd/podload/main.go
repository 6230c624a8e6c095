// podload creates and updates pods for the informer benchmark
// (test/bench/informer/run.sh):
//
//	podload -kubeconfig F -namespace NS create N    create N pods (~4 KB each as stored)
//	podload -kubeconfig F -namespace NS update M    M updates (annotation changes), round-robin over the pods
//	podload -kubeconfig F -namespace NS delete      delete every pod of the namespace
//
// The pods are never scheduled (the test cluster has no scheduler or nodes):
// they stay Pending, which is all an informer benchmark needs.
package main

import (
	"context"
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

func pod(i int) *corev1.Pod {
	env := []corev1.EnvVar{}
	for k := 0; k < 8; k++ {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", k), Value: fmt.Sprintf("value-%d-%d", i, k)})
	}
	env = append(env, corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
		InitialDelaySeconds: 5, PeriodSeconds: 10,
	}
	app := fmt.Sprintf("app-%d", i%50)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("bench-%06d", i),
			Labels: map[string]string{
				"app": app, "tier": []string{"web", "api", "worker"}[i%3], "release": "stable",
				"team": fmt.Sprintf("team-%d", i%7), "pod-template-hash": fmt.Sprintf("%08x", i*2654435761%4294967296),
			},
			Annotations: map[string]string{
				"example.com/owner":       "benchmark",
				"example.com/description": strings.Repeat("a realistic annotation text ", 30),
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name: "app", Image: "registry.example.com/team/app:1.2.3",
					Args:  []string{"--port=8080", "--log-level=info", "--config=/etc/app/config.yaml"},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
					Env:   env, Resources: res, LivenessProbe: probe, ReadinessProbe: probe,
					VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "cache", MountPath: "/var/cache/app"}},
				},
				{
					Name: "sidecar", Image: "registry.example.com/infra/proxy:4.5.6",
					Args:      []string{"proxy", "--upstream=127.0.0.1:8080"},
					Ports:     []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001}},
					Resources: res,
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoSchedule}},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
		},
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("namespace", "bench", "namespace")
	workers := flag.Int("workers", 32, "concurrent requests")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: podload [flags] create N | update M | delete")
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
		run(n, func(i int) error {
			_, err := cs.CoreV1().Pods(*ns).Create(ctx, pod(i), metav1.CreateOptions{})
			return err
		})
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
