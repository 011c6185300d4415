/**
 * What `watch` prints per response (etcdctl's printer for watch): shared by the full
 * program (watch.ts) and the lean path (src/cli/lean/watch.ts).
 */
import type { WatchResponse } from "../../client/index.js"
import { eventJson, eventLines, headerJson, json, type PrintOptions, write } from "./output.js"

/** clientv3.WatchResponse through encoding/json: Go field names, no tags. */
export const responseJson = (r: WatchResponse, extra: { compactRevision?: bigint; canceled?: boolean } = {}) =>
  json({
    Header: headerJson(r.header),
    Events: r.events.map(eventJson),
    CompactRevision: extra.compactRevision ?? 0,
    Canceled: extra.canceled ?? false,
    Created: r.created
  })

export const printResponse =
  (o: PrintOptions) =>
  (r: WatchResponse): void => {
    if (o.writeOut === "json") return write(`${responseJson(r)}\n`)
    let out = r.progressNotify ? `progress notify: ${r.header.revision}\n` : ""
    for (const e of r.events) out += eventLines(e, o.hex)
    write(out)
  }
