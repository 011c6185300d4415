/**
 * An object or a list as the request asked for it (negotiation.ts): JSON or YAML of the URL's
 * version, a Table, or PartialObjectMetadata(List). JSON list bodies reuse each item's cached
 * JSON (watch-encoder.ts), so a list served from the watch cache stringifies only objects that
 * changed since they were last sent. A Status (a delete's answer) goes out as it is. Protobuf
 * (negotiated only for kinds with a message) works the same way: an object's bytes are encoded
 * once, and a list is its items' cached messages behind one ListMeta.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either } from "effect"
import type { KubeList, KubeObject } from "../../api/object-meta.js"
import type { NotAcceptable } from "../../api/status.js"
import { asListRepresentation, asObjectRepresentation, jsonToYaml, YAML_TYPE } from "../negotiation.js"
import { encodeProtobuf, encodeProtobufList } from "../../api/protobuf/envelope.js"
import { json, protobuf } from "../response.js"
import { includeObjectOf, tableOf } from "../table.js"
import { asVersion, jsonOf, protobufMessageOf, protobufOf } from "../watch-encoder.js"
import type { RequestScope } from "./scope.js"
import * as Response from "@effect/platform/HttpServerResponse"

/** A body in the negotiated media type (JSON text in, JSON or YAML out). */
export const body = (s: RequestScope, jsonText: string, status = 200): HttpServerResponse.HttpServerResponse =>
  s.output.yaml ? Response.text(jsonToYaml(jsonText), { status, contentType: YAML_TYPE }) : json(jsonText, status)

/** An object read from storage as the request's version has it (a CRD's pruning and defaults applied). */
const served = (s: RequestScope, obj: KubeObject): KubeObject =>
  s.info.readAs === undefined ? obj : s.info.readAs(obj, s.version)

export const objectResponse = (
  s: RequestScope,
  stored: KubeObject,
  status = 200
): Effect.Effect<HttpServerResponse.HttpServerResponse, NotAcceptable> => {
  const obj = served(s, stored)
  const o = asVersion(obj, s.apiVersion)
  if (s.output.as === "Table") {
    const t = tableOf(
      s.info,
      [o],
      { resourceVersion: o.metadata.resourceVersion ?? "" },
      includeObjectOf(s.url.searchParams),
      s.version
    )
    return Effect.succeed(body(s, JSON.stringify(t), status))
  }
  const r = asObjectRepresentation(s.info, s.output, o)
  if (Either.isLeft(r)) return Effect.fail(r.left)
  if (s.output.protobuf)
    return Effect.succeed(protobuf(r.right === obj ? protobufOf(obj) : encodeProtobuf(r.right), status))
  return Effect.succeed(body(s, r.right === obj ? jsonOf(obj) : JSON.stringify(r.right), status))
}

/** A Status answer (a removal): never converted. */
export const statusObjectResponse = (s: RequestScope, status: object): HttpServerResponse.HttpServerResponse =>
  s.output.protobuf ? protobuf(encodeProtobuf(status)) : body(s, JSON.stringify(status))

export const listResponse = (
  s: RequestScope,
  stored: KubeList
): Effect.Effect<HttpServerResponse.HttpServerResponse, NotAcceptable> => {
  const list = s.info.readAs === undefined ? stored : { ...stored, items: stored.items.map((i) => served(s, i)) }
  if (s.output.as === "Table") {
    const t = tableOf(
      s.info,
      list.items.map((i) => asVersion(i, s.apiVersion)),
      list.metadata,
      includeObjectOf(s.url.searchParams),
      s.version
    )
    return Effect.succeed(body(s, JSON.stringify(t)))
  }
  const converted = asListRepresentation(s.info, s.output, list)
  if (Either.isLeft(converted)) return Effect.fail(converted.left)
  if (converted.right !== undefined)
    return Effect.succeed(
      s.output.protobuf ? protobuf(encodeProtobuf(converted.right)) : body(s, JSON.stringify(converted.right))
    )
  if (s.output.protobuf) return Effect.succeed(protobuf(protobufListOf(s, list)))
  const items = list.items.map((i) =>
    i.apiVersion === s.apiVersion ? jsonOf(i) : JSON.stringify(asVersion(i, s.apiVersion))
  )
  const meta: Record<string, unknown> = { resourceVersion: list.metadata.resourceVersion ?? "" }
  if (list.metadata.continue !== undefined && list.metadata.continue !== "") meta["continue"] = list.metadata.continue
  if (list.metadata.remainingItemCount !== undefined) meta["remainingItemCount"] = list.metadata.remainingItemCount
  return Effect.succeed(
    body(
      s,
      `{"kind":${JSON.stringify(s.info.listKind)},"apiVersion":${JSON.stringify(s.apiVersion)},"metadata":${JSON.stringify(meta)},"items":[${items.join(",")}]}`
    )
  )
}

/** A list in protobuf: each item's message once per object (converted items: fresh). */
const protobufListOf = (s: RequestScope, list: KubeList): Uint8Array => {
  const items = list.items.map((i) =>
    i.apiVersion === s.apiVersion ? protobufMessageOf(i) : protobufMessageOf(asVersion(i, s.apiVersion))
  )
  const meta: Record<string, unknown> = { resourceVersion: list.metadata.resourceVersion ?? "" }
  if (list.metadata.continue !== undefined && list.metadata.continue !== "") meta["continue"] = list.metadata.continue
  if (list.metadata.remainingItemCount !== undefined) meta["remainingItemCount"] = list.metadata.remainingItemCount
  return encodeProtobufList(s.apiVersion, s.info.listKind, meta, items)
}
