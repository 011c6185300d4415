/**
 * `endpoint status`: Maintenance.Status of each endpoint, one client per endpoint (as etcdctl).
 */
import { Effect } from "effect"
import type { StatusResult } from "../../client/index.js"
import type { ParsedRun } from "../flags/parse.js"
import { usage, withClient } from "./global.js"
import { checked } from "./kv.js"
import { UsageError } from "./usage.js"
import { headerJson, humanBytes, json, write } from "./output.js"

const statusJson = (s: StatusResult) => {
  const out: Record<string, unknown> = {
    header: headerJson(s.header),
    version: s.version,
    dbSize: s.dbSize,
    leader: s.leader,
    raftIndex: s.raftIndex,
    raftTerm: s.raftTerm,
    raftAppliedIndex: s.raftAppliedIndex
  }
  if (s.errors.length > 0) out["errors"] = s.errors
  out["dbSizeInUse"] = s.dbSizeInUse
  if (s.isLearner) out["isLearner"] = true
  return out
}

const statusLine = (endpoint: string, s: StatusResult) =>
  [
    endpoint,
    s.header.memberId.toString(16),
    s.version,
    humanBytes(s.dbSize),
    String(s.leader === s.header.memberId),
    String(s.isLearner),
    String(s.raftTerm),
    String(s.raftIndex),
    String(s.raftAppliedIndex),
    s.errors.join(", ")
  ].join(", ")

export const runEndpointStatus = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(undefined, p)
  if (c instanceof UsageError) return usage(c)
  const o = c.settings
  const results: Array<{ Endpoint: string; Status: Record<string, unknown> }> = []
  return Effect.forEach(o.endpoints, (endpoint) =>
    withClient({ ...o, endpoints: [endpoint] }, (client) =>
      Effect.map(client.maintenance.status(), (s) => {
        if (o.writeOut === "json") results.push({ Endpoint: endpoint, Status: statusJson(s) })
        else write(`${statusLine(endpoint, s)}\n`)
      })
    )
  ).pipe(
    Effect.zipRight(
      Effect.sync(() => {
        if (o.writeOut === "json") write(`${json(results)}\n`)
      })
    )
  )
}
