module kube.test/bench

go 1.24.0

require k8s.io/client-go v0.34.4

require (
	github.com/go-logr/logr v1.4.2 // indirect
	golang.org/x/time v0.9.0 // indirect
	k8s.io/apimachinery v0.34.4 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
	k8s.io/utils v0.0.0-20250604170112-4c0f3b243397 // indirect
)
