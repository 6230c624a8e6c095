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
	"runtime"
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

// producerBatch is the producer's pattern, the same on both sides: 0 means
// the producer adds without ever yielding; B > 0 means it yields after every
// B adds (here runtime.Gosched(); in the C++ peer `co_await post`). Set by
// KUBE_BENCH_PRODUCER_BATCH; `def` is the workload's default (0 for all).
func producerBatch(def int) int {
	if v, ok := os.LookupEnv("KUBE_BENCH_PRODUCER_BATCH"); ok {
		b, err := strconv.Atoi(v)
		if err != nil || b < 0 {
			fmt.Fprintln(os.Stderr, "bad KUBE_BENCH_PRODUCER_BATCH:", v)
			os.Exit(2)
		}
		return b
	}
	return def
}

// produce calls add(i) for i in [0, n), yielding every `batch` calls.
func produce(n, batch int, add func(i int)) {
	for i := 0; i < n; i++ {
		add(i)
		if batch != 0 && i%batch == batch-1 {
			runtime.Gosched()
		}
	}
}

// distinct: a producer goroutine adds n distinct keys; `workers` goroutines
// Get/Done until all n are processed.
// xthread: the peer of our distinct_1w_xthread, whose producer is an OS
// thread that never yields; so this producer never yields either.
func distinct(n, workers int, xthread bool) time.Duration {
	keys := makeKeys(n)
	batch := producerBatch(0)
	if xthread {
		batch = 0
	}
	q := workqueue.NewTyped[string]()
	var wg sync.WaitGroup
	var mu sync.Mutex
	processed := 0
	var end time.Time
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(key)
				mu.Lock()
				processed++
				if processed == n {
					end = time.Now()
					q.ShutDown()
				}
				mu.Unlock()
			}
		}()
	}
	go produce(n, batch, func(i int) { q.Add(keys[i]) })
	wg.Wait()
	return end.Sub(start)
}

// dedupHot: n adds drawn from 1000 hot keys while 2 workers process.
func dedupHot(n int) time.Duration {
	hot := makeKeys(1000)
	rng := rand.New(rand.NewSource(42))
	pick := make([]int, n)
	for i := range pick {
		pick[i] = rng.Intn(len(hot))
	}
	batch := producerBatch(0)
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
	produce(n, batch, func(i int) { q.Add(hot[pick[i]]) })
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
	batch := producerBatch(0)
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
	produce(n, batch, func(i int) { q.AddAfter(keys[i], delays[i]) })
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
		fmt.Fprintln(os.Stderr, "usage: workqueue distinct_1w|distinct_2w|distinct_1w_xthread|dedup_hot|add_after_random|rate_limited [n]")
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
		d = distinct(n, 1, false)
	case "distinct_1w_xthread": // a goroutine producer is always "another thread"
		d = distinct(n, 1, true)
	case "distinct_2w":
		d = distinct(n, 2, false)
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
