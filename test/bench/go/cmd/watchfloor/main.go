// The client-go side of the floor under the informer benchmark
// (test/bench/informer/run.sh -F): client-go's own transport
// (rest.HTTPClientFor: HTTP/2 over Go's TLS, as its informers use it)
// reading the same pods list (its sync: bytes read and inflated, nothing
// decoded) and then the same pods watch, with nothing done to the events
// but finding them. It asks for protobuf, as client-go's clientset does for Pods by
// default, and counts MODIFIED frames (4-byte length, then a WatchEvent
// whose field 1 is the type) until it has seen -updates of them. With -json
// it asks for JSON and finds `{"type":"MODIFIED"` instead.
//
// Output lines as the informer program's; impl=client-go-floor or
// client-go-floor-json.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kube.test/bench/internal/procstat"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, "watchfloor:", err)
	os.Exit(1)
}

func get(c *http.Client, url, accept string) *http.Response {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		fail(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		fail(fmt.Errorf("GET %s: %s", url, resp.Status))
	}
	return resp
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("namespace", "bench", "namespace")
	updates := flag.Int64("updates", 10000, "MODIFIED events to wait for")
	asJSON := flag.Bool("json", false, "ask for JSON instead of protobuf")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		fail(err)
	}
	base := cfg.Host + "/api/v1/namespaces/" + *ns + "/pods"
	begin := time.Now()

	// The resourceVersion to start the watch from (no pod changes before
	// the harness has seen SYNCED).
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	resp := get(c, base+"?limit=1", "application/json")
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		fail(err)
	}
	resp.Body.Close()

	// The sync, as client-go v0.34's informer makes it: the whole list,
	// gzip-compressed (the transport asks for gzip and inflates), read and
	// dropped.
	impl, accept, listAccept := "client-go-floor", "application/vnd.kubernetes.protobuf;stream=watch", "application/vnd.kubernetes.protobuf"
	if *asJSON {
		impl, accept, listAccept = "client-go-floor-json", "application/json", "application/json"
	}
	resp = get(c, base, listAccept)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		fail(err)
	}
	resp.Body.Close()
	syncS := time.Since(begin).Seconds()
	cpuOpen := procstat.CPUSeconds()

	resp = get(c, base+"?watch=true&allowWatchBookmarks=true&resourceVersion="+list.Metadata.ResourceVersion, accept)
	fmt.Println("SYNCED objects=0")
	start := time.Now()

	var seen int64
	buf := make([]byte, 64*1024)
	if *asJSON {
		pattern := []byte(`{"type":"MODIFIED"`)
		var carry []byte
		for seen < *updates {
			n, err := resp.Body.Read(buf)
			chunk := append(carry, buf[:n]...)
			seen += int64(bytes.Count(chunk, pattern))
			keep := len(pattern) - 1
			if len(chunk) < keep {
				keep = len(chunk)
			}
			carry = append(carry[:0], chunk[len(chunk)-keep:]...)
			if err != nil {
				fail(err)
			}
		}
	} else {
		var head [4]byte
		for seen < *updates {
			if _, err := io.ReadFull(resp.Body, head[:]); err != nil {
				fail(err)
			}
			size := int(binary.BigEndian.Uint32(head[:]))
			if size > len(buf) {
				buf = make([]byte, size)
			}
			frame := buf[:size]
			if _, err := io.ReadFull(resp.Body, frame); err != nil {
				fail(err)
			}
			if size > 10 && frame[0] == 0x0a && frame[1] == 8 && string(frame[2:10]) == "MODIFIED" {
				seen++
			}
		}
	}
	updS := time.Since(start).Seconds()
	u := procstat.Now()
	fmt.Printf("RESULT impl=%s objects=0 sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f maxrss_kb=%d rss_before_kb=0 rss_synced_kb=0\n",
		impl, syncS, updS, u.CPU, cpuOpen, u.System, u.MaxRSSKB)
	resp.Body.Close()
}
