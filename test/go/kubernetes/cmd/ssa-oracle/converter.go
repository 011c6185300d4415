// converter.go: the TypeConverter of a request's OpenAPI v2 definitions (built once per distinct
// definitions text: building it converts every definition to a structured-merge-diff schema),
// and the object converter, defaulter and creater the field manager needs, for unstructured
// objects of one version.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// a property test may send many distinct CRD schemas: past this many, the cache starts over
const maxCachedConverters = 32

type converterCache struct {
	byDefinitions map[[sha256.Size]byte]managedfields.TypeConverter
}

func newConverterCache() *converterCache {
	return &converterCache{byDefinitions: map[[sha256.Size]byte]managedfields.TypeConverter{}}
}

func (c *converterCache) get(definitions json.RawMessage) (managedfields.TypeConverter, error) {
	key := sha256.Sum256(definitions)
	if tc, ok := c.byDefinitions[key]; ok {
		return tc, nil
	}
	defs := map[string]*spec.Schema{}
	if err := json.Unmarshal(definitions, &defs); err != nil {
		return nil, fmt.Errorf("definitions: %v", err)
	}
	// preserveUnknownFields false: as the apiserver builds it for built-in kinds and for CRDs
	// (a schema opts in with x-kubernetes-preserve-unknown-fields)
	tc, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		return nil, fmt.Errorf("definitions: %v", err)
	}
	if len(c.byDefinitions) >= maxCachedConverters {
		clear(c.byDefinitions)
	}
	c.byDefinitions[key] = tc
	return tc, nil
}

// sameVersion is the object converter of a single-version kind: every object is already in the
// version asked for (the hub included), so conversion is the identity.
type sameVersion struct{}

func (sameVersion) Convert(in, out, context any) error {
	return fmt.Errorf("ssa-oracle: Convert is not used by the field manager")
}

func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, _, _ string) (string, string, error) {
	return "", "", fmt.Errorf("ssa-oracle: field labels are not converted")
}

// noDefaults: the oracle applies no defaulting after a merge (the apiserver runs the kind's
// defaulting functions there: none for ConfigMaps, Secrets, Leases; a CRD's schema defaults).
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// emptyObjects creates the empty unstructured object of a kind, as the CRD handler's creater.
type emptyObjects struct{}

func (emptyObjects) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
