package main

// widget.go: the Widget kind (example.com/v1, namespaced) as Go types for controller-runtime's
// typed client, with the deep copies and the scheme registration a generated API package would have.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var widgetGroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

// Widget is the CRD the controller reconciles; the test creates its CustomResourceDefinition.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size int64 `json:"size"`
}

type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Phase              string             `json:"phase,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Status.Conditions != nil {
		// metav1.Condition holds values only
		out.Status.Conditions = append([]metav1.Condition(nil), w.Status.Conditions...)
	}
}

func (w *Widget) DeepCopyObject() runtime.Object {
	out := &Widget{}
	w.DeepCopyInto(out)
	return out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func addWidgetTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(widgetGroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGroupVersion)
	return nil
}
