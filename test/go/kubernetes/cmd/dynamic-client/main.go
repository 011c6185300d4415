// dynamic-client: client-go v0.37.2's dynamic client against an apiserver (issue 27), as generic
// tools and controllers over CRDs talk: unstructured JSON bodies. For ConfigMaps and for a custom
// resource of a CRD it defines (with a structural schema and the status subresource) it creates,
// gets, lists, updates, patches (merge, JSON, strategic for the built-in kind), applies
// (server-side, with a field manager), deletes with a finalizer (the object stays with its
// deletionTimestamp until the finalizer is removed; a watch sees the DELETED), watches, and runs a
// dynamic shared informer. The informer's way of listing follows client-go's WatchListClient
// feature (KUBE_FEATURE_WatchListClient=true|false in the environment): on, one watch with
// sendInitialEvents=true and no LIST (client-go would fall back to a LIST silently if the stream
// failed, so a LIST is a failure); off, a LIST then a watch. Exit 0 when all checks pass;
// otherwise each failure is printed on stderr and the exit code is 1.
//
//	dynamic-client -server http://127.0.0.1:PORT
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

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

// requests records every request's method, path and query, in order.
type requests struct {
	mu   sync.Mutex
	log  []string
	next http.RoundTripper
}

func (r *requests) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.log = append(r.log, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *requests) matching(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crds       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func obj(v map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: v} }

func main() {
	server := flag.String("server", "", "the apiserver's URL")
	flag.Parse()
	if *server == "" {
		fmt.Fprintln(os.Stderr, "dynamic-client: -server is required")
		os.Exit(2)
	}
	watchList := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	fmt.Printf("dynamic-client: WatchListClient=%v\n", watchList)
	recorder := &requests{}
	cfg := &rest.Config{Host: *server, Timeout: 30 * time.Second}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { recorder.next = rt; return recorder }
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dynamic-client:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ns := fmt.Sprintf("dynamic-%d", time.Now().UnixNano()%1_000_000_000)
	_, err = dc.Resource(namespaces).Create(ctx, obj(map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}), metav1.CreateOptions{})
	if !check("create namespace", err) {
		os.Exit(1)
	}
	configMapVerbs(ctx, dc, ns)
	finalizers(ctx, dc, ns)
	customResources(ctx, dc, ns)
	informer(ctx, dc, ns, recorder, watchList)

	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "dynamic-client: %d checks failed\n", len(failures))
		os.Exit(1)
	}
	fmt.Println("dynamic-client: all checks passed")
}

// nextEvent: the next event of w, or a failure after 10 s.
func nextEvent(what string, w watch.Interface) (watch.Event, bool) {
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			fail("%s: the watch ended", what)
			return watch.Event{}, false
		}
		return e, true
	case <-time.After(10 * time.Second):
		fail("%s: no event in 10 s", what)
		return watch.Event{}, false
	}
}

// configMapVerbs: create, get, list, watch, update, three kinds of patch and apply of a ConfigMap.
func configMapVerbs(ctx context.Context, dc dynamic.Interface, ns string) {
	api := dc.Resource(configMaps).Namespace(ns)
	created, err := api.Create(ctx, obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"app": "dyn"}},
		"data":     map[string]any{"k": "v1"},
	}), metav1.CreateOptions{FieldManager: "dyn-create"})
	if !check("create configmap", err) {
		return
	}
	equal("created uid is set", created.GetUID() != "", true)
	got, err := api.Get(ctx, "a", metav1.GetOptions{})
	if check("get configmap", err) {
		equal("get resourceVersion", got.GetResourceVersion(), created.GetResourceVersion())
		data, _, _ := unstructured.NestedStringMap(got.Object, "data")
		equal("get data", data, map[string]string{"k": "v1"})
	}
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: "app=dyn"})
	if check("list configmaps", err) {
		equal("list items", len(list.Items), 1)
		equal("list kind", list.GetKind(), "ConfigMapList")
	}
	w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if !check("watch configmaps", err) {
		return
	}
	defer w.Stop()

	_ = unstructured.SetNestedField(got.Object, "v2", "data", "k")
	updated, err := api.Update(ctx, got, metav1.UpdateOptions{FieldManager: "dyn-update"})
	if check("update configmap", err) {
		equal("update changes the resourceVersion", updated.GetResourceVersion() != created.GetResourceVersion(), true)
	}
	if e, ok := nextEvent("watch after update", w); ok {
		equal("watch event type", e.Type, watch.Modified)
		if u, isU := e.Object.(*unstructured.Unstructured); isU {
			equal("watched resourceVersion", u.GetResourceVersion(), updated.GetResourceVersion())
		} else {
			fail("watch event object is %T", e.Object)
		}
	}
	patches := []struct {
		pt   types.PatchType
		body string
		key  string
	}{
		{types.MergePatchType, `{"data":{"merge":"1"}}`, "merge"},
		{types.JSONPatchType, `[{"op":"add","path":"/data/json","value":"1"}]`, "json"},
		{types.StrategicMergePatchType, `{"data":{"strategic":"1"}}`, "strategic"},
	}
	for _, p := range patches {
		patched, err := api.Patch(ctx, "a", p.pt, []byte(p.body), metav1.PatchOptions{FieldManager: "dyn-patch"})
		if check("patch "+string(p.pt), err) {
			v, _, _ := unstructured.NestedString(patched.Object, "data", p.key)
			equal("patched "+p.key, v, "1")
		}
		if e, ok := nextEvent("watch after patch "+p.key, w); ok {
			equal("watch event type after patch", e.Type, watch.Modified)
		}
	}
	applied, err := api.Apply(ctx, "a", obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": ns},
		"data":     map[string]any{"k": "applied"},
	}), metav1.ApplyOptions{FieldManager: "dyn-apply", Force: true})
	if check("apply configmap", err) {
		v, _, _ := unstructured.NestedString(applied.Object, "data", "k")
		equal("applied data.k", v, "applied")
		managers := map[string]string{}
		for _, m := range applied.GetManagedFields() {
			managers[m.Manager] = string(m.Operation)
		}
		equal("manager of the apply", managers["dyn-apply"], "Apply")
		equal("manager of the update", managers["dyn-patch"], "Update")
	}
	// a conflicting apply without force: 409 naming the field and its manager
	_, err = api.Apply(ctx, "a", obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": ns},
		"data":     map[string]any{"k": "other"},
	}), metav1.ApplyOptions{FieldManager: "dyn-other"})
	equal("conflicting apply is a conflict", apierrors.IsConflict(err), true)
	if err != nil && !strings.Contains(err.Error(), `conflict with "dyn-apply": .data.k`) {
		fail("conflict message: %v", err)
	}
}

// finalizers: a delete of an object with a finalizer marks it; removing the finalizer removes it.
func finalizers(ctx context.Context, dc dynamic.Interface, ns string) {
	api := dc.Resource(configMaps).Namespace(ns)
	created, err := api.Create(ctx, obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "held", "finalizers": []any{"example.com/hold"}},
	}), metav1.CreateOptions{})
	if !check("create configmap with a finalizer", err) {
		return
	}
	w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion(), FieldSelector: "metadata.name=held"})
	if !check("watch held", err) {
		return
	}
	defer w.Stop()
	check("delete held", api.Delete(ctx, "held", metav1.DeleteOptions{}))
	marked, err := api.Get(ctx, "held", metav1.GetOptions{})
	if check("get held after delete", err) {
		equal("deletionTimestamp set", marked.GetDeletionTimestamp() != nil, true)
		equal("finalizers kept", marked.GetFinalizers(), []string{"example.com/hold"})
	}
	if e, ok := nextEvent("watch after delete", w); ok {
		equal("a delete with a finalizer is a MODIFIED", e.Type, watch.Modified)
	}
	_, err = api.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	check("remove the finalizer", err)
	if e, ok := nextEvent("watch after the finalizer's removal", w); ok {
		equal("the finalizer's removal deletes", e.Type, watch.Deleted)
	}
	_, err = api.Get(ctx, "held", metav1.GetOptions{})
	equal("held is gone", apierrors.IsNotFound(err), true)
}

// customResources: a CRD with a structural schema and the status subresource, served; a custom
// resource created, validated, its status written through /status only, generation bumped by spec.
func customResources(ctx context.Context, dc dynamic.Interface, ns string) {
	group := ns + ".example.com"
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "required": []any{"size"}, "properties": map[string]any{
							"size":  map[string]any{"type": "integer", "minimum": int64(1)},
							"color": map[string]any{"type": "string", "default": "blue"},
						}},
						"status": map[string]any{"type": "object", "properties": map[string]any{
							"ready": map[string]any{"type": "boolean"},
						}},
					},
				}},
			}},
		},
	}
	_, err := dc.Resource(crds).Create(ctx, obj(crd), metav1.CreateOptions{})
	if !check("create CRD", err) {
		return
	}
	defer func() { _ = dc.Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{}) }()
	if !established(ctx, dc, "widgets."+group) {
		return
	}
	api := dc.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	widget := func(size int64) *unstructured.Unstructured {
		return obj(map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w"},
			"spec":     map[string]any{"size": size},
			"status":   map[string]any{"ready": true},
		})
	}
	_, err = api.Create(ctx, widget(0), metav1.CreateOptions{})
	equal("a widget below its minimum is invalid", apierrors.IsInvalid(err), true)
	created, err := api.Create(ctx, widget(2), metav1.CreateOptions{})
	if !check("create widget", err) {
		return
	}
	color, _, _ := unstructured.NestedString(created.Object, "spec", "color")
	equal("defaulted spec.color", color, "blue")
	_, hasStatus, _ := unstructured.NestedMap(created.Object, "status")
	equal("status dropped on create", hasStatus, false)
	equal("generation on create", created.GetGeneration(), int64(1))

	_ = unstructured.SetNestedField(created.Object, true, "status", "ready")
	withStatus, err := api.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if check("update status", err) {
		ready, _, _ := unstructured.NestedBool(withStatus.Object, "status", "ready")
		equal("status written through /status", ready, true)
		equal("a status write keeps the generation", withStatus.GetGeneration(), int64(1))
	}
	patched, err := api.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"size":3},"status":{"ready":false}}`), metav1.PatchOptions{})
	if check("patch widget spec", err) {
		ready, _, _ := unstructured.NestedBool(patched.Object, "status", "ready")
		equal("status ignored on a main-resource write", ready, true)
		equal("a spec change bumps the generation", patched.GetGeneration(), int64(2))
	}
	applied, err := api.Apply(ctx, "w", obj(map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": ns},
		"spec":     map[string]any{"size": int64(5)},
	}), metav1.ApplyOptions{FieldManager: "dyn-apply", Force: true})
	if check("apply widget", err) {
		size, _, _ := unstructured.NestedInt64(applied.Object, "spec", "size")
		equal("applied spec.size", size, int64(5))
	}
	list, err := api.List(ctx, metav1.ListOptions{})
	if check("list widgets", err) {
		equal("widgets listed", len(list.Items), 1)
		equal("list kind", list.GetKind(), "WidgetList")
	}
	check("delete widget", api.Delete(ctx, "w", metav1.DeleteOptions{}))
}

// established: waits (up to 20 s) for the CRD's Established condition.
func established(ctx context.Context, dc dynamic.Interface, name string) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got, err := dc.Resource(crds).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("CRD %s not Established in 20 s", name)
	return false
}

// informer: a dynamic shared informer of ConfigMaps syncs (by the way WatchListClient says), then
// sees an object created after the sync.
func informer(ctx context.Context, dc dynamic.Interface, ns string, recorder *requests, watchList bool) {
	api := dc.Resource(configMaps).Namespace(ns)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, ns, nil)
	inf := factory.ForResource(configMaps).Informer()
	added := make(chan string, 16)
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { added <- o.(*unstructured.Unstructured).GetName() },
	})
	check("add event handler", err)
	before := len(recorder.matching(""))
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		fail("informer: cache did not sync")
		return
	}
	names := []string{}
	for _, o := range inf.GetStore().List() {
		names = append(names, o.(*unstructured.Unstructured).GetName())
	}
	equal("informer store after sync", names, []string{"a"})

	path := "GET /api/v1/namespaces/" + ns + "/configmaps?"
	var lists, watchLists []string
	recorder.mu.Lock()
	for _, l := range recorder.log[before:] {
		if !strings.HasPrefix(l, path) {
			continue
		}
		if strings.Contains(l, "watch=true") && strings.Contains(l, "sendInitialEvents=true") {
			watchLists = append(watchLists, l)
		} else if !strings.Contains(l, "watch=true") {
			lists = append(lists, l)
		}
	}
	recorder.mu.Unlock()
	if watchList {
		equal("WatchListClient on: LISTs", lists, []string(nil))
		equal("WatchListClient on: one watch with sendInitialEvents", len(watchLists), 1)
	} else {
		equal("WatchListClient off: a watch with sendInitialEvents", watchLists, []string(nil))
		equal("WatchListClient off: one LIST", len(lists), 1)
	}
	desc, _ := json.Marshal(map[string]any{"lists": lists, "watchLists": watchLists})
	fmt.Printf("dynamic-client: informer requests %s\n", desc)

	_, err = api.Create(ctx, obj(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "after"},
	}), metav1.CreateOptions{})
	check("create configmap after the sync", err)
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
