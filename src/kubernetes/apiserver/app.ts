/**
 * The HTTP handler chain (the apiserver's handler chain minus authn/authz): request info from the
 * URL, discovery and health for non-resource paths, the verb handlers for resources, every error
 * as a Status (a defect as a 500 Status, never a dropped connection), and apiserver_request_total
 * / apiserver_longrunning_requests for each request.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect } from "effect"
import { hasMessage } from "../api/protobuf/messages.js"
import { MethodNotAllowed, newInternalError, type StatusError } from "../api/status.js"
import { reviewResourceOf, serveReview } from "./authorization/access-review.js"
import { apiGroupList, apiGroupOf, apiResourceList, apiVersions, versionInfo } from "./discovery.js"
import { create } from "./handlers/create.js"
import { deleteCollection, deleteOne } from "./handlers/delete.js"
import { get } from "./handlers/get.js"
import { list } from "./handlers/list.js"
import { patch } from "./handlers/patch.js"
import { getScale, patchScale, updateScale } from "./handlers/scale.js"
import { makeScope, type RequestScope } from "./handlers/scope.js"
import { update } from "./handlers/update.js"
import { watch } from "./handlers/watch.js"
import type { ApiMetrics, Cell, RequestLabels } from "./metrics.js"
import { errorMedia, negotiateOutput } from "./negotiation.js"
import { serveOpenApi } from "./openapi/handler.js"
import { listQuery } from "./query.js"
import type { ResourceRegistry } from "./registry.js"
import { requestInfo, type ResourceRequest } from "./request-info.js"
import { apiVersionOf, type ResourceInfo, verbsOf } from "./resources.js"
import { json, notFoundResource, statusResponse } from "./response.js"
import type { NamespaceLifecycle } from "./write/admission.js"
import { withVerbSpan } from "./verb-span.js"
import { Warnings } from "./write/warnings.js"
import type { ShutdownSignal } from "./graceful-shutdown.js"

export interface AppContext {
  readonly registry: ResourceRegistry
  readonly metrics: ApiMetrics
  /** host:port clients reach this server at (APIVersions.serverAddressByClientCIDRs) */
  readonly serverAddress: () => string
  /** /readyz: etcd answers */
  readonly ready: Effect.Effect<boolean>
  /** the NamespaceLifecycle admission plugin's state */
  readonly lifecycle: NamespaceLifecycle
  /** the apiserver's shutdown: /readyz fails and watches end once it begins */
  readonly shutdown: ShutdownSignal
  /** a span per verb (verb-span.ts); off: none is made */
  readonly tracing?: boolean | undefined
}

const TEXT = "text/plain; charset=utf-8"
const ok = HttpServerResponse.text("ok", { contentType: TEXT, headers: { "x-content-type-options": "nosniff" } })

const nonResource = (ctx: AppContext, path: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  const parts = p.split("/").filter((x) => x !== "")
  switch (p) {
    case "/":
      return Effect.succeed(
        json({
          paths: [
            "/api",
            "/api/v1",
            "/apis",
            ...apiGroupList(ctx.registry).groups.flatMap((g) => [
              `/apis/${g.name}`,
              ...g.versions.map((v) => `/apis/${v.groupVersion}`)
            ]),
            "/healthz",
            "/livez",
            "/metrics",
            "/readyz",
            "/version"
          ]
        })
      )
    case "/api":
      return Effect.succeed(json(apiVersions(ctx.serverAddress())))
    case "/apis":
      return Effect.succeed(json(apiGroupList(ctx.registry)))
    case "/version":
      return Effect.succeed(json(versionInfo()))
    case "/healthz":
    case "/livez":
      return Effect.succeed(ok)
    case "/readyz":
      if (ctx.shutdown.isInitiated())
        return Effect.succeed(
          HttpServerResponse.text("[-]shutdown failed: reason withheld\nreadyz check failed", {
            status: 500,
            contentType: TEXT
          })
        )
      return Effect.map(ctx.ready, (r) =>
        r
          ? ok
          : HttpServerResponse.text("[-]etcd failed: reason withheld\nreadyz check failed", {
              status: 500,
              contentType: TEXT
            })
      )
    case "/metrics":
      return Effect.sync(() =>
        HttpServerResponse.text(ctx.metrics.text(), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
      )
  }
  if (parts[0] === "api" && parts.length === 2) {
    const l = apiResourceList(ctx.registry, "", parts[1]!)
    if (l !== undefined) return Effect.succeed(json(l))
  }
  if (parts[0] === "apis" && parts.length === 2) {
    const g = apiGroupOf(ctx.registry, parts[1]!)
    if (g !== undefined) return Effect.succeed(json(g))
  }
  if (parts[0] === "apis" && parts.length === 3) {
    const l = apiResourceList(ctx.registry, parts[1]!, parts[2]!)
    if (l !== undefined) return Effect.succeed(json(l))
  }
  return Effect.succeed(statusResponse(notFoundResource()))
}

const scopeLabel = (r: ResourceRequest, namespaced: boolean): string =>
  r.name !== undefined ? "resource" : namespaced && r.namespace !== undefined ? "namespace" : "cluster"

const dispatch = (s: RequestScope, r: ResourceRequest, longrunning: () => Cell, shutdown: ShutdownSignal) =>
  Effect.gen(function* () {
    if (r.subresource === "scale" && s.info.scale !== undefined) {
      if (r.verb === "get") return yield* getScale(s, r.name!)
      if (r.verb === "update") return yield* updateScale(s, r.name!)
      return yield* patchScale(s, r.name!)
    }
    switch (r.verb) {
      case "get":
        return yield* get(s, r.name!)
      case "list":
        return yield* list(s, yield* listQuery(s.url.searchParams, false))
      case "watch":
        return yield* watch(s, yield* listQuery(s.url.searchParams, true), longrunning(), shutdown.initiated)
      case "create":
        return yield* create(s)
      case "update":
        return yield* update(s, r.name!)
      case "patch":
        return yield* patch(s, r.name!)
      case "delete":
        return yield* deleteOne(s, r.name!)
      case "deletecollection":
        return yield* deleteCollection(s)
    }
  })

const methodNotAllowed = () =>
  new MethodNotAllowed({ message: "the server does not allow this method on the requested resource", details: {} })

/** The verbs the route of a collection, an object or a subresource takes (go-restful: 405 for the others). */
const allowed = (r: ResourceRequest, info: ResourceInfo): boolean => {
  if (r.verb === "deletecollection" && !verbsOf(info).includes("deletecollection")) return false
  if (r.subresource !== undefined) {
    if (r.subresource === "finalize") return r.verb === "update"
    return r.verb === "get" || r.verb === "update" || r.verb === "patch"
  }
  if (r.name === undefined) return r.verb !== "update" && r.verb !== "patch" && r.verb !== "delete"
  return r.verb !== "create"
}

const resource = (
  ctx: AppContext,
  req: HttpServerRequest.HttpServerRequest,
  url: URL,
  r: ResourceRequest,
  warnings: Warnings
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const served = ctx.registry.lookup(r.group, r.version, r.resource)
    if (served === undefined) {
      const review = reviewResourceOf(r)
      if (review !== undefined) return yield* serveReview(review, r, req)
      return yield* Effect.fail(notFoundResource())
    }
    const info = served.info
    if (r.subresource !== undefined && (r.name === undefined || info.subresources[r.subresource] === undefined))
      return yield* Effect.fail(notFoundResource())
    // a namespaced object needs its namespace; a create needs a namespace (or a cluster-scoped resource)
    if (info.namespaced && r.namespace === undefined && (r.name !== undefined || r.verb === "create")) {
      return yield* Effect.fail(notFoundResource())
    }
    if (!info.namespaced && r.namespace !== undefined && !(info.group === "" && info.plural === "namespaces")) {
      return yield* Effect.fail(notFoundResource())
    }
    if (!allowed(r, info)) return yield* Effect.fail(methodNotAllowed())
    const output = yield* negotiateOutput(
      req.headers["accept"],
      r.verb === "watch",
      !info.custom && hasMessage(apiVersionOf(info.group, r.version), info.kind)
    )
    const labels: RequestLabels = {
      verb: metricVerb(r.verb),
      group: r.group,
      version: r.version,
      resource: r.resource,
      subresource: r.subresource ?? "",
      scope: scopeLabel(r, info.namespaced)
    }
    const dryRun = url.searchParams.getAll("dryRun").length > 0 ? "All" : ""
    const s = makeScope(served, r.version, r.namespace, r.name, {
      url,
      request: req,
      output,
      subresource: r.subresource,
      metrics: ctx.metrics,
      registry: ctx.registry,
      lifecycle: ctx.lifecycle,
      warnings
    })
    const handled = dispatch(s, r, () => ctx.metrics.longrunningCell(labels), ctx.shutdown)
    const res = yield* (ctx.tracing === true ? withVerbSpan(handled, req, r) : handled).pipe(
      Effect.tapError((e) => Effect.sync(() => ctx.metrics.request(labels, statusOf(e), dryRun)))
    )
    ctx.metrics.request(labels, res.status, dryRun)
    return res
  })

/** The answer with the request's Warning headers. */
const withWarnings = (res: HttpServerResponse.HttpServerResponse, warnings: Warnings) =>
  warnings.size === 0 ? res : HttpServerResponse.setHeader(res, "warning", warnings.headers().join(", "))

/** The verb label: the HTTP method, or LIST / WATCH / DELETECOLLECTION for those request verbs. */
const metricVerb = (v: ResourceRequest["verb"]): string => {
  switch (v) {
    case "create":
      return "POST"
    case "update":
      return "PUT"
    default:
      return v.toUpperCase()
  }
}

const statusOf = (e: StatusError): number => statusResponse(e).status

/** The apiserver as an HttpApp. */
export const makeApp = (
  ctx: AppContext
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const req = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(req.url, "http://localhost")
    const info = requestInfo(req.method, url)
    if (info._tag === "BadMethod") {
      return statusResponse(
        new MethodNotAllowed({ message: `the server does not allow this method on the requested resource` })
      )
    }
    if (info._tag === "NonResource")
      return yield* serveOpenApi(ctx.registry, info.path, url.searchParams, req.headers) ?? nonResource(ctx, info.path)
    const warnings = new Warnings()
    const res = yield* resource(ctx, req, url, info, warnings).pipe(
      Effect.catchAll((e) => Effect.succeed(statusResponse(e, errorMedia(req.headers["accept"]))))
    )
    return withWarnings(res, warnings)
  }).pipe(
    // the platform runs apps uninterruptibly: timeouts inside (the cache's 3 s freshness wait) and
    // client disconnects must be able to interrupt the handler
    Effect.interruptible,
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.zipRight(
            Effect.logError("apiserver: request failed", cause),
            Effect.succeed(
              statusResponse(
                newInternalError(
                  Cause.squash(cause) instanceof Error
                    ? (Cause.squash(cause) as Error).message
                    : String(Cause.squash(cause))
                )
              )
            )
          )
    )
  )
