// The client-go side of the informer benchmark (test/bench/informer/run.sh):
// a SharedIndexInformer over the pods of one namespace, as a controller
// would run it (namespace index, no resync). It reports when the cache has
// synced, then counts update events until it has seen -updates of them.
//
// The clientset is client-go's default: for built-in types such as Pod it
// asks for protobuf (and Go's transport for gzip). With -json it asks for
// JSON, the format kube reads, and reports impl=client-go-json.
//
// Output lines (key=value):
//
//	SYNCED ...                          the harness starts the updates now
//	RESULT impl=client-go|client-go-json objects=N sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=.. rss_before_kb=.. rss_synced_kb=..
package main

import (
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"kube.test/bench/internal/procstat"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("namespace", "bench", "namespace")
	updates := flag.Int64("updates", 10000, "update events to wait for after sync")
	strip := flag.Bool("strip-managed-fields", false, "transform: drop metadata.managedFields before caching")
	jsonOnly := flag.Bool("json", false, "ask for JSON, as kube does (client-go's clientset asks for protobuf by default)")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "informer:", err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	impl := "client-go"
	if *jsonOnly {
		// A content type set in the config overrides the generated clients'
		// protobuf preference (rest.Request.UseProtobufAsDefault).
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
		impl = "client-go-json"
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	rssBefore := procstat.RSSKB()
	start := time.Now()

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns))
	inf := factory.Core().V1().Pods().Informer()
	if *strip {
		_ = inf.SetTransform(func(obj interface{}) (interface{}, error) {
			if p, ok := obj.(*corev1.Pod); ok {
				p.ManagedFields = nil
			}
			return obj, nil
		})
	}
	var seen atomic.Int64
	done := make(chan struct{})
	var synced atomic.Bool
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj interface{}) {
			if !synced.Load() {
				return
			}
			o, n := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
			if o.ResourceVersion != n.ResourceVersion && seen.Add(1) == *updates {
				close(done)
			}
		},
	})
	stop := make(chan struct{})
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	synced.Store(true)
	syncS := time.Since(start).Seconds()
	cpuSynced := procstat.CPUSeconds()
	objects := len(inf.GetStore().ListKeys())
	rssSynced := procstat.RSSKB()
	fmt.Printf("SYNCED objects=%d\n", objects)
	upStart := time.Now()
	<-done
	updS := time.Since(upStart).Seconds()
	u := procstat.Now()
	fmt.Printf("RESULT impl=%s objects=%d sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f maxrss_kb=%d rss_before_kb=%d rss_synced_kb=%d\n",
		impl, objects, syncS, updS, u.CPU, cpuSynced, u.System, u.MaxRSSKB, rssBefore, rssSynced)
	close(stop)
}
