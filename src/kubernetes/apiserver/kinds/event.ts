/**
 * core/v1 Event: its Go type, pkg/apis/core/validation/events.go (the legacy rules every Event
 * passes, in whichever version it was written, and the strict ones of events.k8s.io/v1 — event.ts
 * holds both, on the core/v1 shape, since events.k8s.io/v1 objects are converted to it first),
 * the strategy (registry/core/event: no metadata rules of its own on core/v1 beyond the common
 * ones, unconditional updates) and the fields a selector may name (ToSelectableFields).
 */
import * as F from "../../api/field.js"
import type { KubeObject } from "../../api/object-meta.js"
import type { FieldError } from "../../api/status.js"
import { isDNS1123Subdomain, isQualifiedName } from "../../api/validation.js"
import type { AttrFunc } from "../../storage/selection-predicate.js"
import { goMicroTime, goTime } from "./go-leaves.js"
import { goInt, goString, goStruct, goStructOnly, type GoSchema } from "./go-types.js"
import { type MetaRules, ObjectMeta, validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.js"
import type { KindStrategy, Obj } from "./strategy.js"

export const ObjectReference: GoSchema = goStruct("ObjectReference", "v1.ObjectReference", {
  kind: goString(),
  namespace: goString(),
  name: goString(),
  uid: goString("types.UID"),
  apiVersion: goString(),
  resourceVersion: goString(),
  fieldPath: goString()
})

export const EventSource: GoSchema = goStruct("EventSource", "v1.EventSource", {
  component: goString(),
  host: goString()
})

export const eventSeries = (goType: string): GoSchema =>
  goStruct("EventSeries", goType, { count: goInt("int32"), lastObservedTime: goMicroTime })

export const CoreEvent = goStructOnly("Event", "v1.Event", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  involvedObject: ObjectReference,
  reason: goString(),
  message: goString(),
  source: EventSource,
  firstTimestamp: goTime,
  lastTimestamp: goTime,
  count: goInt("int32"),
  type: goString(),
  eventTime: goMicroTime,
  series: eventSeries("v1.EventSeries"),
  action: goString(),
  related: ObjectReference,
  reportingComponent: goString(),
  reportingInstance: goString()
})

export interface ObjectRef {
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly uid?: string
  readonly apiVersion?: string
  readonly resourceVersion?: string
  readonly fieldPath?: string
}

/** A core/v1 Event's fields (all optional, as stored). */
export interface CoreEventFields {
  readonly involvedObject?: ObjectRef
  readonly reason?: string
  readonly message?: string
  readonly source?: { readonly component?: string; readonly host?: string }
  readonly firstTimestamp?: string
  readonly lastTimestamp?: string
  readonly count?: number
  readonly type?: string
  readonly eventTime?: string
  readonly series?: { readonly count?: number; readonly lastObservedTime?: string }
  readonly action?: string
  readonly related?: ObjectRef
  readonly reportingComponent?: string
  readonly reportingInstance?: string
}

export type CoreEventObject = KubeObject & CoreEventFields

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128
export const ACTION_LENGTH_LIMIT = 128
export const REASON_LENGTH_LIMIT = 128
export const NOTE_LENGTH_LIMIT = 1024

/** The API group the request came through: the legacy rules name reportingController after it. */
export type EventVersion = "core/v1" | "events.k8s.io/v1"

const bytes = (s: string | undefined) => Buffer.byteLength(s ?? "")
const isZero = (t: string | null | undefined) => t === undefined || t === null || t === ""

/** legacyValidateEvent: what every Event must satisfy, whichever version wrote it. */
export const legacyValidateEvent = (e: CoreEventObject, version: EventVersion): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const controllerField = version === "core/v1" ? "reportingComponent" : "reportingController"
  const ns = e.metadata.namespace ?? ""
  const involvedNs = e.involvedObject?.namespace ?? ""
  const mismatch = () => F.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace")
  if (isZero(e.eventTime)) {
    if (involvedNs === "" ? ns !== "" && ns !== "default" : ns !== involvedNs) errs.push(mismatch())
    return errs
  }
  if (involvedNs === "" && ns !== "default" && ns !== "kube-system") errs.push(mismatch())
  const controller = e.reportingComponent ?? ""
  if (controller === "") errs.push(F.required(controllerField))
  for (const m of isQualifiedName(controller)) errs.push(F.invalid(controllerField, controller, m))
  const limited = (field: string, value: string | undefined, limit: number, required: boolean) => {
    if (required && bytes(value) === 0) errs.push(F.required(field))
    if (bytes(value) > limit) errs.push(F.invalid(field, "", `can have at most ${limit} characters`))
  }
  limited("reportingInstance", e.reportingInstance, REPORTING_INSTANCE_LENGTH_LIMIT, true)
  limited("action", e.action, ACTION_LENGTH_LIMIT, true)
  limited("reason", e.reason, REASON_LENGTH_LIMIT, true)
  limited("message", e.message, NOTE_LENGTH_LIMIT, false)
  return errs
}

/** validateV1EventSeries */
const validateSeries = (e: CoreEventFields): Array<FieldError> => {
  if (e.series === undefined || e.series === null) return []
  const errs: Array<FieldError> = []
  if ((e.series.count ?? 0) < 2) errs.push(F.invalid("series.count", "", "should be at least 2"))
  if (isZero(e.series.lastObservedTime)) errs.push(F.required("series.lastObservedTime"))
  return errs
}

const strictRules: MetaRules = { namespaced: true, validateName: isDNS1123Subdomain, core: true }

/** validation.IsValidPathSegmentName: the name rule of kinds without their own (core/v1 Events). */
export const isValidPathSegmentName = (name: string): Array<string> => {
  for (const bad of [".", ".."]) if (name === bad) return [`may not be '${bad}'`]
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
}

/** rest.ValidateCreate's common ObjectMeta check after the strategy's (run only when that passed). */
const commonRules: MetaRules = { namespaced: true, validateName: isValidPathSegmentName, core: false }

/** ValidateEventCreate of a request through `version`. */
export const validateEventCreate = (e: CoreEventObject, version: EventVersion): Array<FieldError> => {
  const errs = legacyValidateEvent(e, version)
  if (version === "events.k8s.io/v1") {
    errs.push(...validateObjectMeta(e.metadata, strictRules), ...validateSeries(e))
    if (isZero(e.eventTime)) errs.push(F.required("eventTime"))
    if (e.type !== "Normal" && e.type !== "Warning")
      errs.push(F.invalid("type", "", `has invalid value: ${e.type ?? ""}`))
    if (!isZero(e.firstTimestamp)) errs.push(F.invalid("firstTimestamp", "", "needs to be unset"))
    if (!isZero(e.lastTimestamp)) errs.push(F.invalid("lastTimestamp", "", "needs to be unset"))
    if ((e.count ?? 0) !== 0) errs.push(F.invalid("count", "", "needs to be unset"))
    if ((e.source?.component ?? "") !== "" || (e.source?.host ?? "") !== "")
      errs.push(F.invalid("source", "", "needs to be unset"))
  }
  return errs.length === 0 ? validateObjectMeta(e.metadata, commonRules) : errs
}

const json = (v: unknown) => JSON.stringify(v ?? null)

/** the internal struct's fields in declaration order (no JSON tags: Go's json.Marshal uses these names) */
const INTERNAL_STRUCTS: Readonly<Record<string, ReadonlyArray<[string, string]>>> = {
  ObjectReference: [
    ["Kind", "kind"],
    ["Namespace", "namespace"],
    ["Name", "name"],
    ["UID", "uid"],
    ["APIVersion", "apiVersion"],
    ["ResourceVersion", "resourceVersion"],
    ["FieldPath", "fieldPath"]
  ],
  EventSource: [
    ["Component", "component"],
    ["Host", "host"]
  ]
}

const internalStruct = (struct: string, v: unknown): string => {
  const o = (v ?? {}) as Record<string, unknown>
  const fields = INTERNAL_STRUCTS[struct]!.map(([goName, key]) => `${JSON.stringify(goName)}:${json(o[key] ?? "")}`)
  return `{${fields.join(",")}}`
}

/**
 * The immutable fields of an events.k8s.io/v1 update (internal names; reason is checked twice, as
 * upstream does), each with the Go value's rendering in field.Error: json.Marshal of the internal
 * type — a struct with its Go field names, a time as its JSON string or null, a string quoted.
 */
const IMMUTABLE: ReadonlyArray<[keyof CoreEventFields, string, (v: unknown) => string]> = (() => {
  const str = (v: unknown) => F.goValue((v as string | undefined) ?? "")
  const time = (v: unknown) => json(v === "" ? null : v)
  const ref = (v: unknown) => internalStruct("ObjectReference", v)
  return [
    ["involvedObject", "involvedObject", ref],
    ["reason", "reason", str],
    ["message", "message", str],
    ["source", "source", (v) => internalStruct("EventSource", v)],
    ["firstTimestamp", "firstTimestamp", time],
    ["lastTimestamp", "lastTimestamp", time],
    ["count", "count", (v) => String((v as number | undefined) ?? 0)],
    ["reason", "reason", str],
    ["type", "type", str],
    ["eventTime", "eventTime", time],
    ["action", "action", str],
    ["related", "related", (v) => (v === undefined || v === null ? "null" : ref(v))],
    ["reportingComponent", "reportingController", str],
    ["reportingInstance", "reportingInstance", str]
  ]
})()

/** ValidateEventUpdate of a request through `version`. */
export const validateEventUpdate = (e: CoreEventObject, old: CoreEventObject, version: EventVersion) => {
  const errs = legacyValidateEvent(e, version)
  if (version === "events.k8s.io/v1") {
    errs.push(...validateObjectMetaUpdate(e.metadata, old.metadata, strictRules))
    if (json(e.series) !== json(old.series)) errs.push(...validateSeries(e))
    for (const [f, path, render] of IMMUTABLE) {
      const now = render(e[f])
      if (now !== render(old[f]))
        errs.push({ type: "FieldValueInvalid", field: path, message: `Invalid value: ${now}: field is immutable` })
    }
  }
  return errs.length === 0 ? validateObjectMetaUpdate(e.metadata, old.metadata, commonRules) : errs
}

export const coreEventStrategy: KindStrategy = {
  schema: CoreEvent,
  core: true,
  returnDeletedObject: false,
  garbageCollectionUnsupported: true,
  validate: (obj: Obj) => validateEventCreate(obj as CoreEventObject, "core/v1"),
  validateUpdate: (obj: Obj, old: KubeObject) =>
    validateEventUpdate(obj as CoreEventObject, old as CoreEventObject, "core/v1")
}

/** ToSelectableFields: the fields a core/v1 field selector may name. */
export const coreEventAttrs: AttrFunc = (obj) => {
  const e = obj as CoreEventObject
  const ref = e.involvedObject ?? {}
  return {
    labels: obj.metadata.labels ?? {},
    fields: {
      "metadata.name": obj.metadata.name ?? "",
      "metadata.namespace": obj.metadata.namespace ?? "",
      "involvedObject.kind": ref.kind ?? "",
      "involvedObject.namespace": ref.namespace ?? "",
      "involvedObject.name": ref.name ?? "",
      "involvedObject.uid": ref.uid ?? "",
      "involvedObject.apiVersion": ref.apiVersion ?? "",
      "involvedObject.resourceVersion": ref.resourceVersion ?? "",
      "involvedObject.fieldPath": ref.fieldPath ?? "",
      reason: e.reason ?? "",
      reportingComponent: e.reportingComponent ?? "",
      source: (e.source?.component ?? "") !== "" ? e.source!.component! : (e.reportingComponent ?? ""),
      type: e.type ?? ""
    }
  }
}

export const CORE_EVENT_FIELDS = Object.keys(coreEventAttrs({ metadata: {} } as KubeObject).fields)
