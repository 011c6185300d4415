// Command widget-controller is a controller-runtime manager against an apiserver, for
// test/kubernetes/apiserver/controller-runtime.test.ts: leader election on a coordination.k8s.io/v1
// Lease, one controller over the Widget CRD (example.com/v1, reconciler.go) that owns ConfigMaps,
// and the manager's events.k8s.io/v1 event recorder. Metrics and health servers are off.
//
// stdout has the lines the test reads:
//
//	leading                                               this process holds the Lease
//	reconciled <namespace>/<name> generation <g> size <s> one finished reconcile
//
// stderr has controller-runtime's and client-go's logs (JSON, one object a line).
//
// Usage: widget-controller -server http://127.0.0.1:PORT -namespace NS [-lease 4s -renew 3s -retry 500ms] [-v N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	server := flag.String("server", "", "apiserver URL")
	namespace := flag.String("namespace", "", "the namespace of the Widgets and of the Lease")
	lease := flag.Duration("lease", 4*time.Second, "LeaseDuration")
	renew := flag.Duration("renew", 3*time.Second, "RenewDeadline")
	retry := flag.Duration("retry", 500*time.Millisecond, "RetryPeriod")
	verbosity := flag.Int("v", 0, "log verbosity (logr V levels, as klog's -v)")
	flag.Parse()
	if *server == "" || *namespace == "" {
		fmt.Fprintln(os.Stderr, "widget-controller: -server and -namespace are required")
		os.Exit(2)
	}
	logger := zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.Level(-*verbosity)))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	if err := addWidgetTypes(scheme); err != nil {
		fail(err)
	}

	config := &rest.Config{Host: *server, QPS: 100, Burst: 200}
	mgr, err := ctrl.NewManager(config, manager.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
		LeaderElection:                true,
		LeaderElectionID:              "widget-controller",
		LeaderElectionNamespace:       *namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 lease,
		RenewDeadline:                 renew,
		RetryPeriod:                   retry,
	})
	if err != nil {
		fail(err)
	}
	// a Runnable that needs leader election: it starts once the Lease is this manager's (whose
	// identity is controller-runtime's, the hostname and a UUID)
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		fmt.Println("leading")
		<-ctx.Done()
		return nil
	})); err != nil {
		fail(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Widget{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&widgetReconciler{client: mgr.GetClient(), recorder: mgr.GetEventRecorder("widget-controller")})
	if err != nil {
		fail(err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if err := mgr.Start(ctx); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "widget-controller:", err)
	os.Exit(1)
}
