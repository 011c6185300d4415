// Command eventrecorder records Events with client-go's two recorders against an apiserver, for
// test/kubernetes/apiserver/event-recorders.test.ts:
//
//   - tools/record (core/v1 Events, what controllers have used for years): the same event three
//     times — the correlator creates it, then PATCHes (strategic merge) its count and lastTimestamp;
//   - tools/events (events.k8s.io/v1): the same event three times — created, then PATCHed with a
//     series (count 2; later occurrences only update the recorder's cache until its refresh).
//
// Both regard a ConfigMap the program creates. It waits until the apiserver shows the expected
// state (count 3; series.count 2), prints each Event as one JSON line, and exits 0 — or prints
// what it saw and exits 1 after -timeout.
//
// Usage: eventrecorder -server http://127.0.0.1:PORT -namespace NS [-timeout 30s]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

func main() {
	server := flag.String("server", "", "apiserver URL")
	namespace := flag.String("namespace", "default", "namespace of the ConfigMap and its Events")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for the Events")
	contentType := flag.String("content-type", "", "the client's ContentType (empty: client-go's default, protobuf for built-in kinds)")
	flag.Parse()
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "eventrecorder: "+format+"\n", args...)
		os.Exit(1)
	}
	config := &rest.Config{Host: *server, QPS: 100, Burst: 200}
	if *contentType != "" {
		config.ContentType = *contentType
		config.AcceptContentTypes = *contentType
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "recorded", Namespace: *namespace}}
	cm, err = client.CoreV1().ConfigMaps(*namespace).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		fail("create configmap: %v", err)
	}
	cm, err = client.CoreV1().ConfigMaps(*namespace).Get(ctx, "recorded", metav1.GetOptions{})
	if err != nil {
		fail("get configmap: %v", err)
	}

	// tools/record: core/v1
	legacy := record.NewBroadcaster(record.WithContext(ctx))
	legacy.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer legacy.Shutdown()
	legacyRecorder := legacy.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "eventrecorder"})
	// tools/events: events.k8s.io/v1
	modern := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	modern.StartRecordingToSink(ctx.Done())
	defer modern.Shutdown()
	modernRecorder := modern.NewRecorder(scheme.Scheme, "example.com/eventrecorder")

	for i := 0; i < 3; i++ {
		legacyRecorder.Eventf(cm, corev1.EventTypeNormal, "Legacy", "legacy recorder, occurrence of %s", "the same event")
		modernRecorder.Eventf(cm, nil, corev1.EventTypeWarning, "Modern", "Recording", "events recorder, %s", "the same event")
		time.Sleep(100 * time.Millisecond)
	}

	for {
		core, err := client.CoreV1().Events(*namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Legacy"})
		if err != nil {
			fail("list core/v1 events: %v", err)
		}
		modernList, err := client.EventsV1().Events(*namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Modern"})
		if err != nil {
			fail("list events.k8s.io/v1 events: %v", err)
		}
		legacyDone := len(core.Items) == 1 && core.Items[0].Count == 3
		modernDone := len(modernList.Items) == 1 && modernList.Items[0].Series != nil && modernList.Items[0].Series.Count == 2
		if legacyDone && modernDone {
			out := json.NewEncoder(os.Stdout)
			_ = out.Encode(core.Items[0])
			_ = out.Encode(modernList.Items[0])
			return
		}
		select {
		case <-ctx.Done():
			seen, _ := json.Marshal(map[string]any{"core": core.Items, "events.k8s.io": modernList.Items})
			fail("the Events did not reach the expected state: %s", seen)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
