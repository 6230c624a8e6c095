// The client-go side of the catch-up measurement
// (test/bench/informer/catchup.sh): a SharedInformerFactory over the
// ConfigMaps of one namespace with client-go's default settings (backoff,
// watch timeouts; the clientset's protobuf), and an HTTP route that answers
// from its cache, as the asio-embedding sample does for kube.
//
//	GET /configmaps   the cached ConfigMaps' names, one per line
//
// It prints "listening on http://127.0.0.1:PORT" once serving, and
// "watch error: ..." for every call of the watch error handler (client-go
// calls it for each failed list or watch; it does not say whether a relist
// follows).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("namespace", "catchup", "namespace")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "catchup:", err)
		os.Exit(1)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns))
	cms := factory.Core().V1().ConfigMaps()
	inf := cms.Informer()
	if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		fmt.Printf("watch error: %v\n", err)
	}); err != nil {
		fmt.Fprintln(os.Stderr, "catchup:", err)
		os.Exit(1)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	lister := cms.Lister()
	http.HandleFunc("/configmaps", func(w http.ResponseWriter, _ *http.Request) {
		list, err := lister.ConfigMaps(*ns).List(labels.Everything())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		names := make([]string, 0, len(list))
		for _, cm := range list {
			names = append(names, cm.Name)
		}
		sort.Strings(names)
		fmt.Fprintln(w, strings.Join(names, "\n"))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "catchup:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, "catchup:", err)
		os.Exit(1)
	}
}
