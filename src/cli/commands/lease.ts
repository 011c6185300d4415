/**
 * `lease grant|revoke|timetolive|keep-alive|list`, as etcdctl 3.4 prints them. Lease ids are hex.
 */
import { Console, Effect, Stream } from "effect"
import type { ResponseHeader } from "../../client/index.js"
import type { keepAliveFlags, timetoliveFlags } from "../flags/client-flags.js"
import type { ParsedRun } from "../flags/parse.js"
import { usage, withClient } from "./global.js"
import { checked } from "./kv.js"
import { headerJson, json, leaseId, write } from "./output.js"
import { leaseIdArg, leaseTtl, TIMETOLIVE_ARGS, timetoliveArgs, UsageError, valuesOf } from "./usage.js"

/** etcdctl's lease JSON embeds the header: its fields come first, flat. */
const flatHeader = (h: ResponseHeader) => headerJson(h)

export const runGrant = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(leaseTtl(p), p)
  if (c instanceof UsageError) return usage(c)
  const { args: ttl, settings: s } = c
  return withClient(s, (client) =>
    Effect.map(client.lease.grant(ttl), (r) =>
      write(
        s.writeOut === "json"
          ? `${json({ ...flatHeader(r.header), ID: r.id, TTL: r.ttl, Error: "" })}\n`
          : `lease ${leaseId(r.id)} granted with TTL(${r.ttl}s)\n`
      )
    )
  )
}

export const runRevoke = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(leaseIdArg(p, "lease revoke command needs 1 argument"), p)
  if (c instanceof UsageError) return usage(c)
  const { args: lease, settings: s } = c
  return withClient(s, (client) =>
    client.lease.revoke(lease).pipe(
      Effect.mapError((e) => new Error(`failed to revoke lease (${e.message})`)),
      Effect.map((r) =>
        write(
          s.writeOut === "json" ? `${json({ header: headerJson(r.header) })}\n` : `lease ${leaseId(lease)} revoked\n`
        )
      )
    )
  )
}

export const runTimetolive = (p: ParsedRun): Effect.Effect<void> => {
  // etcdctl makes its client (checking -w) before it reads the id
  const c = checked(timetoliveArgs(p), p)
  if (c instanceof UsageError) return usage(c)
  const lease = leaseIdArg(p, TIMETOLIVE_ARGS)
  if (lease instanceof UsageError) return usage(lease)
  const s = c.settings
  const { keys } = valuesOf<typeof timetoliveFlags>(p)
  return withClient(s, (client) =>
    Effect.map(client.lease.timeToLive(lease, { keys }), (r) => {
      if (s.writeOut === "json") {
        return write(
          `${json({
            ...flatHeader(r.header),
            id: r.id,
            ttl: r.ttl,
            "granted-ttl": r.grantedTtl,
            keys: r.keys.length === 0 ? null : r.keys.map((k) => Buffer.from(k).toString("base64"))
          })}\n`
        )
      }
      if (r.ttl === -1n) return write(`lease ${leaseId(lease)} already expired\n`)
      const attached = keys ? `, attached keys([${r.keys.map((k) => Buffer.from(k).toString()).join(" ")}])` : ""
      write(`lease ${leaseId(lease)} granted with TTL(${r.grantedTtl}s), remaining(${r.ttl}s)${attached}\n`)
    })
  )
}

export const runKeepAlive = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(leaseIdArg(p, "lease keep-alive command needs lease ID as argument"), p)
  if (c instanceof UsageError) return usage(c)
  const { args: lease, settings: s } = c
  const print = (r: { header: ResponseHeader; id: bigint; ttl: bigint }) =>
    write(
      s.writeOut === "json"
        ? `${json({ ...flatHeader(r.header), ID: r.id, TTL: r.ttl })}\n`
        : `lease ${leaseId(r.id)} keepalived with TTL(${r.ttl})\n`
    )
  if (valuesOf<typeof keepAliveFlags>(p).once) {
    return withClient(s, (client) =>
      client.lease.keepAliveOnce(lease).pipe(
        Effect.mapError((e) => (e._tag === "LeaseLost" ? new Error("etcdserver: requested lease not found") : e)),
        Effect.map(print)
      )
    )
  }
  // Renews until interrupted; a lost lease ends it as etcdctl does.
  return withClient(
    s,
    (client) =>
      client.lease.keepAliveStream(lease).pipe(
        Stream.runForEach((r) => Effect.sync(() => print(r))),
        Effect.catchAll(() => Console.log(`lease ${leaseId(lease)} expired or revoked.`))
      ),
    { longRunning: true }
  )
}

export const runList = (p: ParsedRun): Effect.Effect<void> => {
  const c = checked(undefined, p)
  if (c instanceof UsageError) return usage(c)
  const s = c.settings
  return withClient(s, (client) =>
    Effect.map(client.lease.leases(), (r) =>
      write(
        s.writeOut === "json"
          ? `${json({ ...flatHeader(r.header), leases: r.ids.map((id) => ({ id })) })}\n`
          : `found ${r.ids.length} leases\n${r.ids.map((id) => `${leaseId(id)}\n`).join("")}`
      )
    )
  )
}
