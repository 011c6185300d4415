// steps.go: one request's steps through the field manager, as the apiserver's handlers call it
// (k8s.io/apiserver v0.37.2 pkg/endpoints/handlers):
//
//	create  create.go   UpdateNoErrors(Creater.New(kind), obj, manager)
//	update  update.go   UpdateNoErrors(live, obj, manager)       (a PUT, or a patch once applied)
//	apply   patch.go    Apply(live, obj, manager, force); with no live object, Apply on
//	                    Creater.New(kind): the empty object, apiVersion and kind only
//
// The live object carries over from step to step; a step that fails leaves it as it was. What
// storage adds (uid, resourceVersion, creationTimestamp, generation) is not added: an object has
// what its steps' objects give it. The oracle models one object, so create with a live object
// and update without one are refused (an error with only a message).
package main

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func runSteps(tc managedfields.TypeConverter, req *request) ([]result, error) {
	gvk := schema.GroupVersionKind{Group: req.GVK.Group, Version: req.GVK.Version, Kind: req.GVK.Kind}
	managers := map[string]*managedfields.FieldManager{}
	var live *unstructured.Unstructured
	results := make([]result, 0, len(req.Steps))
	for _, s := range req.Steps {
		fm, ok := managers[s.Subresource]
		if !ok {
			var err error
			if fm, err = newFieldManager(tc, gvk, s.Subresource, req.ResetFields[s.Subresource]); err != nil {
				return nil, err
			}
			managers[s.Subresource] = fm
		}
		obj, err := decodeObject(s.Object)
		if err != nil {
			results = append(results, failed(err))
			continue
		}
		start := time.Now()
		next, err := runStep(fm, gvk, live, obj.DeepCopy(), s) // the field manager changes the object it is given
		if err != nil {
			results = append(results, failed(err))
			continue
		}
		if s.Time != "" {
			restamp(next, live, obj, start, time.Now(), s.at)
		}
		live = next
		results = append(results, result{Object: live.DeepCopy().Object})
	}
	return results, nil
}

func runStep(fm *managedfields.FieldManager, gvk schema.GroupVersionKind, live, obj *unstructured.Unstructured, s step) (*unstructured.Unstructured, error) {
	switch s.Op {
	case "create":
		if live != nil {
			return nil, errors.New("create: the object exists (the oracle models one object)")
		}
		empty, _ := emptyObjects{}.New(gvk)
		return asUnstructured(fm.UpdateNoErrors(empty, obj, s.Manager))
	case "update":
		if live == nil {
			return nil, errors.New("update: there is no object (the oracle models one object)")
		}
		return asUnstructured(fm.UpdateNoErrors(live.DeepCopy(), obj, s.Manager))
	default: // "apply" (decodeRequest refused any other op)
		var base *unstructured.Unstructured
		if live != nil {
			base = live.DeepCopy()
		} else {
			empty, _ := emptyObjects{}.New(gvk)
			base = empty.(*unstructured.Unstructured)
		}
		out, err := fm.Apply(base, obj, s.Manager, s.Force)
		if err != nil {
			return nil, err
		}
		return asUnstructured(out)
	}
}

func newFieldManager(tc managedfields.TypeConverter, gvk schema.GroupVersionKind, subresource string, reset [][]string) (*managedfields.FieldManager, error) {
	var filters map[fieldpath.APIVersion]fieldpath.Filter
	if len(reset) > 0 {
		set := fieldpath.NewSet()
		for _, names := range reset {
			parts := make([]any, len(names))
			for i, n := range names {
				parts[i] = n
			}
			p, err := fieldpath.MakePath(parts...)
			if err != nil {
				return nil, fmt.Errorf("resetFields: %v", err)
			}
			set.Insert(p)
		}
		filters = fieldpath.NewExcludeFilterSetMap(map[fieldpath.APIVersion]*fieldpath.Set{
			fieldpath.APIVersion(gvk.GroupVersion().String()): set,
		})
	}
	return managedfields.NewDefaultFieldManager(tc, sameVersion{}, noDefaults{}, emptyObjects{}, gvk, gvk.GroupVersion(), subresource, filters)
}

func asUnstructured(obj any) (*unstructured.Unstructured, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the field manager returned a %T", obj)
	}
	return u, nil
}
