/**
 * `lease grant|revoke|timetolive|keep-alive|list`, as etcdctl 3.4 prints them. Lease ids are hex.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Stream } from "effect"
import type { ResponseHeader } from "../../client/index.js"
import { globalOptions, usage, withClient } from "./global.js"
import { headerJson, json, leaseId, parseLeaseId, write } from "./output.js"

const id = Args.text({ name: "leaseID" })
const badId = (text: string) =>
  usage(`bad lease ID arg (strconv.ParseInt: parsing "${text}": invalid syntax), expecting ID in Hex`)
/** etcdctl's lease JSON embeds the header: its fields come first, flat. */
const flatHeader = (h: ResponseHeader) => headerJson(h)

const grant = Command.make("grant", { ...globalOptions, ttl: Args.text({ name: "ttl" }) }, (o) => {
  if (!/^\d+$/.test(o.ttl)) return usage(`bad TTL (strconv.ParseInt: parsing "${o.ttl}": invalid syntax)`)
  return withClient(o, (c) =>
    Effect.map(c.lease.grant(BigInt(o.ttl)), (r) =>
      write(
        o.writeOut === "json"
          ? `${json({ ...flatHeader(r.header), ID: r.id, TTL: r.ttl, Error: "" })}\n`
          : `lease ${leaseId(r.id)} granted with TTL(${r.ttl}s)\n`
      )
    )
  )
}).pipe(Command.withDescription("Creates leases"))

const revoke = Command.make("revoke", { ...globalOptions, id }, (o) => {
  const lease = parseLeaseId(o.id)
  if (lease === undefined) return badId(o.id)
  return withClient(o, (c) =>
    c.lease.revoke(lease).pipe(
      Effect.mapError((e) => new Error(`failed to revoke lease (${e.message})`)),
      Effect.map((r) =>
        write(
          o.writeOut === "json" ? `${json({ header: headerJson(r.header) })}\n` : `lease ${leaseId(lease)} revoked\n`
        )
      )
    )
  )
}).pipe(Command.withDescription("Revokes leases"))

const timetolive = Command.make(
  "timetolive",
  {
    ...globalOptions,
    id,
    keys: Options.boolean("keys").pipe(Options.withDescription("Get keys attached to this lease"))
  },
  (o) => {
    const lease = parseLeaseId(o.id)
    if (lease === undefined) return badId(o.id)
    return withClient(o, (c) =>
      Effect.map(c.lease.timeToLive(lease, { keys: o.keys }), (r) => {
        if (o.writeOut === "json") {
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
        const keys = o.keys ? `, attached keys([${r.keys.map((k) => Buffer.from(k).toString()).join(" ")}])` : ""
        write(`lease ${leaseId(lease)} granted with TTL(${r.grantedTtl}s), remaining(${r.ttl}s)${keys}\n`)
      })
    )
  }
).pipe(Command.withDescription("Get lease information"))

const keepAlive = Command.make(
  "keep-alive",
  {
    ...globalOptions,
    id,
    once: Options.boolean("once").pipe(
      Options.withDescription("Resets the keep-alive time to its original value and exits immediately")
    )
  },
  (o) => {
    const lease = parseLeaseId(o.id)
    if (lease === undefined) return badId(o.id)
    const print = (r: { header: ResponseHeader; id: bigint; ttl: bigint }) =>
      write(
        o.writeOut === "json"
          ? `${json({ ...flatHeader(r.header), ID: r.id, TTL: r.ttl })}\n`
          : `lease ${leaseId(r.id)} keepalived with TTL(${r.ttl})\n`
      )
    if (o.once) {
      return withClient(o, (c) =>
        c.lease.keepAliveOnce(lease).pipe(
          Effect.mapError((e) => (e._tag === "LeaseLost" ? new Error("etcdserver: requested lease not found") : e)),
          Effect.map(print)
        )
      )
    }
    // Renews until interrupted; a lost lease ends it as etcdctl does.
    return withClient(
      o,
      (c) =>
        c.lease.keepAliveStream(lease).pipe(
          Stream.runForEach((r) => Effect.sync(() => print(r))),
          Effect.catchAll(() => Console.log(`lease ${leaseId(lease)} expired or revoked.`))
        ),
      { longRunning: true }
    )
  }
).pipe(Command.withDescription("Keeps leases alive (renew)"))

const list = Command.make("list", { ...globalOptions }, (o) =>
  withClient(o, (c) =>
    Effect.map(c.lease.leases(), (r) =>
      write(
        o.writeOut === "json"
          ? `${json({ ...flatHeader(r.header), leases: r.ids.map((id) => ({ id })) })}\n`
          : `found ${r.ids.length} leases\n${r.ids.map((id) => `${leaseId(id)}\n`).join("")}`
      )
    )
  )
).pipe(Command.withDescription("List all active leases"))

export const lease = Command.make("lease").pipe(
  Command.withDescription("Lease related commands"),
  Command.withSubcommands([grant, revoke, timetolive, keepAlive, list])
)
