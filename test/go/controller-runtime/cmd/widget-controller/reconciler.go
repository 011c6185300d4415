package main

// reconciler.go: the Widget reconciler. For each Widget it server-side applies the ConfigMap
// <name>-cfg (data.size = spec.size, controlled by the Widget) as field manager
// "widget-controller", writes the status (observedGeneration, phase Ready, a Ready condition)
// with Status().Update, and records an events.k8s.io/v1 Event "Reconciled". It prints one line
// per finished reconcile on stdout: "reconciled <namespace>/<name> generation <g> size <s>".

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

const fieldOwner = "widget-controller"

type widgetReconciler struct {
	client   client.Client
	recorder recorder.EventRecorder
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err != nil {
		// deleted: its ConfigMap is left to the garbage collector (the ownerReference)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	cm := corev1ac.ConfigMap(w.Name+"-cfg", w.Namespace).
		WithData(map[string]string{"size": strconv.FormatInt(w.Spec.Size, 10)}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(widgetGroupVersion.String()).
			WithKind("Widget").
			WithName(w.Name).
			WithUID(w.UID).
			WithController(true).
			WithBlockOwnerDeletion(true))
	if err := r.client.Apply(ctx, cm, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("apply ConfigMap %s-cfg: %w", w.Name, err)
	}

	if w.Status.ObservedGeneration != w.Generation || w.Status.Phase != "Ready" {
		w.Status.ObservedGeneration = w.Generation
		w.Status.Phase = "Ready"
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type:               "Ready",
			Status:             metav1.ConditionTrue,
			Reason:             "Reconciled",
			Message:            fmt.Sprintf("ConfigMap %s-cfg has size %d", w.Name, w.Spec.Size),
			ObservedGeneration: w.Generation,
		})
		if err := r.client.Status().Update(ctx, &w); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				// a newer Widget (or none) is on its way through the watch
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("update status of %s: %w", w.Name, err)
		}
	}
	r.recorder.Eventf(&w, nil, corev1.EventTypeNormal, "Reconciled", "Reconcile",
		"generation %d, size %d", w.Generation, w.Spec.Size)
	fmt.Printf("reconciled %s/%s generation %d size %d\n", w.Namespace, w.Name, w.Generation, w.Spec.Size)
	return ctrl.Result{}, nil
}
