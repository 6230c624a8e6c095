// The client-go side of the decode benchmark (test/bench/decode/run.sh):
// decodes a PodList recorded from the API server, as client-go's REST
// client decodes a list response (the clientset's scheme codecs, which
// take JSON or protobuf), the given number of passes, and reports the
// median time and CPU per pass.
//
//	decode [-passes N] LIST                 decode LIST (JSON or protobuf)
//	decode -record -kubeconfig K -namespace NS LIST
//	                                        write the namespace's pods to LIST
//	                                        as protobuf, as the clientset asks
//
// Output line (key=value):
//
//	RESULT impl=client-go format=json|protobuf items=N bytes=B ms=.. cpu_ms=.. maxrss_kb=.. heap_per_item=..
//
// heap_per_item is the live heap (after a collection) the last pass's list
// holds, over its items, as kube-bench-decode reports it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"kube.test/bench/internal/procstat"
)

// record writes the pods of one namespace to path in protobuf, the bytes
// the clientset's list call receives.
func record(kubeconfig, ns, path string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	raw, err := cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").
		SetHeader("Accept", "application/vnd.kubernetes.protobuf").Do(context.Background()).Raw()
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(raw, []byte("k8s\x00")) {
		return fmt.Errorf("the server did not answer in protobuf")
	}
	return os.WriteFile(path, raw, 0o644)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func main() {
	passes := flag.Int("passes", 7, "decode passes")
	rec := flag.Bool("record", false, "record the namespace's pods as protobuf into LIST")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (-record)")
	ns := flag.String("namespace", "", "namespace (-record)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: decode [-passes N] LIST | decode -record -kubeconfig K -namespace NS LIST")
		os.Exit(2)
	}
	if *rec {
		if err := record(*kubeconfig, *ns, flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			os.Exit(1)
		}
		return
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dec := scheme.Codecs.UniversalDeserializer()
	var ms, cpu []float64
	var keep runtime.Object // the last list stays alive while the next one is decoded, as on our side
	items := 0
	heapBefore := liveHeap()
	for i := 0; i < *passes; i++ {
		c0 := procstat.CPUSeconds()
		t0 := time.Now()
		obj, err := runtime.Decode(dec, data)
		if err != nil {
			fmt.Fprintln(os.Stderr, "decode:", err)
			os.Exit(1)
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		cpu = append(cpu, (procstat.CPUSeconds()-c0)*1000)
		list, ok := obj.(*corev1.PodList)
		if !ok {
			fmt.Fprintf(os.Stderr, "decoded a %T, not a PodList\n", obj)
			os.Exit(1)
		}
		items = len(list.Items)
		keep = obj
	}
	heap := liveHeap() - heapBefore
	goruntime.KeepAlive(keep)
	format := "json"
	if bytes.HasPrefix(data, []byte("k8s\x00")) {
		format = "protobuf"
	}
	fmt.Printf("RESULT impl=client-go format=%s items=%d bytes=%d ms=%.1f cpu_ms=%.1f maxrss_kb=%d heap_per_item=%d\n", format, items, len(data), median(ms), median(cpu), procstat.Now().MaxRSSKB, heap/uint64(max(items, 1)))
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}
