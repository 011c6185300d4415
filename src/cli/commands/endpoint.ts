/**
 * `endpoint status`: Maintenance.Status of each endpoint, one client per endpoint (as etcdctl).
 */
import { Command } from "@effect/cli"
import { Effect } from "effect"
import type { StatusResult } from "../../client/index.js"
import { globalOptions, type GlobalOptions, withClient } from "./global.js"
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

const status = Command.make("status", { ...globalOptions }, (o: GlobalOptions) => {
  const endpoints = o.endpoints
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "")
  const results: Array<{ Endpoint: string; Status: Record<string, unknown> }> = []
  return Effect.forEach(endpoints, (endpoint) =>
    withClient({ ...o, endpoints: endpoint }, (c) =>
      Effect.map(c.maintenance.status(), (s) => {
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
}).pipe(Command.withDescription("Prints out the status of endpoints specified in `--endpoints` flag"))

export const endpoint = Command.make("endpoint").pipe(
  Command.withDescription("Endpoint related commands"),
  Command.withSubcommands([status])
)
