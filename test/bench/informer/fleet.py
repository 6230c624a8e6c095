#!/usr/bin/env python3
"""A fleet of informers through apiserver outages: catch-up and relist spread.

    test/bench/informer/fleet.py [-B BUILD_DIR] [-n 50] [-o "5 30 90"] [-c]

Starts N processes of the asio-embedding sample (each a kube client with an
informer factory over the ConfigMaps of one namespace, default backoff and
watch settings, a route that answers from its cache) against a test cluster
of its own (kcluster up --apiserver-only). For each outage length T, in a
row: the watches run for 5 s, the apiserver is SIGKILLed, started again
after T seconds (kcluster start-apiserver returns once /readyz answers),
and a ConfigMap is created with kubectl. With -c, before each outage a
ConfigMap is written in another namespace (etcd's revision moves past what
the informers hold, as in a busy cluster) and etcd is compacted during the
outage: every watch then gets 410 and relists. Then it polls every process's
cache every 200 ms until each shows the ConfigMap.

Printed per outage:
- catch-up: from /readyz to the ConfigMap in each process's cache, the
  median, 90th percentile and maximum over the fleet;
- relists: each process's watch error hook logs the wait before its next
  attempt and whether it relists; a relist starts at the moment the line was
  read plus that wait. The relists that the restarted apiserver's 410 caused
  are counted per second after /readyz: the busiest second, and the spread
  (first to last relist).

FLEET_DEBUG=1 echoes every process's output, stamped with its index and time.
"""
import argparse
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("-B", dest="build", default=os.path.join(root, "build", "asan"))
ap.add_argument("-n", dest="fleet", type=int, default=50)
ap.add_argument("-o", dest="outages", default="5 30 90")
ap.add_argument("-c", dest="compact", action="store_true",
                help="a busy cluster: before each outage a write elsewhere moves etcd's revision past what the "
                     "informers hold, and etcd is compacted during the outage, so every watch gets 410 and relists")
args = ap.parse_args()

bin_dir = os.path.join(args.build, "test-cluster", "bin")
sample = os.path.join(args.build, "samples", "asio-embedding", "asio-embedding")
for f in (os.path.join(bin_dir, "kcluster"), os.path.join(bin_dir, "kubectl"), sample):
    if not os.access(f, os.X_OK):
        sys.exit(f"fleet.py: {f} is missing: build kube_test_cluster and asio-embedding in {args.build} first")

state = tempfile.mkdtemp(prefix="kube-fleet-")
kcluster = [os.path.join(bin_dir, "kcluster")]
kubeconfig = os.path.join(state, "kubeconfig", "admin-cert.yaml")


def kctl(*a):
    subprocess.run([os.path.join(bin_dir, "kubectl"), "--kubeconfig", kubeconfig, *a], check=True,
                   stdout=subprocess.DEVNULL)


relists = []  # (time the relist starts, process index)
lock = threading.Lock()
line_re = re.compile(r"watch error: .*; retrying in (\d+) ms( with a relist)?")


def reader(i, proc, ports):
    for raw in proc.stdout:
        now = time.time()
        line = raw.decode(errors="replace")
        if os.environ.get("FLEET_DEBUG"):
            print(f"[{i} {now:.1f}] {line}", end="", file=sys.stderr)
        if i not in ports:
            m = re.match(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                ports[i] = int(m.group(1))
        m = line_re.search(line)
        if m and m.group(2):
            with lock:
                relists.append((now + int(m.group(1)) / 1000.0, i))


def has(port, name):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/configmaps?namespace=fleet")
        body = c.getresponse().read().decode()
        c.close()
        return f'"{name}"' in body
    except OSError:
        return False


procs = []
try:
    subprocess.run([*kcluster, "up", "--dir", state, "--bin-dir", bin_dir, "--watch-pid", str(os.getpid()),
                    "--apiserver-only"], check=True, stdout=subprocess.DEVNULL)
    kctl("create", "namespace", "fleet")
    ports = {}
    for i in range(args.fleet):
        p = subprocess.Popen([sample, "--kubeconfig", kubeconfig, "--namespace", "fleet"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        procs.append(p)
        threading.Thread(target=reader, args=(i, p, ports), daemon=True).start()
    deadline = time.time() + 120
    while len(ports) < args.fleet and time.time() < deadline:
        time.sleep(0.2)
    if len(ports) < args.fleet:
        sys.exit(f"fleet.py: only {len(ports)} of {args.fleet} processes started")

    print(f"fleet of {args.fleet} processes{', etcd compacted in each outage' if args.compact else ''}; "
          "seconds from /readyz")
    print(f"{'outage (s)':<11} {'catch-up median':<16} {'p90':<6} {'max':<6} {'relists':<8} "
          f"{'busiest second':<15} {'first..last relist'}")
    for t in args.outages.split():
        time.sleep(5)
        if args.compact:
            kctl("-n", "default", "create", "configmap", f"elsewhere-{t}", "--from-literal=v=1")
        subprocess.run([*kcluster, "kill-apiserver", "--dir", state], check=True, stdout=subprocess.DEVNULL)
        if args.compact:
            subprocess.run([*kcluster, "compact", "--dir", state], check=True, stdout=subprocess.DEVNULL)
        time.sleep(int(t))
        subprocess.run([*kcluster, "start-apiserver", "--dir", state], check=True, stdout=subprocess.DEVNULL)
        ready = time.time()
        name = f"after-{t}"
        kctl("-n", "fleet", "create", "configmap", name, "--from-literal=v=1")
        seen = {}
        while len(seen) < args.fleet and time.time() < ready + 300:
            for i, port in ports.items():
                if i not in seen and has(port, name):
                    seen[i] = time.time() - ready
            time.sleep(0.2)
        with lock:
            mine = sorted(s - ready for s, _ in relists if s >= ready - 1)
            relists.clear()
        if len(seen) < args.fleet:
            print(f"{t:<11} only {len(seen)} of {args.fleet} caught up within 300 s")
            continue
        times = sorted(seen.values())
        per_second = {}
        for s in mine:
            per_second[int(s // 1)] = per_second.get(int(s // 1), 0) + 1
        busiest = max(per_second.values()) if per_second else 0
        spread = f"{mine[0]:.1f}..{mine[-1]:.1f}" if mine else "-"
        print(f"{t:<11} {statistics.median(times):<16.1f} {times[int(0.9 * (len(times) - 1))]:<6.1f} "
              f"{times[-1]:<6.1f} {len(mine):<8} {busiest:<15} {spread}")
        sys.stdout.flush()
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    subprocess.run([*kcluster, "down", "--dir", state], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["rm", "-rf", state])
