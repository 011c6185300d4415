/**
 * A custom resource's scale subresource (apiextensions-apiserver registry/customresource/etcd.go
 * ScaleREST): GET answers an `autoscaling/v1 Scale` made from the object (spec.replicas from
 * specReplicasPath, status.replicas from statusReplicasPath, status.selector from
 * labelSelectorPath; absent ones are 0/""); PUT and PATCH change the object's specReplicasPath
 * through the resource's own update (its validation, generation, dry run), the Scale's
 * resourceVersion as the optimistic lock, and answer with the new Scale. The write's manager
 * (fieldManager, else the User-Agent's) is tracked on the Scale and mapped back to the object's
 * managedFields (managedfields/scale-handler.ts): it owns the replicas path when it changed it.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either } from "effect"
import * as JsonPatch from "fast-json-patch"
import * as MergePatch from "json-merge-patch"
import { GoJsonSyntaxError, parseGoJson } from "../../api/go-json.js"
import type { KubeObject } from "../../api/object-meta.js"
import * as FieldManager from "../../managedfields/field-manager.js"
import type { ManagedFieldsEntry } from "../../managedfields/managed-fields.js"
import {
  replicasPathOf,
  type ResourcePathMappings,
  toParent,
  toSubresource
} from "../../managedfields/scale-handler.js"
import { BadRequest, newInternalError, newInvalid, type StatusError, UnsupportedMediaType } from "../../api/status.js"
import * as F from "../../api/field.js"
import { readBody } from "../body.js"
import { goInt, goString, goStruct, goStructOnly } from "../kinds/go-types.js"
import { ObjectMeta } from "../kinds/object-meta.js"
import type { Obj } from "../kinds/strategy.js"
import type { ScalePaths } from "../resources.js"
import { decodeBody, decoderFor, jsonDecoder, typeCheck } from "../write/decode.js"
import { fieldManagerFor, managerFromUserAgent } from "../write/managed-fields.js"
import { patchOptions, updateOptions } from "../write/options.js"
import { update as storeUpdate } from "../write/store.js"
import { body } from "./output.js"
import { objectKey, type RequestScope, writeContext } from "./scope.js"

/** autoscaling/v1 Scale as a Go type */
export const ScaleType = goStructOnly("Scale", "v1.Scale", {
  kind: goString(),
  apiVersion: goString(),
  metadata: ObjectMeta,
  spec: goStruct("ScaleSpec", "v1.ScaleSpec", { replicas: goInt("int32") }),
  status: goStruct("ScaleStatus", "v1.ScaleStatus", { replicas: goInt("int32"), selector: goString() })
})

interface Scale {
  readonly apiVersion: "autoscaling/v1"
  readonly kind: "Scale"
  readonly metadata: Record<string, unknown>
  readonly spec: { readonly replicas?: number }
  readonly status: { readonly replicas: number; readonly selector?: string }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const split = (path: string) => path.replace(/^\./, "").split(".")

/** unstructured.NestedFieldNoCopy: the value, or undefined when a step is missing or not an object. */
const nested = (obj: unknown, path: string): unknown => {
  let cur = obj
  for (const p of split(path)) cur = isObject(cur) ? cur[p] : undefined
  return cur
}

/** scaleFromCustomResource: the Scale and whether spec replicas were found. */
export const scaleOf = (cr: KubeObject, paths: ScalePaths): { readonly scale: Scale; readonly found: boolean } => {
  const spec = nested(cr, paths.specReplicasPath)
  const status = nested(cr, paths.statusReplicasPath)
  const selector = paths.labelSelectorPath === undefined ? undefined : nested(cr, paths.labelSelectorPath)
  const m = cr.metadata
  const metadata: Record<string, unknown> = { name: m.name }
  if (m.namespace !== undefined) metadata["namespace"] = m.namespace
  metadata["uid"] = m.uid
  metadata["resourceVersion"] = m.resourceVersion
  metadata["creationTimestamp"] = m.creationTimestamp
  const replicas = typeof spec === "number" ? spec : 0
  return {
    scale: {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata,
      spec: replicas === 0 ? {} : { replicas },
      status: {
        replicas: typeof status === "number" ? status : 0,
        ...(typeof selector === "string" && selector !== "" ? { selector } : {})
      }
    },
    found: typeof spec === "number"
  }
}

/** unstructured.SetNestedField: the replicas at the path (missing maps created). */
const setReplicas = (cr: Obj, path: string, replicas: number): void => {
  const parts = split(path)
  let cur: Record<string, unknown> = cr
  for (const p of parts.slice(0, -1)) {
    if (!isObject(cur[p])) cur[p] = {}
    cur = cur[p] as Record<string, unknown>
  }
  cur[parts[parts.length - 1]!] = replicas
}

const pathsOf = (s: RequestScope): ScalePaths => s.info.scale!

const scaleResponse = (s: RequestScope, cr: KubeObject): HttpServerResponse.HttpServerResponse =>
  body(s, JSON.stringify(scaleOf(cr, pathsOf(s)).scale))

export const getScale = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const cr = (yield* s.served.storage.get(objectKey(s, name), {
      resourceVersion: s.url.searchParams.get("resourceVersion") ?? ""
    }))!
    const r = scaleOf(cr, pathsOf(s))
    if (!r.found)
      return yield* Effect.fail(
        newInternalError(`the spec replicas field ${JSON.stringify(pathsOf(s).specReplicasPath)} does not exist`)
      )
    return body(s, JSON.stringify(r.scale))
  })

/** the marker of a Scale whose replicas were never set (a patch of an object without them) */
const UNSET = -2147483648

/** the Scale a write starts from: the object's, its replicas UNSET when the object has none */
const oldScaleOf = (s: RequestScope, current: KubeObject): Scale => {
  const old = scaleOf(current, pathsOf(s))
  return old.found ? old.scale : { ...old.scale, spec: { replicas: UNSET } }
}

/** the resource's replicas path of each of its apiVersions */
const mappingsOf = (s: RequestScope): ResourcePathMappings =>
  new Map(
    Object.entries(s.info.specReplicasPaths ?? {}).map(([v, p]) => [v, p === null ? null : replicasPathOf(p)] as const)
  )

/** the Scale's managedFields: ToSubresource of the object's (none when they do not decode) */
const scaleEntriesOf = (s: RequestScope, current: KubeObject): Array<ManagedFieldsEntry> | undefined => {
  try {
    return toSubresource((current.metadata.managedFields ?? []) as ReadonlyArray<ManagedFieldsEntry>, mappingsOf(s))
  } catch {
    return undefined // scaleManagedFields fails the write with the decoding error
  }
}

/** a Scale as Go's typed Scale marshals it: spec.replicas is omitempty */
const typedScale = (scale: Obj): Obj => {
  const spec = scale["spec"] as { replicas?: number | null } | undefined
  if (spec?.replicas === 0 || spec?.replicas === null) {
    const { replicas: _, ...rest } = spec
    return { ...scale, spec: rest }
  }
  return scale
}

/**
 * The object's managedFields after a scale write (the scale scope's FieldManager.UpdateNoErrors on
 * the Scale, between ScaleHandler.ToSubresource and ToParent).
 */
const scaleManagedFields = (
  s: RequestScope,
  fieldManager: string,
  current: KubeObject,
  scale: Obj
): Effect.Effect<Array<ManagedFieldsEntry> | undefined, StatusError> =>
  Effect.try({
    try: () => {
      const mappings = mappingsOf(s)
      const parent = (current.metadata.managedFields ?? []) as ReadonlyArray<ManagedFieldsEntry>
      const old = oldScaleOf(s, current) as unknown as Obj
      const live = typedScale({ ...old, metadata: { ...old.metadata, managedFields: toSubresource(parent, mappings) } })
      const manager = fieldManager !== "" ? fieldManager : managerFromUserAgent(s.request.headers["user-agent"])
      const cfg = fieldManagerFor(s.info, s.version, "scale")!
      const next = FieldManager.update(cfg, live as FieldManager.Obj, typedScale(scale) as FieldManager.Obj, manager)
      const entries = (next.metadata?.["managedFields"] ?? []) as ReadonlyArray<ManagedFieldsEntry>
      return toParent(parent, entries, current.apiVersion ?? s.apiVersion, mappings)
    },
    catch: (e) => newInternalError(e instanceof Error ? e.message : String(e))
  })

/** scaleUpdatedObjectInfo.UpdatedObject: the stored object with the new Scale's replicas, RV and managedFields. */
const applyScale = (
  s: RequestScope,
  fieldManager: string,
  current: KubeObject,
  scale: Obj
): Effect.Effect<Obj, StatusError> =>
  Effect.gen(function* () {
    const managedFields = yield* scaleManagedFields(s, fieldManager, current, structuredClone(scale))
    const paths = pathsOf(s)
    const spec = (scale["spec"] ?? {}) as { replicas?: number | null }
    const replicas = spec.replicas ?? 0
    if (spec.replicas === UNSET) {
      return yield* Effect.fail(
        new BadRequest({ message: `the spec replicas field ${JSON.stringify(paths.specReplicasPath)} cannot be empty` })
      )
    }
    // a negative count is the resource's own validation's (".spec.replicas: … should be a non-negative integer")
    const cr = structuredClone(current) as Obj
    setReplicas(cr, paths.specReplicasPath, replicas)
    const rv = (scale.metadata.resourceVersion ?? "") as string
    if (rv !== "") cr.metadata.resourceVersion = rv
    else delete cr.metadata.resourceVersion
    if (managedFields === undefined) delete cr.metadata.managedFields
    else cr.metadata.managedFields = managedFields
    return cr
  })

export const updateScale = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const bytes = yield* readBody(s.request)
    const options = yield* updateOptions(s.url.searchParams)
    const decoder = yield* decoderFor(s.request.headers["content-type"])
    const scale = yield* decodeBody(decoder, bytes, {
      kind: "Scale",
      version: "v1",
      apiVersion: "autoscaling/v1",
      custom: false,
      schema: ScaleType,
      fieldValidation: options.fieldValidation,
      warnings: s.warnings
    })
    const ctx = writeContext(s, options.dryRun)
    const stored = yield* storeUpdate(ctx, name, (current) => applyScale(s, options.fieldManager, current, scale))
    return scaleResponse(s, stored)
  })

const patchedScale = (type: string, scale: Scale, patch: unknown): Either.Either<unknown, StatusError> => {
  if (type === "application/json-patch+json") {
    if (!Array.isArray(patch))
      return Either.left(
        new BadRequest({ message: "json: cannot unmarshal object into Go value of type jsonpatch.Patch" })
      )
    try {
      return Either.right(
        JsonPatch.applyPatch(structuredClone(scale), patch as Array<JsonPatch.Operation>, true, false).newDocument
      )
    } catch (e) {
      return Either.left(new BadRequest({ message: (e as Error).message.split("\n")[0]! }))
    }
  }
  return Either.right(MergePatch.apply(structuredClone(scale), patch) as unknown)
}

const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json"
]

export const patchScale = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const type = (s.request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (!PATCH_TYPES.includes(type))
      return yield* Effect.fail(
        new UnsupportedMediaType({
          message: `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(", ")}`
        })
      )
    const bytes = yield* readBody(s.request)
    const options = yield* patchOptions(s.url.searchParams)
    const parsed = parseGoJson(bytes)
    if (parsed instanceof GoJsonSyntaxError)
      return yield* Effect.fail(new BadRequest({ message: "invalid JSON patch" }))
    const ctx = writeContext(s, options.dryRun)
    const stored = yield* storeUpdate(ctx, name, (current) =>
      Effect.gen(function* () {
        // the patch applies to the old Scale with its managedFields (ToSubresource's), as upstream
        const old = oldScaleOf(s, current)
        const managedFields = scaleEntriesOf(s, current)
        const base = { ...old, metadata: { ...old.metadata, ...(managedFields ? { managedFields } : {}) } }
        const patched = yield* patchedScale(type, base, parsed.value)
        const doc = jsonDecoder.decode(Buffer.from(JSON.stringify(patched)))
        const typed = Either.isRight(doc) ? typeCheck(ScaleType, doc.right) : Either.left(doc.left)
        if (Either.isLeft(typed))
          return yield* Effect.fail(
            newInvalid({ group: "", kind: "" }, "", [F.invalid("patch", JSON.stringify(patched), typed.left)])
          )
        return yield* applyScale(s, options.fieldManager, current, typed.right.object)
      })
    )
    return scaleResponse(s, stored)
  })
