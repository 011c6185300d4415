/**
 * The /openapi endpoints, with kube-openapi's handler behaviour (pkg/handler3, pkg/handler): an
 * `ETag` of the document's hash and 304 for a matching `If-None-Match`; on a group/version URL
 * with `?hash=`, a stale hash is a 301 to the current URL and a current one is cached for a year
 * (`Cache-Control: public, immutable`) — the URL changes when the document does. The Accept
 * clauses are tried by quality, then in order: v3 documents are JSON, /openapi/v2 is JSON or
 * gnostic's protobuf (what client-go asks for); nothing acceptable is a bare 406, as there.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect } from "effect"
import type { ResourceRegistry } from "../registry.js"
import { openApiV2, openApiV2Protobuf, openApiV3Document, openApiV3Index, type ServedDocument } from "./documents.js"

type Headers = HttpServerRequest.HttpServerRequest["headers"]

const JSON_TYPE = "application/json"
const V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
/** the media types each document is served in: Accept's type → the Content-Type answered */
const V3_TYPES: ReadonlyArray<[string, string]> = [[JSON_TYPE, JSON_TYPE]]
const V2_TYPES: ReadonlyArray<[string, string]> = [
  [JSON_TYPE, JSON_TYPE],
  ["application/com.github.proto-openapi.spec.v2@v1.0+protobuf", V2_PROTOBUF],
  [V2_PROTOBUF, V2_PROTOBUF]
]

/** The Content-Type to answer `accept` with, of `offered` (goautoneg's clause order), if any. */
const negotiate = (accept: string | undefined, offered: ReadonlyArray<[string, string]>): string | undefined => {
  const clauses = (accept === undefined || accept.trim() === "" ? "*/*" : accept)
    .split(",")
    .map((c, i) => {
      const [type, ...params] = c.split(";").map((p) => p.trim().toLowerCase())
      const q = params.find((p) => p.startsWith("q="))
      return { type: type!, q: q === undefined ? 1 : Number(q.slice(2)), i }
    })
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
  for (const { type } of clauses) {
    const [major, minor] = type.split("/")
    const match = offered.find(([t]) => {
      const [m, s] = t.split("/")
      return (major === m || major === "*") && (minor === s || minor === "*")
    })
    if (match !== undefined) return match[1]
  }
  return undefined
}

const notModified = (headers: Headers, etag: string): boolean =>
  (headers["if-none-match"] ?? "")
    .split(",")
    .map((t) => t.trim())
    .some((t) => t === etag || t === "*")

const respond = (
  doc: ServedDocument,
  contentType: string,
  headers: Headers,
  extra: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => {
  const etag = `"${doc.hash}"`
  const all = { etag, vary: "Accept", ...extra }
  if (notModified(headers, etag)) return HttpServerResponse.empty({ status: 304, headers: all })
  return typeof doc.body === "string"
    ? HttpServerResponse.text(doc.body, { contentType, headers: all })
    : HttpServerResponse.uint8Array(doc.body, { contentType, headers: all })
}

const notAcceptable = () => HttpServerResponse.empty({ status: 406, headers: { vary: "Accept" } })

/** A year from now, as an HTTP date (handler3's Expires of a hashed URL). */
const aYearFrom = (millis: number): string => {
  const d = new Date(millis)
  d.setUTCFullYear(d.getUTCFullYear() + 1)
  return d.toUTCString()
}

const v3Document = (registry: ResourceRegistry, gv: string, hash: string | null, headers: Headers) => {
  const doc = openApiV3Document(registry, gv)
  if (doc === undefined) return undefined
  const type = negotiate(headers["accept"], V3_TYPES)
  if (type === undefined) return Effect.succeed(notAcceptable())
  if (hash === null || hash === "") return Effect.succeed(respond(doc, type, headers))
  if (hash !== doc.hash)
    return Effect.succeed(
      HttpServerResponse.empty({ status: 301, headers: { location: `/openapi/v3/${gv}?hash=${doc.hash}` } })
    )
  return Effect.map(Clock.currentTimeMillis, (now) =>
    respond(doc, type, headers, { "cache-control": "public, immutable", expires: aYearFrom(now) })
  )
}

/** The answer to /openapi/…, or undefined for a path that is not one of its documents. */
export const serveOpenApi = (
  registry: ResourceRegistry,
  path: string,
  query: URLSearchParams,
  headers: Headers
): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
  const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  if (p === "/openapi/v3") return Effect.sync(() => respond(openApiV3Index(registry), JSON_TYPE, headers))
  if (p === "/openapi/v2")
    return Effect.sync(() => {
      const type = negotiate(headers["accept"], V2_TYPES)
      if (type === undefined) return notAcceptable()
      return respond(type === JSON_TYPE ? openApiV2(registry) : openApiV2Protobuf(registry), type, headers)
    })
  if (p.startsWith("/openapi/v3/"))
    return v3Document(registry, p.slice("/openapi/v3/".length), query.get("hash"), headers)
  return undefined
}
