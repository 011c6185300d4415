// typed-client: client-go v0.37.2's typed clientset against an apiserver (issue 27), as every
// Kubernetes component built on it talks: protobuf request and response bodies for the built-in
// kinds, protobuf watch streams. For ConfigMaps, Secrets and Namespaces (and Leases and Events when
// the server serves them) it creates, gets, lists, updates, patches, deletes and watches, runs a
// shared informer, checks each result, and checks that every typed answer arrived as
// application/vnd.kubernetes.protobuf (the transport records each response's Content-Type). The
// informer lists the way client-go's WatchListClient feature says (KUBE_FEATURE_WatchListClient in
// the environment; on by default in v0.37): on, one WatchList stream (sendInitialEvents and the
// initial-events-end bookmark, in protobuf) and no LIST — client-go falls back to a LIST silently
// when the stream fails, so a LIST is a failure; off, one LIST then a watch. Exit 0 when all
// checks pass; otherwise each failure is printed on stderr and the exit code is 1.
//
//	typed-client -server http://127.0.0.1:PORT
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const protobuf = "application/vnd.kubernetes.protobuf"

var failures []string

func fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	failures = append(failures, msg)
	fmt.Fprintln(os.Stderr, "FAIL:", msg)
}

func check(what string, err error) bool {
	if err != nil {
		fail("%s: %v", what, err)
		return false
	}
	return true
}

func equal(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		fail("%s: got %#v, want %#v", what, got, want)
	}
}

// contentTypes records the Content-Type of every response, by request path, and every request's
// method, path and query in order.
type contentTypes struct {
	mu       sync.Mutex
	seen     map[string]int
	requests []string
	next     http.RoundTripper
}

var recorder = &contentTypes{seen: map[string]int{}}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.requests = append(c.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	c.mu.Unlock()
	res, err := c.next.RoundTrip(r)
	if err == nil {
		ct := res.Header.Get("Content-Type")
		c.mu.Lock()
		c.seen[fmt.Sprintf("%s %s accept=%q -> %s", r.Method, kindOfPath(r.URL.Path), r.Header.Get("Accept"), ct)]++
		c.mu.Unlock()
	}
	return res, err
}

func kindOfPath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		switch parts[i] {
		case "configmaps", "secrets", "namespaces", "leases", "events":
			return parts[i]
		}
	}
	return p
}

func main() {
	server := flag.String("server", "", "the apiserver's URL")
	flag.Parse()
	if *server == "" {
		fmt.Fprintln(os.Stderr, "typed-client: -server is required")
		os.Exit(2)
	}
	fmt.Printf("typed-client: WatchListClient=%v\n", clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient))
	cfg := &rest.Config{Host: *server, Timeout: 30 * time.Second}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { recorder.next = rt; return recorder }
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "typed-client:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ns := fmt.Sprintf("typed-%d", time.Now().UnixNano()%1_000_000_000)
	namespaces(ctx, cs, ns)
	configMaps(ctx, cs, ns)
	applies(ctx, cs, ns)
	secrets(ctx, cs, ns)
	informer(ctx, cs, ns)
	served := servedResources(cs)
	if served["coordination.k8s.io/v1/leases"] {
		leases(ctx, cs, ns)
	} else {
		fmt.Println("typed-client: coordination.k8s.io/v1 leases not served: skipped")
	}
	if served["v1/events"] && served["events.k8s.io/v1/events"] {
		events(ctx, cs, ns)
	} else {
		fmt.Println("typed-client: events not served: skipped")
	}

	keys := make([]string, 0, len(recorder.seen))
	for k := range recorder.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("typed-client: %3d × %s\n", recorder.seen[k], k)
		if strings.Contains(k, "accept=\""+protobuf) && !strings.HasSuffix(k, "-> "+protobuf) &&
			!strings.HasSuffix(k, "-> "+protobuf+";stream=watch") {
			fail("a typed request that asked for protobuf got another type: %s", k)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "typed-client: %d checks failed\n", len(failures))
		os.Exit(1)
	}
	fmt.Println("typed-client: all checks passed")
}

func servedResources(cs *kubernetes.Clientset) map[string]bool {
	out := map[string]bool{}
	for _, gv := range []string{"v1", "coordination.k8s.io/v1", "events.k8s.io/v1"} {
		l, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			out[gv+"/"+r.Name] = true
		}
	}
	return out
}

// watchEvents collects a watch's events until it has n or the deadline passes.
func watchEvents(w watch.Interface, n int) []watch.Event {
	defer w.Stop()
	var out []watch.Event
	deadline := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, e)
		case <-deadline:
			return out
		}
	}
	return out
}

func namespaces(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoreV1().Namespaces()
	created, err := api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"typed": "yes"}}}, metav1.CreateOptions{})
	if !check("create namespace", err) {
		os.Exit(1) // everything below lives in it
	}
	equal("namespace phase", created.Status.Phase, corev1.NamespaceActive)
	equal("namespace finalizers", created.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes})
	if created.UID == "" || created.CreationTimestamp.IsZero() {
		fail("namespace uid/creationTimestamp not set: %+v", created.ObjectMeta)
	}
	got, err := api.Get(ctx, ns, metav1.GetOptions{})
	if check("get namespace", err) {
		equal("namespace get = create", got.ObjectMeta, created.ObjectMeta)
	}
	l, err := api.List(ctx, metav1.ListOptions{LabelSelector: "typed=yes"})
	if check("list namespaces", err) {
		found := false
		for _, n := range l.Items {
			found = found || n.Name == ns
		}
		if !found {
			fail("list namespaces typed=yes: %s missing", ns)
		}
	}
	got.Labels["updated"] = "1"
	upd, err := api.Update(ctx, got, metav1.UpdateOptions{})
	if check("update namespace", err) {
		equal("namespace labels after update", upd.Labels, map[string]string{"typed": "yes", "updated": "1", "kubernetes.io/metadata.name": ns})
	}
	_, err = api.Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`), metav1.PatchOptions{})
	check("patch namespace", err)
	// a second namespace: deleted (it terminates: the finalizer stays until the controller is done)
	gone := ns + "-gone"
	_, err = api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gone}}, metav1.CreateOptions{})
	check("create namespace "+gone, err)
	check("delete namespace "+gone, api.Delete(ctx, gone, metav1.DeleteOptions{}))
	after, err := api.Get(ctx, gone, metav1.GetOptions{})
	if err == nil && after.DeletionTimestamp == nil {
		fail("deleted namespace has no deletionTimestamp")
	} else if err != nil && !apierrors.IsNotFound(err) {
		fail("get deleted namespace: %v", err)
	}
	_, err = api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		fail("create namespace again: want AlreadyExists, got %v", err)
	}
}

func configMaps(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoreV1().ConfigMaps(ns)
	start, err := api.List(ctx, metav1.ListOptions{})
	if !check("list configmaps", err) {
		return
	}
	w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
	if !check("watch configmaps", err) {
		return
	}
	immutable := false
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"app": "typed"}, Annotations: map[string]string{"note": "ünïcode ✓"}},
		Data:       map[string]string{"k": "v", "empty": ""},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}},
		Immutable:  &immutable,
	}
	created, err := api.Create(ctx, cm, metav1.CreateOptions{})
	if !check("create configmap", err) {
		return
	}
	equal("configmap data", created.Data, cm.Data)
	equal("configmap binaryData", created.BinaryData, cm.BinaryData)
	equal("configmap immutable", created.Immutable, &immutable)
	equal("configmap annotations", created.Annotations, cm.Annotations)
	equal("configmap namespace", created.Namespace, ns)
	got, err := api.Get(ctx, "cm", metav1.GetOptions{})
	if check("get configmap", err) {
		equal("configmap get = create", got, created)
	}
	_, err = api.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
	check("create configmap other", err)
	l, err := api.List(ctx, metav1.ListOptions{LabelSelector: "app=typed"})
	if check("list configmaps app=typed", err) {
		equal("list app=typed items", len(l.Items), 1)
		if len(l.Items) == 1 {
			equal("listed configmap", l.Items[0].Data, cm.Data)
		}
	}
	got.Data["k"] = "w"
	upd, err := api.Update(ctx, got, metav1.UpdateOptions{})
	if check("update configmap", err) {
		equal("configmap data after update", upd.Data["k"], "w")
	}
	_, err = api.Update(ctx, got, metav1.UpdateOptions{}) // got's resourceVersion is stale now
	if !apierrors.IsConflict(err) {
		fail("update with a stale resourceVersion: want Conflict, got %v", err)
	}
	p, err := api.Patch(ctx, "cm", types.StrategicMergePatchType, []byte(`{"data":{"z":"1"}}`), metav1.PatchOptions{})
	if check("patch configmap", err) {
		equal("configmap data after patch", p.Data, map[string]string{"k": "w", "empty": "", "z": "1"})
	}
	check("delete configmap", api.Delete(ctx, "cm", metav1.DeleteOptions{}))
	_, err = api.Get(ctx, "cm", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		fail("get deleted configmap: want NotFound, got %v", err)
	} else {
		equal("not found message", err.Error(), `configmaps "cm" not found`)
	}
	evs := watchEvents(w, 5)
	var seen []string
	for _, e := range evs {
		c, ok := e.Object.(*corev1.ConfigMap)
		if !ok {
			fail("watch event object is %T", e.Object)
			continue
		}
		seen = append(seen, fmt.Sprintf("%s %s", e.Type, c.Name))
	}
	equal("configmap watch events", seen, []string{"ADDED cm", "ADDED other", "MODIFIED cm", "MODIFIED cm", "DELETED cm"})
	if len(evs) == 5 {
		last := evs[4].Object.(*corev1.ConfigMap)
		equal("deleted event's object data", last.Data, map[string]string{"k": "w", "empty": "", "z": "1"})
		equal("deleted event's binaryData", last.BinaryData, cm.BinaryData)
	}
}

// applies: server-side apply with the typed client's apply configurations — create, a rival
// manager's conflict (409, the apiserver's text), force, and what each manager owns afterwards.
func applies(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoreV1().ConfigMaps(ns)
	mine := corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"a": "1", "b": "2"})
	got, err := api.Apply(ctx, mine, metav1.ApplyOptions{FieldManager: "typed-client"})
	if !check("apply configmap (creates it)", err) {
		return
	}
	equal("applied data", got.Data, map[string]string{"a": "1", "b": "2"})
	if len(got.ManagedFields) == 1 {
		equal("applied manager", got.ManagedFields[0].Manager+" "+string(got.ManagedFields[0].Operation), "typed-client Apply")
	} else {
		fail("applied managedFields: want one entry, got %d", len(got.ManagedFields))
	}
	rival := corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"a": "9"})
	_, err = api.Apply(ctx, rival, metav1.ApplyOptions{FieldManager: "rival"})
	if !apierrors.IsConflict(err) {
		fail("a rival's apply: want Conflict, got %v", err)
	} else {
		equal("conflict message", err.Error(), `Apply failed with 1 conflict: conflict with "typed-client": .data.a`)
	}
	got, err = api.Apply(ctx, rival, metav1.ApplyOptions{FieldManager: "rival", Force: true})
	if check("forced apply", err) {
		equal("data after the forced apply", got.Data, map[string]string{"a": "9", "b": "2"})
		owned, err := corev1ac.ExtractConfigMap(got, "typed-client")
		if check("extract typed-client's fields", err) {
			equal("typed-client's fields after force", owned.Data, map[string]string{"b": "2"})
		}
	}
}

func secrets(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoreV1().Secrets(ns)
	w, err := api.Watch(ctx, metav1.ListOptions{})
	if !check("watch secrets", err) {
		return
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data:       map[string][]byte{"raw": {0, 0xfe, 'x'}},
		StringData: map[string]string{"plain": "text"},
		Type:       corev1.SecretTypeOpaque,
	}
	created, err := api.Create(ctx, s, metav1.CreateOptions{})
	if !check("create secret", err) {
		return
	}
	equal("secret data (stringData merged)", created.Data, map[string][]byte{"raw": {0, 0xfe, 'x'}, "plain": []byte("text")})
	equal("secret stringData", len(created.StringData), 0)
	equal("secret type", created.Type, corev1.SecretTypeOpaque)
	got, err := api.Get(ctx, "s", metav1.GetOptions{})
	if check("get secret", err) {
		equal("secret get = create", got, created)
	}
	l, err := api.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=s"})
	if check("list secrets", err) {
		equal("list secrets items", len(l.Items), 1)
	}
	got.Data["raw"] = []byte{}
	upd, err := api.Update(ctx, got, metav1.UpdateOptions{})
	if check("update secret", err) {
		equal("secret empty value", upd.Data["raw"], []byte{})
	}
	p, err := api.Patch(ctx, "s", types.JSONPatchType, []byte(`[{"op":"add","path":"/data/j","value":"AAE="}]`), metav1.PatchOptions{})
	if check("json-patch secret", err) {
		equal("secret after json patch", p.Data["j"], []byte{0, 1})
	}
	check("delete secret", api.Delete(ctx, "s", metav1.DeleteOptions{}))
	var seen []string
	for _, e := range watchEvents(w, 4) {
		seen = append(seen, string(e.Type))
	}
	equal("secret watch events", seen, []string{"ADDED", "MODIFIED", "MODIFIED", "DELETED"})
}

func leases(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoordinationV1().Leases(ns)
	holder, seconds := "me", int32(15)
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	created, err := api.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "leader"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if !check("create lease", err) {
		return
	}
	equal("lease holder", *created.Spec.HolderIdentity, holder)
	if !created.Spec.RenewTime.Equal(&now) {
		fail("lease renewTime: got %v, want %v", created.Spec.RenewTime, now)
	}
	got, err := api.Get(ctx, "leader", metav1.GetOptions{})
	if check("get lease", err) {
		equal("lease get = create", got, created)
	}
	check("delete lease", api.Delete(ctx, "leader", metav1.DeleteOptions{}))
}

func events(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	core, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e1"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		Reason:         "Tested", Message: "by typed-client", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "typed-client"}, Count: 1,
		FirstTimestamp: metav1.NewTime(now.Truncate(time.Second)), LastTimestamp: metav1.NewTime(now.Truncate(time.Second)),
	}, metav1.CreateOptions{})
	if check("create core/v1 event", err) {
		equal("core event reason", core.Reason, "Tested")
	}
	ev, err := cs.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e2"}, EventTime: now,
		ReportingController: "etcd-effect.test/typed-client", ReportingInstance: "typed-client-1",
		Action: "Test", Reason: "Tested", Type: "Normal",
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"},
	}, metav1.CreateOptions{})
	if check("create events.k8s.io/v1 event", err) && !ev.EventTime.Equal(&now) {
		fail("event eventTime: got %v, want %v", ev.EventTime, now)
	}
	var buf bytes.Buffer
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if check("list core/v1 events", err) {
		for _, e := range l.Items {
			buf.WriteString(e.Name + " ")
		}
		if !strings.Contains(buf.String(), "e1") {
			fail("core/v1 events list: %s", buf.String())
		}
	}
}

// informer: a shared informer of ConfigMaps (list and watch in protobuf, with bookmarks; the
// WatchList stream when client-go has the feature on) syncs, then sees an object created after the
// sync.
func informer(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	api := cs.CoreV1().ConfigMaps(ns)
	_, err := api.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{})
	check("create configmap before", err)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps()
	added := make(chan string, 16)
	_, err = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*corev1.ConfigMap).Name },
	})
	check("add event handler", err)
	recorder.mu.Lock()
	before := len(recorder.requests)
	recorder.mu.Unlock()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
		fail("informer: cache did not sync")
		return
	}
	informerRequests(ns, before)
	if _, err := inf.Lister().ConfigMaps(ns).Get("before"); err != nil {
		fail("informer: lister after sync: %v", err)
	}
	_, err = api.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	check("create configmap after", err)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case name := <-added:
			if name == "after" {
				return
			}
		case <-deadline:
			fail("informer: no ADDED for a configmap created after the sync")
			return
		}
	}
}

// informerRequests: the informer's requests since index before were one WatchList stream and no
// LIST (WatchListClient on), or one LIST and no WatchList stream (off).
func informerRequests(ns string, before int) {
	path := "GET /api/v1/namespaces/" + ns + "/configmaps?"
	var lists, watchLists []string
	recorder.mu.Lock()
	for _, l := range recorder.requests[before:] {
		switch {
		case !strings.HasPrefix(l, path):
		case strings.Contains(l, "watch=true") && strings.Contains(l, "sendInitialEvents=true"):
			watchLists = append(watchLists, l)
		case !strings.Contains(l, "watch=true"):
			lists = append(lists, l)
		}
	}
	recorder.mu.Unlock()
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		equal("WatchListClient on: the informer's LISTs", lists, []string(nil))
		equal("WatchListClient on: the informer's watches with sendInitialEvents", len(watchLists), 1)
	} else {
		equal("WatchListClient off: the informer's watches with sendInitialEvents", watchLists, []string(nil))
		equal("WatchListClient off: the informer's LISTs", len(lists), 1)
	}
	fmt.Printf("typed-client: informer lists %d, watch-lists %d\n", len(lists), len(watchLists))
}
