/**
 * endpoints/handlers/delete.go: DELETE of one object and deletecollection. DeleteOptions come
 * from the body, or from the query when the body is empty (dryRun, preconditions,
 * propagationPolicy; gracePeriodSeconds is validated and has no effect: no kind served here
 * deletes gracefully). An object removed at once answers with a Status (namespaces: the object);
 * one kept for its finalizers with the object, marked with deletionTimestamp.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import type { KubeObject } from "../../api/object-meta.js"
import type { StatusError } from "../../api/status.js"
import { readBody } from "../body.js"
import { mediaTypeOf } from "../write/decode.js"
import { listQuery } from "../query.js"
import { deleteNamespace } from "../write/namespace-delete.js"
import { deleteOptions, type DeleteOptions } from "../write/options.js"
import type { WriteContext } from "../write/pipeline.js"
import { deleteCollection as storeDeleteCollection, deleteObject, type DeleteResult } from "../write/store.js"
import { predicateOf } from "./list.js"
import { listResponse, objectResponse, statusObjectResponse } from "./output.js"
import { listKey, type RequestScope, writeContext } from "./scope.js"

const isNamespaces = (s: { info: { group: string; plural: string } }) =>
  s.info.group === "" && s.info.plural === "namespaces"

/** finalizeDelete: the Status of a removal (details.kind is the resource), unless the store returns the object. */
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

/** The registry's Delete for one object of the resource (namespaces have their own). */
export const deleteVia = (
  ctx: WriteContext,
  name: string,
  o: DeleteOptions,
  namespace?: string
): Effect.Effect<DeleteResult, StatusError> =>
  ctx.info.group === "" && ctx.info.plural === "namespaces"
    ? deleteNamespace(ctx, name, o)
    : deleteObject(ctx, name, o, namespace ?? ctx.namespace)

export const deleteOne = (
  s: RequestScope,
  name: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const options = yield* deleteOptions(
      yield* readBody(s.request),
      s.url.searchParams,
      mediaTypeOf(s.request.headers["content-type"])
    )
    const ctx = writeContext(s, options.dryRun)
    const r = yield* deleteVia(ctx, name, options)
    if (r.deleted && !ctx.strategy.returnDeletedObject && !isNamespaces(s))
      return statusObjectResponse(s, successStatus(s, r.object))
    // 202 only for the deprecated orphanDependents=false on a deletion that is not done yet
    return yield* objectResponse(s, r.object, !r.deleted && options.orphanDependents === false ? 202 : 200)
  })

export const deleteCollection = (s: RequestScope): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const q = yield* listQuery(s.url.searchParams, false)
    const predicate = yield* predicateOf(s, q)
    const options = yield* deleteOptions(
      yield* readBody(s.request),
      s.url.searchParams,
      mediaTypeOf(s.request.headers["content-type"])
    )
    const ctx = writeContext(s, options.dryRun)
    const list = yield* storeDeleteCollection(ctx, listKey(s), predicate, q.resourceVersion, (item) =>
      deleteVia(ctx, item.metadata.name!, options, item.metadata.namespace)
    )
    return yield* listResponse(s, list)
  })
