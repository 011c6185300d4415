/**
 * The /openapi endpoints, with kube-openapi's handler behaviour (pkg/handler3, pkg/handler): an
 * `ETag` of the document's hash and 304 for a matching `If-None-Match`; on a group/version URL
 * with `?hash=`, a stale hash is a 301 to the current URL and a current one is cached for a year
 * (`Cache-Control: public, immutable`) — the URL changes when the document does. Documents are
 * JSON only: an Accept that allows neither JSON nor any type (client-go asks /openapi/v2 for
 * gnostic's protobuf only) is the 406 the apiserver gives a type it cannot produce.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect } from "effect"
import type { ResourceRegistry } from "../registry.js"
import { openApiV2, openApiV3Document, openApiV3Index, type ServedDocument } from "./documents.js"

const JSON_TYPES = new Set(["application/json", "application/*", "*/*"])

/** Whether `accept` allows JSON (no header allows anything). */
const acceptsJson = (accept: string | undefined): boolean =>
  accept === undefined ||
  accept.trim() === "" ||
  accept.split(",").some((clause) => JSON_TYPES.has(clause.split(";")[0]!.trim().toLowerCase()))

const etagOf = (doc: ServedDocument) => `"${doc.hash}"`

const notModified = (headers: HttpServerRequest.HttpServerRequest["headers"], etag: string): boolean =>
  (headers["if-none-match"] ?? "")
    .split(",")
    .map((t) => t.trim())
    .some((t) => t === etag || t === "*")

const respond = (
  doc: ServedDocument,
  headers: HttpServerRequest.HttpServerRequest["headers"],
  extra: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => {
  const etag = etagOf(doc)
  const all = { etag, vary: "Accept", ...extra }
  if (notModified(headers, etag)) return HttpServerResponse.empty({ status: 304, headers: all })
  return HttpServerResponse.text(doc.json, { contentType: "application/json", headers: all })
}

/** A year from now, as an HTTP date (handler3's Expires of a hashed URL). */
const aYearFrom = (millis: number): string => {
  const d = new Date(millis)
  d.setUTCFullYear(d.getUTCFullYear() + 1)
  return d.toUTCString()
}

/** The answer to /openapi/…, or undefined for a path that is not one of its documents. */
export const serveOpenApi = (
  registry: ResourceRegistry,
  path: string,
  query: URLSearchParams,
  headers: HttpServerRequest.HttpServerRequest["headers"]
): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
  const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  if (p === "/openapi/v3") return Effect.sync(() => respond(openApiV3Index(registry), headers))
  if (p === "/openapi/v2")
    return Effect.sync(() =>
      acceptsJson(headers["accept"]) ? respond(openApiV2(registry), headers) : HttpServerResponse.empty({ status: 406 })
    )
  if (!p.startsWith("/openapi/v3/")) return undefined
  const gv = p.slice("/openapi/v3/".length)
  const doc = openApiV3Document(registry, gv)
  if (doc === undefined) return undefined
  if (!acceptsJson(headers["accept"])) return Effect.succeed(HttpServerResponse.empty({ status: 406 }))
  const hash = query.get("hash")
  if (hash === null || hash === "") return Effect.succeed(respond(doc, headers))
  if (hash !== doc.hash)
    return Effect.succeed(
      HttpServerResponse.empty({ status: 301, headers: { location: `/openapi/v3/${gv}?hash=${doc.hash}` } })
    )
  return Effect.map(Clock.currentTimeMillis, (now) =>
    respond(doc, headers, { "cache-control": "public, immutable", expires: aYearFrom(now) })
  )
}
