/**
 * events.k8s.io/v1 Event: its Go type and the conversion to and from core/v1 Event (the stored
 * form — both groups share one storage under /registry/events, as the apiserver's event REST
 * does), after pkg/apis/events/v1/conversion.go: note ↔ message, regarding ↔ involvedObject,
 * deprecatedSource ↔ source, deprecatedFirstTimestamp ↔ firstTimestamp, deprecatedLastTimestamp ↔
 * lastTimestamp, deprecatedCount ↔ count, reportingController ↔ reportingComponent; the other
 * fields keep their names. Validation is core's on the converted object (event.ts), with the
 * strict events.k8s.io rules; field selectors name the v1 fields (AddFieldLabelConversionsForEvent).
 */
import type { KubeObject } from "../../api/object-meta.js"
import type { AttrFunc } from "../../storage/selection-predicate.js"
import {
  coreEventAttrs,
  type CoreEventObject,
  eventSeries,
  EventSource,
  ObjectReference,
  validateEventCreate,
  validateEventUpdate
} from "./event.js"
import { goMicroTime, goTime } from "./go-leaves.js"
import { goInt, goString, goStructOnly } from "./go-types.js"
import { ObjectMeta } from "./object-meta.js"
import type { KindStrategy } from "./strategy.js"

export const EVENTS_V1 = "events.k8s.io/v1"
export const CORE_V1 = "v1"

export const EventV1 = goStructOnly("Event", "v1.Event", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  eventTime: goMicroTime,
  series: eventSeries("v1.EventSeries"),
  reportingController: goString(),
  reportingInstance: goString(),
  action: goString(),
  reason: goString(),
  regarding: ObjectReference,
  related: ObjectReference,
  note: goString(),
  type: goString(),
  deprecatedSource: EventSource,
  deprecatedFirstTimestamp: goTime,
  deprecatedLastTimestamp: goTime,
  deprecatedCount: goInt("int32")
})

/** events.k8s.io/v1 field → core/v1 field (the fields not listed keep their names) */
export const V1_TO_CORE: Readonly<Record<string, string>> = {
  note: "message",
  regarding: "involvedObject",
  deprecatedSource: "source",
  deprecatedFirstTimestamp: "firstTimestamp",
  deprecatedLastTimestamp: "lastTimestamp",
  deprecatedCount: "count",
  reportingController: "reportingComponent"
}
const CORE_TO_V1: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(V1_TO_CORE).map(([v1, core]) => [core, v1])
)

const renamed = (obj: KubeObject, names: Readonly<Record<string, string>>, apiVersion: string): KubeObject => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion") out[k] = apiVersion
    else out[names[k] ?? k] = v
  }
  if (!("apiVersion" in out)) return { apiVersion, ...out } as KubeObject
  return out as KubeObject
}

/** Convert_v1_Event_To_core_Event (to the stored form). */
export const eventV1ToCore = (obj: KubeObject): KubeObject => renamed(obj, V1_TO_CORE, CORE_V1)

/** Convert_core_Event_To_v1_Event (from the stored form). */
export const coreToEventV1 = (obj: KubeObject): KubeObject => renamed(obj, CORE_TO_V1, EVENTS_V1)

export const eventV1Strategy: KindStrategy = {
  schema: EventV1,
  core: true,
  returnDeletedObject: false,
  garbageCollectionUnsupported: true,
  validate: (obj) => validateEventCreate(eventV1ToCore(obj) as CoreEventObject, EVENTS_V1),
  validateUpdate: (obj, old) =>
    validateEventUpdate(eventV1ToCore(obj) as CoreEventObject, eventV1ToCore(old) as CoreEventObject, EVENTS_V1)
}

/** The v1 field labels (AddFieldLabelConversionsForEvent), over the object's core/v1 fields. */
const V1_FIELD_LABELS: Readonly<Record<string, string>> = {
  reason: "reason",
  "regarding.kind": "involvedObject.kind",
  "regarding.namespace": "involvedObject.namespace",
  "regarding.name": "involvedObject.name",
  "regarding.uid": "involvedObject.uid",
  "regarding.apiVersion": "involvedObject.apiVersion",
  "regarding.resourceVersion": "involvedObject.resourceVersion",
  "regarding.fieldPath": "involvedObject.fieldPath",
  reportingController: "reportingComponent",
  type: "type",
  "metadata.namespace": "metadata.namespace",
  "metadata.name": "metadata.name"
}

export const EVENT_V1_FIELDS = Object.keys(V1_FIELD_LABELS)

export const eventV1Attrs: AttrFunc = (obj) => {
  const core = coreEventAttrs(eventV1ToCore(obj))
  const fields: Record<string, string> = {}
  for (const [label, coreLabel] of Object.entries(V1_FIELD_LABELS)) fields[label] = core.fields[coreLabel] ?? ""
  return { labels: core.labels, fields }
}
