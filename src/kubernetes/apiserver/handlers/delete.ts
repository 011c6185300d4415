/**
 * endpoints/handlers/delete.go: DELETE of one object (DeleteOptions in the body or the query:
 * preconditions on uid/resourceVersion, propagationPolicy accepted and validated, grace period
 * ignored: deletion is immediate) and deletecollection (a list through the selectors, then each
 * item deleted with its uid as precondition). Deleting a namespace deletes what is in it.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { KubeObject } from "../../api/object-meta.js"
import { type FieldError, isStatusError, newInvalid, type StatusError } from "../../api/status.js"
import type { Preconditions } from "../../storage/interfaces.js"
import { parseJson, readBody } from "../body.js"
import { listQuery } from "../query.js"
import { keyOf } from "../resources.js"
import { json } from "../response.js"
import { predicateOf } from "./list.js"
import { listResponse, objectResponse } from "./output.js"
import { listKey, objectKey, type RequestScope } from "./scope.js"

interface DeleteOptions {
  readonly preconditions: Preconditions | undefined
  readonly propagationPolicy: string | undefined
}

const POLICIES = ["Foreground", "Background", "Orphan"]

/** DeleteOptions from the body (JSON) and the query (propagationPolicy, gracePeriodSeconds). */
const deleteOptions = (s: RequestScope): Effect.Effect<DeleteOptions, StatusError> =>
  Effect.gen(function* () {
    const bytes = yield* readBody(s.request)
    let body: Record<string, unknown> = {}
    if (bytes.length > 0) {
      const u = yield* parseJson(bytes)
      if (typeof u === "object" && u !== null && !Array.isArray(u)) body = u as Record<string, unknown>
    }
    const pre = body["preconditions"] as { uid?: unknown; resourceVersion?: unknown } | undefined
    const policy =
      (typeof body["propagationPolicy"] === "string" ? body["propagationPolicy"] : undefined) ??
      s.url.searchParams.get("propagationPolicy") ??
      undefined
    const errs: Array<FieldError> = []
    if (policy !== undefined && !POLICIES.includes(policy)) {
      errs.push({
        type: "FieldValueNotSupported",
        field: "propagationPolicy",
        message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"`
      })
    }
    if (body["orphanDependents"] !== undefined && body["orphanDependents"] !== null && policy !== undefined) {
      errs.push({
        type: "FieldValueInvalid",
        field: "propagationPolicy",
        message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`
      })
    }
    if (errs.length > 0)
      return yield* Effect.fail(newInvalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", errs))
    const preconditions =
      pre === undefined || pre === null
        ? undefined
        : {
            uid: typeof pre.uid === "string" ? pre.uid : undefined,
            resourceVersion: typeof pre.resourceVersion === "string" ? pre.resourceVersion : undefined
          }
    return { preconditions, propagationPolicy: policy }
  })

/** The Status of a successful deletion (what the generic registry returns for most resources). */
const successStatus = (s: RequestScope, obj: KubeObject) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  details: {
    name: obj.metadata.name,
    ...(s.info.group === "" ? {} : { group: s.info.group }),
    kind: s.info.plural,
    uid: obj.metadata.uid
  }
})

/** A namespace's contents go with it (the namespace controller's job, done inline). */
const deleteNamespaceContents = (s: RequestScope, namespace: string): Effect.Effect<void, StatusError> =>
  Effect.forEach(
    s.registry.all().filter((r) => r.info.namespaced),
    (r) =>
      Effect.flatMap(r.storage.getList(keyOf(r.info, namespace), { recursive: true }), (list) =>
        Effect.forEach(
          list.items,
          (item) =>
            r.storage.delete(keyOf(r.info, namespace, item.metadata.name!)).pipe(
              Effect.catchIf(
                (e) => isStatusError(e) && e._tag === "NotFound",
                () => Effect.void
              )
            ),
          { discard: true }
        )
      ),
    { discard: true }
  )

export const deleteOne = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const options = yield* deleteOptions(s)
    const isNamespace = s.info.group === "" && s.info.plural === "namespaces"
    if (isNamespace) {
      // the namespace must exist (404 before touching anything)
      yield* s.served.storage.get(objectKey(s, name))
      yield* deleteNamespaceContents(s, name)
    }
    const deleted = yield* s.served.storage.delete(objectKey(s, name), { preconditions: options.preconditions })
    return isNamespace ? objectResponse(s, deleted) : json(successStatus(s, deleted))
  })

export const deleteCollection = (s: RequestScope): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    yield* deleteOptions(s)
    const q = yield* listQuery(s.url.searchParams, false)
    const predicate = yield* predicateOf(s, q)
    const list = yield* s.served.storage.getList(listKey(s), {
      predicate: { ...predicate, limit: 0, continue: "" },
      recursive: true
    })
    const deleted: Array<KubeObject> = []
    for (const item of list.items) {
      const d = yield* s.served.storage
        .delete(keyOf(s.info, item.metadata.namespace, item.metadata.name!), {
          preconditions: { uid: item.metadata.uid }
        })
        .pipe(
          Effect.catchIf(
            (e) => e._tag === "NotFound" || e._tag === "Conflict",
            () => Effect.succeed(undefined)
          )
        )
      if (d !== undefined) deleted.push(d)
    }
    return listResponse(s, { metadata: { resourceVersion: list.metadata.resourceVersion ?? "" }, items: deleted })
  })
