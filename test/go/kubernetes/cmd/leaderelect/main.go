// Command leaderelect is client-go's own leader election (tools/leaderelection with a
// resourcelock.LeaseLock) against an apiserver, for test/kubernetes/apiserver/leader-election.test.ts:
// two of these race for one coordination.k8s.io/v1 Lease, one is killed, the other takes over.
//
// It prints one line per transition on stdout, which the test reads:
//
//	leader <identity>     OnNewLeader: the Lease names a (new) holder
//	leading <identity>    OnStartedLeading: this process holds the Lease
//	stopped <identity>    OnStoppedLeading
//
// Usage: leaderelect -server http://127.0.0.1:PORT -id a [-namespace default] [-name lock]
// [-lease 2s -renew 1500ms -retry 250ms] [-content-type application/json]  (default: protobuf)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func main() {
	server := flag.String("server", "", "apiserver URL")
	id := flag.String("id", "", "this candidate's identity")
	namespace := flag.String("namespace", "default", "the Lease's namespace")
	name := flag.String("name", "leaderelect", "the Lease's name")
	lease := flag.Duration("lease", 2*time.Second, "LeaseDuration")
	renew := flag.Duration("renew", 1500*time.Millisecond, "RenewDeadline")
	retry := flag.Duration("retry", 250*time.Millisecond, "RetryPeriod")
	contentType := flag.String("content-type", "", "the client's ContentType (empty: client-go's default, protobuf for built-in kinds)")
	flag.Parse()
	if *server == "" || *id == "" {
		fmt.Fprintln(os.Stderr, "leaderelect: -server and -id are required")
		os.Exit(2)
	}

	config := &rest.Config{Host: *server, QPS: 100, Burst: 200}
	if *contentType != "" {
		config.ContentType = *contentType
		config.AcceptContentTypes = *contentType
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "leaderelect:", err)
		os.Exit(1)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *namespace, Name: *name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *id},
	}
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   *lease,
		RenewDeadline:   *renew,
		RetryPeriod:     *retry,
		ReleaseOnCancel: true,
		Name:            *name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { say("leading %s", *id) },
			OnStoppedLeading: func() { say("stopped %s", *id) },
			OnNewLeader:      func(identity string) { say("leader %s", identity) },
		},
	})
}
