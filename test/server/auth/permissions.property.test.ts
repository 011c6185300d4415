/**
 * Property: random roles with random permissions (points, ranges, open ends; read, write,
 * readwrite), random users holding random roles, and random requests (Range, Put, DeleteRange
 * with and without prev_kv, Txn with a compare and an op in each branch, Watch create) as random
 * users. On our server and on etcd 3.4 the same request gets the same answer, and a request is
 * allowed exactly when a model of etcd's range-permission rules says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fc from "effect/FastCheck"
import { EtcdProcess, requireEtcd, skipEtcd } from "../../support/etcd.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"
import {
  type AuthClients,
  b,
  callAs,
  clientsOf,
  closeClients,
  type Outcome,
  outcome,
  tokenOf,
  watchOutcome
} from "./support.js"

const ZERO = "\0"
const cmp = (x: string | undefined, y: string | undefined): number =>
  x === undefined ? (y === undefined ? 0 : 1) : y === undefined ? -1 : Buffer.compare(b(x), b(y))

interface Perm {
  readonly type: 0 | 1 | 2
  readonly key: string
  readonly end: string
}

/** The model: the union of the user's granted spans covers the request. */
const allows = (perms: ReadonlyArray<Perm>, write: boolean, key: string, end: string): boolean => {
  const spans = perms
    .filter((p) => p.type === 2 || p.type === (write ? 1 : 0))
    .map((p) =>
      p.end === "" ? ([p.key, p.key + ZERO] as const) : ([p.key, p.end === ZERO ? undefined : p.end] as const)
    )
  if (end === "") return spans.some(([s, e]) => cmp(s, key) <= 0 && cmp(key, e) < 0)
  const stop = end === ZERO ? undefined : end
  let at: string | undefined = key
  for (;;) {
    let next: string | undefined | null = null
    for (const [s, e] of spans) if (cmp(s, at) <= 0 && cmp(at, e) < 0 && (next === null || cmp(e, next) > 0)) next = e
    if (next === null) return false
    if (cmp(next, stop) >= 0) return true
    at = next
  }
}

const key = fc.constantFrom("a", "ab", "b", "ba", "c", "d")
/** request ends: a point, open ended, or an end after the key (the model's domain) */
const end = fc.oneof(fc.constant(""), fc.constant(ZERO), key)
const perm: fc.Arbitrary<Perm> = fc.record({ type: fc.constantFrom(0 as const, 1 as const, 2 as const), key, end })

type Req =
  | { readonly kind: "range" | "watch"; readonly key: string; readonly end: string }
  | { readonly kind: "put"; readonly key: string; readonly prevKv: boolean }
  | { readonly kind: "delete"; readonly key: string; readonly end: string; readonly prevKv: boolean }
  | {
      readonly kind: "txn"
      readonly cmpKey: string
      readonly putKey: string
      readonly rangeKey: string
      readonly rangeEnd: string
    }

const req: fc.Arbitrary<Req> = fc
  .oneof(
    fc.record({ kind: fc.constantFrom("range" as const, "watch" as const), key, end }),
    fc.record({ kind: fc.constant("put" as const), key, prevKv: fc.boolean() }),
    fc.record({ kind: fc.constant("delete" as const), key, end, prevKv: fc.boolean() }),
    fc.record({ kind: fc.constant("txn" as const), cmpKey: key, putKey: key, rangeKey: key, rangeEnd: end })
  )
  .filter((r) => {
    const ok = (k: string, e: string) => e === "" || e === ZERO || cmp(e, k) > 0
    return r.kind === "put" || (r.kind === "txn" ? ok(r.rangeKey, r.rangeEnd) : ok(r.key, r.end))
  })

const scenario = fc.record({
  roles: fc.array(fc.array(perm, { maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  users: fc.array(fc.array(fc.nat(2), { maxLength: 3 }), { minLength: 1, maxLength: 2 }),
  requests: fc.array(fc.record({ user: fc.nat(1), req }), { minLength: 1, maxLength: 10 })
})

const modelAllows = (perms: ReadonlyArray<Perm>, r: Req): boolean => {
  switch (r.kind) {
    case "range":
      return allows(perms, false, r.key, r.end)
    case "watch":
      // etcd's watch server turns a range_end of "\0" into an empty one before the check: the key alone
      return allows(perms, false, r.key, r.end === ZERO ? "" : r.end)
    case "put":
      return allows(perms, true, r.key, "") && (!r.prevKv || allows(perms, false, r.key, ""))
    case "delete":
      return allows(perms, true, r.key, r.end) && (!r.prevKv || allows(perms, false, r.key, r.end))
    case "txn":
      return (
        allows(perms, false, r.cmpKey, "") &&
        allows(perms, true, r.putKey, "") &&
        allows(perms, false, r.rangeKey, r.rangeEnd)
      )
  }
}

const run = (c: AuthClients, r: Req, token: string): Promise<Outcome> => {
  switch (r.kind) {
    case "range":
      return outcome(c.kv, "Range", { key: b(r.key), range_end: b(r.end) }, token)
    case "watch":
      return watchOutcome(c.endpoint, { key: b(r.key), range_end: b(r.end) }, token)
    case "put":
      return outcome(c.kv, "Put", { key: b(r.key), value: b("v"), prev_kv: r.prevKv }, token)
    case "delete":
      return outcome(c.kv, "DeleteRange", { key: b(r.key), range_end: b(r.end), prev_kv: r.prevKv }, token)
    case "txn":
      return outcome(
        c.kv,
        "Txn",
        {
          compare: [{ key: b(r.cmpKey), target: "VERSION", result: "GREATER", version: 0 }],
          success: [{ request_put: { key: b(r.putKey), value: b("t") } }],
          failure: [{ request_range: { key: b(r.rangeKey), range_end: b(r.rangeEnd) } }]
        },
        token
      )
  }
}

describe.skipIf(skipEtcd && !requireEtcd)("permissions: random roles, users and requests", () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  const targets: Array<AuthClients & { rootToken: string }> = []

  beforeAll(async () => {
    const [e, o] = await Promise.all([
      EtcdProcess.start({ extraArgs: ["--bcrypt-cost", "4"] }),
      startInProcess({ bcryptCost: 4 })
    ])
    etcd = e
    ours = o
    for (const endpoint of [etcd.endpoint, ours.endpoint]) {
      const c = clientsOf(endpoint)
      await callAs(c.auth, "UserAdd", { name: "root", password: "rootpw" })
      await callAs(c.auth, "UserGrantRole", { user: "root", role: "root" })
      const enabled = await callAs(c.auth, "AuthEnable", {})
      if (!enabled.ok) throw new Error(`AuthEnable: ${enabled.details}`)
      targets.push({ ...c, rootToken: await tokenOf(c, "root", "rootpw") })
    }
  })
  afterAll(async () => {
    targets.forEach(closeClients)
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  it("every request is allowed exactly when the model says so, and answered as etcd answers it", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const results = await Promise.all(
          targets.map(async (t) => {
            const root = t.rootToken
            const admin = async (method: string, request: unknown) => {
              const r = await callAs(t.auth, method, request, root)
              if (!r.ok) throw new Error(`${method}: ${r.code} ${r.details}`)
            }
            // a clean slate: the previous run's users and roles go
            for (const u of ["u0", "u1"]) await callAs(t.auth, "UserDelete", { name: u }, root)
            for (const r of ["r0", "r1", "r2"]) await callAs(t.auth, "RoleDelete", { role: r }, root)
            for (const [i, perms] of s.roles.entries()) {
              await admin("RoleAdd", { name: `r${i}` })
              for (const p of perms) {
                await admin("RoleGrantPermission", {
                  name: `r${i}`,
                  perm: { permType: p.type, key: b(p.key), range_end: b(p.end) }
                })
              }
            }
            const tokens: Array<string> = []
            for (let u = 0; u < 2; u++) {
              await admin("UserAdd", { name: `u${u}`, password: "pw" })
              for (const r of s.users[u] ?? [])
                if (r < s.roles.length) await admin("UserGrantRole", { user: `u${u}`, role: `r${r}` })
              tokens.push(await tokenOf(t, `u${u}`, "pw"))
            }
            const out: Array<Outcome> = []
            for (const { user, req: r } of s.requests) out.push(await run(t, r, tokens[user]!))
            return out
          })
        )
        expect(results[1], JSON.stringify(s)).toEqual(results[0])
        // the model: the union of the user's roles' permissions (the last grant on a same key and end wins)
        s.requests.forEach(({ user, req: r }, i) => {
          const roles = new Set((s.users[user] ?? []).filter((x) => x < s.roles.length))
          const got = results[0]![i]!
          const denied = got.startsWith("7 ") || got.includes("PermissionDenied")
          expect({ request: r, user, allowed: !denied }).toEqual({
            request: r,
            user,
            allowed: modelAllows(effective(s.roles, roles), r)
          })
        })
      }),
      { numRuns: 30 }
    )
  })
})

/**
 * The permissions a role ends up with, as etcd's RoleGrantPermission keeps them: a grant whose key
 * and end equal those of the first permission at or after its key replaces that one's type.
 */
const effective = (roles: ReadonlyArray<ReadonlyArray<Perm>>, held: ReadonlySet<number>): Array<Perm> => {
  const out: Array<Perm> = []
  for (const ri of held) {
    const kept: Array<Perm> = []
    for (const p of roles[ri]!) {
      const idx = kept.findIndex((q) => cmp(q.key, p.key) >= 0)
      if (idx >= 0 && kept[idx]!.key === p.key && kept[idx]!.end === p.end) kept[idx] = { ...kept[idx]!, type: p.type }
      else {
        kept.push(p)
        kept.sort((x, y) => cmp(x.key, y.key))
      }
    }
    out.push(...kept)
  }
  return out
}
