//go:build tools

// Package tools pins KWOK's command, so that `go mod tidy` keeps its
// dependencies. KWOK v0.8.0 needs k8s.io/* v0.36 (k8s.io/cri-streaming
// exists only from v0.36), which would move ../go.mod's k8s.io/kubernetes
// v1.34.4 off its staging modules: hence a module of its own, as
// ../toxiproxy has.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
