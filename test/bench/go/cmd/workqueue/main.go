// Command workqueue runs client-go's util/workqueue through the same workloads
// as test/bench/workqueue/workqueue_bench.cpp and prints one line:
//
//	RESULT impl=client-go workload=<w> n=<n> ns_per_op=<x> cpu_s=<y> maxrss_kb=<z>
//
// Usage: workqueue <workload> [n]
package main

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"kube.test/bench/internal/procstat"
)

func makeKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/object-%07d", i)
	}
	return keys
}

// distinct: a producer goroutine adds n distinct keys, then shuts the queue
// down; `workers` goroutines Get/Done until it is empty. Each worker counts
// in a local variable (no lock or atomic per item, as in the C++ peer).
func distinct(n, workers int) time.Duration {
	keys := makeKeys(n)
	q := workqueue.NewTyped[string]()
	var wg sync.WaitGroup
	processed := make([]int, workers)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			count := 0
			for {
				key, shutdown := q.Get()
				if shutdown {
					break
				}
				q.Done(key)
				count++
			}
			processed[w] = count
		}(w)
	}
	go func() {
		for _, k := range keys {
			q.Add(k)
		}
		q.ShutDown()
	}()
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for _, c := range processed {
		total += c
	}
	if total != n {
		fmt.Fprintf(os.Stderr, "distinct: processed %d, want %d\n", total, n)
		os.Exit(1)
	}
	return elapsed
}

// dedupHot: n adds drawn from 1000 hot keys by the main goroutine while 2
// workers process, then ShutDownWithDrain.
func dedupHot(n int) time.Duration {
	hot := makeKeys(1000)
	rng := rand.New(rand.NewSource(42))
	pick := make([]int, n)
	for i := range pick {
		pick[i] = rng.Intn(len(hot))
	}
	q := workqueue.NewTyped[string]()
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(key)
			}
		}()
	}
	for _, p := range pick {
		q.Add(hot[p])
	}
	q.ShutDownWithDrain()
	wg.Wait()
	return time.Since(start)
}

// addAfterRandom: n AddAfter of distinct keys with delays in [0, 10ms); one
// worker takes them all.
func addAfterRandom(n int) time.Duration {
	keys := makeKeys(n)
	rng := rand.New(rand.NewSource(42))
	delays := make([]time.Duration, n)
	for i := range delays {
		delays[i] = time.Duration(rng.Int63n(int64(10 * time.Millisecond)))
	}
	q := workqueue.NewTypedDelayingQueue[string]()
	done := make(chan time.Time)
	start := time.Now()
	go func() {
		processed := 0
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Done(key)
			processed++
			if processed == n {
				done <- time.Now()
				return
			}
		}
	}()
	for i, k := range keys {
		q.AddAfter(k, delays[i])
	}
	end := <-done
	q.ShutDown()
	return end.Sub(start)
}

// rateLimited: n AddRateLimited calls over 10k keys with the default
// controller limiter; measures the calls.
func rateLimited(n int) time.Duration {
	keys := makeKeys(10000)
	q := workqueue.NewTypedRateLimitingQueue[string](workqueue.DefaultTypedControllerRateLimiter[string]())
	start := time.Now()
	for i := 0; i < n; i++ {
		q.AddRateLimited(keys[i%len(keys)])
	}
	elapsed := time.Since(start)
	if got, want := q.NumRequeues(keys[0]), (n+len(keys)-1)/len(keys); got != want {
		fmt.Fprintf(os.Stderr, "rate_limited: requeues %d, want %d\n", got, want)
		os.Exit(1)
	}
	q.ShutDown()
	return elapsed
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: workqueue distinct_1w|distinct_2w|dedup_hot|add_after_random|rate_limited [n]")
		os.Exit(2)
	}
	workload := os.Args[1]
	n := 1000000
	if len(os.Args) > 2 {
		v, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad n:", err)
			os.Exit(2)
		}
		n = v
	}
	var d time.Duration
	switch workload {
	case "distinct_1w":
		d = distinct(n, 1)
	case "distinct_2w":
		d = distinct(n, 2)
	case "dedup_hot":
		d = dedupHot(n)
	case "add_after_random":
		d = addAfterRandom(n)
	case "rate_limited":
		d = rateLimited(n)
	default:
		fmt.Fprintln(os.Stderr, "unknown workload", workload)
		os.Exit(2)
	}
	u := procstat.Now()
	fmt.Printf("RESULT impl=client-go workload=%s n=%d ns_per_op=%.1f cpu_s=%.3f maxrss_kb=%d\n",
		workload, n, float64(d.Nanoseconds())/float64(n), u.CPU, u.MaxRSSKB)
}
