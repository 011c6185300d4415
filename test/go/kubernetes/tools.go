//go:build tools

// Package kubernetes pins the Kubernetes programs build.sh builds (kube-apiserver and
// kube-controller-manager, k8s.io/kubernetes v1.37.x) so that go.mod and go.sum hold them.
package kubernetes

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
