// kube-client: the load side of bench:kube-compare (benchmarks/kube-compare.ts), one process per
// role, so the client is not what limits the apiserver (several watch processes share the
// watchers). Every subcommand prints one JSON object on stdout when done; `watch` prints a line
// "ready" first, once every watch has its response headers.
//
//	kube-client create  -server URL [-token T] -namespaces K -n N [-size B] [-concurrency C]
//	kube-client watch   -server URL [-token T] -namespaces K -watchers N -first I -rv RV -expect E
//	kube-client update  -server URL [-token T] -namespaces K -n N -rate R
//	kube-client list    -server URL [-token T] -n N -rv RV
//	kube-client informer -server URL [-token T] [-content json|protobuf]
//	kube-client typed-list  -server URL -n N -rv RV [-content json|protobuf]
//	kube-client typed-watch -server URL [-content json|protobuf]
//
// Objects are ConfigMaps in namespaces ns-0…ns-(K-1): one "bench" per namespace, labelled
// app=bench, the one updated and watched (its data.t the update's send time, Unix ms, which
// watchers turn into a latency), and n fillers labelled app=filler for LIST and the informer. Connections are HTTP/1.1, one per watch, for both apiservers (ours speaks only
// HTTP/1.1; client-go would multiplex kube-apiserver's watches over HTTP/2).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var (
	server      = flag.String("server", "", "apiserver URL (http:// or https://)")
	token       = flag.String("token", "", "bearer token (kube-apiserver's --token-auth-file)")
	namespaces  = flag.Int("namespaces", 10, "namespaces ns-0…")
	n           = flag.Int("n", 1000, "objects (create), updates (update), LISTs (list)")
	size        = flag.Int("size", 900, "bytes of padding per ConfigMap")
	concurrency = flag.Int("concurrency", 32, "requests in flight (create)")
	watchers    = flag.Int("watchers", 1000, "watches this process holds")
	first       = flag.Int("first", 0, "index of this process's first watcher (its namespace is index % namespaces)")
	rv          = flag.String("rv", "", "resourceVersion to watch or list from")
	expect      = flag.Int("expect", 0, "MODIFIED events this process waits for")
	rate        = flag.Float64("rate", 100, "updates per second")
	timeout     = flag.Duration("timeout", 5*time.Minute, "give up after")
	content     = flag.String("content", "protobuf", "the typed clientset's body type: protobuf (client-go's default for built-in kinds) or json")
)

// typedConfig: the rest.Config of a typed clientset sending and asking for -content.
func typedConfig() *rest.Config {
	cfg := &rest.Config{Host: *server, BearerToken: *token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
	switch *content {
	case "protobuf":
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	case "json":
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	default:
		fail("-content: %q is neither protobuf nor json", *content)
	}
	return cfg
}

func client(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     0,
		DisableCompression:  true,
	}}
}

func request(c *http.Client, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, *server+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func configMap(ns int, name string, t float64, app string) map[string]any {
	pad := make([]byte, *size)
	for i := range pad {
		pad[i] = 'x'
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": fmt.Sprintf("ns-%d", ns), "labels": map[string]string{"app": app}},
		"data":       map[string]string{"t": strconv.FormatFloat(t, 'f', 3, 64), "pad": string(pad)},
	}
}

func nowMs() float64 { return float64(time.Now().UnixNano()) / 1e6 }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kube-client: "+format+"\n", args...)
	os.Exit(1)
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// create: the namespaces, one "bench" ConfigMap per namespace, then n more spread over them.
func create() {
	c := client(*concurrency)
	for ns := 0; ns < *namespaces; ns++ {
		status, body, err := request(c, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]string{"name": fmt.Sprintf("ns-%d", ns)}})
		if err != nil || (status != 201 && status != 409) {
			fail("namespace ns-%d: %d %v %s", ns, status, err, body)
		}
		if status, body, err := request(c, "POST", fmt.Sprintf("/api/v1/namespaces/ns-%d/configmaps", ns), configMap(ns, "bench", 0, "bench")); err != nil || status != 201 {
			fail("configmap bench in ns-%d: %d %v %s", ns, status, err, body)
		}
	}
	start := time.Now()
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= *n {
					return
				}
				ns := i % *namespaces
				status, _, err := request(c, "POST", fmt.Sprintf("/api/v1/namespaces/ns-%d/configmaps", ns), configMap(ns, fmt.Sprintf("obj-%d", i), 0, "filler"))
				if err != nil || status != 201 {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	emit(map[string]any{"created": *n - int(errs.Load()), "errors": errs.Load(), "ms": time.Since(start).Milliseconds()})
}

// histogram: latencies in buckets of 1 % (log scale), mergeable across processes.
type histogram map[int]int

func (h histogram) add(ms float64) {
	if ms < 0.01 {
		ms = 0.01
	}
	h[int(math.Floor(math.Log(ms)/math.Log(1.01)))]++
}

func watch() {
	c := client(*watchers)
	c.Timeout = 0
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var ready sync.WaitGroup
	var mu sync.Mutex
	hist := histogram{}
	var delivered, others atomic.Int64
	var firstAt, lastAt atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	errs := make(chan error, *watchers)
	for w := 0; w < *watchers; w++ {
		ready.Add(1)
		ns := (*first + w) % *namespaces
		go func() {
			url := fmt.Sprintf("%s/api/v1/namespaces/ns-%d/configmaps?watch=1&resourceVersion=%s&labelSelector=app%%3Dbench", *server, ns, *rv)
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			if *token != "" {
				req.Header.Set("Authorization", "Bearer "+*token)
			}
			res, err := c.Do(req)
			if err != nil || res.StatusCode != 200 {
				if err == nil {
					err = fmt.Errorf("status %d", res.StatusCode)
				}
				errs <- err
				ready.Done()
				return
			}
			ready.Done()
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
			modified := []byte(`{"type":"MODIFIED"`)
			key := []byte(`"t":"`)
			for sc.Scan() {
				line := sc.Bytes()
				if !bytes.HasPrefix(line, modified) {
					others.Add(1)
					continue
				}
				i := bytes.Index(line, key)
				if i < 0 {
					continue
				}
				rest := line[i+len(key):]
				j := bytes.IndexByte(rest, '"')
				t, err := strconv.ParseFloat(string(rest[:j]), 64)
				if err != nil {
					continue
				}
				now := nowMs()
				mu.Lock()
				hist.add(now - t)
				mu.Unlock()
				firstAt.CompareAndSwap(0, time.Now().UnixNano())
				lastAt.Store(time.Now().UnixNano())
				if int(delivered.Add(1)) >= *expect {
					once.Do(func() { close(done) })
				}
			}
		}()
	}
	ready.Wait()
	select {
	case err := <-errs:
		fail("watch: %v", err)
	default:
	}
	fmt.Println("ready")
	select {
	case <-done:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	emit(map[string]any{"delivered": delivered.Load(), "others": others.Load(), "firstNs": firstAt.Load(), "lastNs": lastAt.Load(), "hist": hist})
}

// update: n PUTs of the namespaces' "bench" ConfigMap in turn, paced at rate, not awaited one by one.
func update() {
	c := client(256)
	start := time.Now()
	var wg sync.WaitGroup
	var errs atomic.Int64
	for i := 0; i < *n; i++ {
		due := start.Add(time.Duration(float64(i) / *rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		ns := i % *namespaces
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, err := request(c, "PUT", fmt.Sprintf("/api/v1/namespaces/ns-%d/configmaps/bench", ns), configMap(ns, "bench", nowMs(), "bench"))
			if err != nil || status != 200 {
				errs.Add(1)
			}
		}()
	}
	wg.Wait()
	emit(map[string]any{"updates": *n, "errors": errs.Load(), "startNs": start.UnixNano(), "ms": time.Since(start).Milliseconds()})
}

// list: n LISTs of every ConfigMap at rv, one after the other.
func list() {
	c := client(1)
	var ms []float64
	items := 0
	for i := 0; i < *n; i++ {
		t := time.Now()
		status, body, err := request(c, "GET", "/api/v1/configmaps?resourceVersion="+*rv, nil)
		if err != nil || status != 200 {
			fail("list: %d %v", status, err)
		}
		ms = append(ms, float64(time.Since(t).Microseconds())/1000)
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			fail("list: %v", err)
		}
		items = len(l.Items)
	}
	sort.Float64s(ms)
	q := func(p float64) float64 { return ms[int(math.Min(float64(len(ms)-1), math.Floor(p*float64(len(ms)))))] }
	emit(map[string]any{"items": items, "p50": q(0.5), "p99": q(0.99), "max": ms[len(ms)-1]})
}

// informer: a client-go shared informer of every ConfigMap (-content; a WatchList stream or a LIST
// as KUBE_FEATURE_WatchListClient says); the time until it has synced.
func informer() {
	cs, err := kubernetes.NewForConfig(typedConfig())
	if err != nil {
		fail("informer: %v", err)
	}
	start := time.Now()
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	// polled every millisecond: cache.WaitForCacheSync polls every 100 ms, a coarser grain than
	// the figure measured
	for !inf.HasSynced() {
		if ctx.Err() != nil {
			fail("informer: not synced in %v", *timeout)
		}
		time.Sleep(time.Millisecond)
	}
	synced := time.Since(start)
	items := len(inf.GetStore().List())
	emit(map[string]any{"syncMs": float64(synced.Microseconds()) / 1000, "items": items,
		"watchList": clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)})
}

// typed-list: n LISTs of every ConfigMap at rv through the typed clientset (decoded into
// corev1.ConfigMapList), one after the other.
func typedList() {
	cs, err := kubernetes.NewForConfig(typedConfig())
	if err != nil {
		fail("typed-list: %v", err)
	}
	var ms []float64
	items := 0
	for i := 0; i < *n; i++ {
		t := time.Now()
		l, err := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{ResourceVersion: *rv})
		if err != nil {
			fail("typed-list: %v", err)
		}
		ms = append(ms, float64(time.Since(t).Microseconds())/1000)
		items = len(l.Items)
	}
	sort.Float64s(ms)
	q := func(p float64) float64 { return ms[int(math.Min(float64(len(ms)-1), math.Floor(p*float64(len(ms)))))] }
	emit(map[string]any{"items": items, "p50": q(0.5), "p99": q(0.99), "max": ms[len(ms)-1]})
}

// typed-watch: a typed watch of every ConfigMap with sendInitialEvents (the WatchList stream an
// informer syncs from): the time from the request to the initial-events-end bookmark, and the
// ADDED events before it.
func typedWatch() {
	cs, err := kubernetes.NewForConfig(typedConfig())
	if err != nil {
		fail("typed-watch: %v", err)
	}
	yes := true
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{
		SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		fail("typed-watch: %v", err)
	}
	defer w.Stop()
	added := 0
	for e := range w.ResultChan() {
		switch e.Type {
		case apiwatch.Added:
			if _, ok := e.Object.(*corev1.ConfigMap); !ok {
				fail("typed-watch: an ADDED of %T", e.Object)
			}
			added++
		case apiwatch.Bookmark:
			if m, err := meta.Accessor(e.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				emit(map[string]any{"events": added, "ms": float64(time.Since(start).Microseconds()) / 1000})
				return
			}
		case apiwatch.Error:
			fail("typed-watch: %v", e.Object)
		}
	}
	fail("typed-watch: the watch ended after %d events without the initial-events-end bookmark", added)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: kube-client create|watch|update|list|informer|typed-list|typed-watch [flags]")
	}
	cmd := os.Args[1]
	_ = flag.CommandLine.Parse(os.Args[2:])
	if *server == "" {
		fail("-server is required")
	}
	switch cmd {
	case "create":
		create()
	case "watch":
		watch()
	case "update":
		update()
	case "list":
		list()
	case "informer":
		informer()
	case "typed-list":
		typedList()
	case "typed-watch":
		typedWatch()
	default:
		fail("unknown subcommand %q", cmd)
	}
}
