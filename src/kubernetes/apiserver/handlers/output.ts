/**
 * An object or a list as the request asked for it: JSON of the URL's version, or a Table. List
 * bodies reuse each item's cached JSON (watch-encoder.ts), so a list served from the watch cache
 * stringifies only objects that changed since they were last sent.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { KubeList, KubeObject } from "../../api/object-meta.js"
import { json } from "../response.js"
import { includeObjectOf, tableOf } from "../table.js"
import { asVersion, jsonOf } from "../watch-encoder.js"
import type { RequestScope } from "./scope.js"

export const objectResponse = (
  s: RequestScope,
  obj: KubeObject,
  status = 200
): HttpServerResponse.HttpServerResponse => {
  const o = asVersion(obj, s.apiVersion)
  if (s.table) {
    return json(
      tableOf(s.info, [o], { resourceVersion: o.metadata.resourceVersion ?? "" }, includeObjectOf(s.url.searchParams)),
      status
    )
  }
  return json(o === obj ? jsonOf(obj) : JSON.stringify(o), status)
}

export const listResponse = (s: RequestScope, list: KubeList): HttpServerResponse.HttpServerResponse => {
  if (s.table) {
    return json(
      tableOf(
        s.info,
        list.items.map((i) => asVersion(i, s.apiVersion)),
        list.metadata,
        includeObjectOf(s.url.searchParams)
      )
    )
  }
  const items = list.items.map((i) =>
    i.apiVersion === s.apiVersion ? jsonOf(i) : JSON.stringify(asVersion(i, s.apiVersion))
  )
  const meta: Record<string, unknown> = { resourceVersion: list.metadata.resourceVersion ?? "" }
  if (list.metadata.continue !== undefined && list.metadata.continue !== "") meta["continue"] = list.metadata.continue
  if (list.metadata.remainingItemCount !== undefined) meta["remainingItemCount"] = list.metadata.remainingItemCount
  return json(
    `{"kind":${JSON.stringify(s.info.listKind)},"apiVersion":${JSON.stringify(s.apiVersion)},"metadata":${JSON.stringify(meta)},"items":[${items.join(
      ","
    )}]}`
  )
}
