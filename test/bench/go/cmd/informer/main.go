// The client-go side of the informer benchmark (test/bench/informer/run.sh):
// a SharedIndexInformer over the pods of one namespace, as a controller
// would run it (namespace index, no resync). It reports SYNCED once its
// event handler has been given every object of the first list (see
// "The synced moment" in main), then counts update events until it has seen
// -updates of them.
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
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"kube.test/bench/internal/procstat"
)

// listCounting is the clientset with one difference: the pods' List
// records in listed how many objects the list returned (its pages added
// up). The informer's reflector lists through it; nothing else changes.
type listCounting struct {
	kubernetes.Interface
	listed *atomic.Int64
}

func (c listCounting) CoreV1() typedcorev1.CoreV1Interface {
	return coreListCounting{c.Interface.CoreV1(), c.listed}
}

type coreListCounting struct {
	typedcorev1.CoreV1Interface
	listed *atomic.Int64
}

func (c coreListCounting) Pods(namespace string) typedcorev1.PodInterface {
	return podsListCounting{c.CoreV1Interface.Pods(namespace), c.listed}
}

type podsListCounting struct {
	typedcorev1.PodInterface
	listed *atomic.Int64
}

func (p podsListCounting) List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	l, err := p.PodInterface.List(ctx, opts)
	if err == nil {
		if opts.Continue == "" {
			p.listed.Store(int64(len(l.Items)))
		} else {
			p.listed.Add(int64(len(l.Items)))
		}
	}
	return l, err
}

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
	var listed atomic.Int64
	cs := listCounting{kubernetes.NewForConfigOrDie(cfg), &listed}
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

	// The synced moment is the one kube's side waits for
	// (informer_bench.cpp: its handler registration's async_wait_for_sync):
	// the first list is in the cache and every object of it has been
	// delivered to the event handler, which is what client-go's
	// registration HasSynced means. It is taken exactly, not polled:
	// cache.WaitForCacheSync (the factory's too) polls every 100 ms and so
	// rounded this side's time to synced up by up to 100 ms. Checking the
	// registration's HasSynced in the handler cannot see it turn true
	// either: client-go marks an initial add as finished only after OnAdd
	// has returned, so it is still false during the last one. And
	// informer.HasSynced takes the FIFO's lock, which the informer's
	// processing goroutine holds for every object it pops, so calling it
	// on each event would make the handler contend with the processing.
	// Instead the clientset counts the objects the informer's list
	// returned (listCounting, one atomic store per list page), and the
	// handler counts the adds of the first list (isInInitialList, one
	// increment each): the add that reaches the count is the last object
	// of the first list, delivered, and the clock is read right there. An
	// empty first list has no adds; then the registration's HasSynced,
	// polled as before, gives the moment (never the case in run.sh).
	var seen atomic.Int64
	done := make(chan struct{})
	var synced atomic.Bool
	syncedAt := make(chan time.Time, 1)
	var syncOnce sync.Once
	markSynced := func() {
		syncOnce.Do(func() {
			t := time.Now()
			synced.Store(true)
			syncedAt <- t
		})
	}
	var initialAdds int64 // the handler's goroutine only
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ interface{}, isInInitialList bool) {
			if isInInitialList {
				if initialAdds++; initialAdds == listed.Load() {
					markSynced()
				}
			}
		},
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
	go func() {
		if cache.WaitForCacheSync(stop, reg.HasSynced) && listed.Load() == 0 {
			markSynced()
		}
	}()
	syncS := (<-syncedAt).Sub(start).Seconds()
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
