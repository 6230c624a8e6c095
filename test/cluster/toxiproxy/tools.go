//go:build tools

// Package tools pins Toxiproxy's server command, so that `go mod tidy` keeps
// its dependencies. This is a module of its own: Toxiproxy's dependencies
// (Prometheus client, zerolog, ...) must not move the versions that
// k8s.io/kubernetes needs in ../go.mod.
package tools

import (
	_ "github.com/Shopify/toxiproxy/v2/cmd/server"
)
