/**
 * A span per resource request when tracing is on, as kube-apiserver's handlers start one
 * (endpoints/handlers: `tracing.Start(ctx, "Create", …)`): named by the verb, kind server, the
 * child of the request's W3C `traceparent`, with the resource's coordinates as attributes. The
 * etcd client's spans of the request (`etcdserverpb.KV/Txn`, …) are its children.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import { Effect, Option } from "effect"
import type { ResourceRequest } from "./request-info.js"

const names: Record<ResourceRequest["verb"], string> = {
  get: "Get",
  list: "List",
  watch: "Watch",
  create: "Create",
  update: "Update",
  patch: "Patch",
  delete: "Delete",
  deletecollection: "DeleteCollection"
}

/** `self` in the verb's span. */
export const withVerbSpan = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  req: HttpServerRequest.HttpServerRequest,
  r: ResourceRequest
): Effect.Effect<A, E, R> =>
  Effect.withSpan(self, names[r.verb] ?? r.verb, {
    kind: "server",
    captureStackTrace: false,
    parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(req.headers)),
    attributes: {
      "k8s.verb": r.verb,
      "k8s.group": r.group,
      "k8s.version": r.version,
      "k8s.resource": r.resource,
      ...(r.subresource === undefined ? {} : { "k8s.subresource": r.subresource }),
      ...(r.namespace === undefined ? {} : { "k8s.namespace": r.namespace }),
      ...(r.name === undefined ? {} : { "k8s.name": r.name }),
      "url.path": req.url
    }
  })
