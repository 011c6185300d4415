/**
 * HashKV as etcd computes it: random lease-free histories — puts, deletes, range deletes, txns
 * with puts and deletes, compactions (physical, so finished) at any revision, deletes included —
 * run in lockstep against a real etcd 3.4.23 (Debian's), etcd 3.6 when benchmarks/go/build.sh has
 * built it, and our server on LMDB. After every step that compacts or asks, and at the end of each
 * run, HashKV must answer alike at the current revision, at past revisions around and above the
 * compaction watermark, below it (ErrCompacted) and past the head (ErrFutureRev): hash,
 * compact_revision, header revision, and the error's code and message.
 *
 * Known differences, checked as such rather than left out:
 * - etcd 3.6 answers HashKV at any of its last ten compaction revisions, even below the watermark,
 *   with the hash its compaction computed and stored then (compact_revision = the compaction
 *   before it; hash.go hashStorage); 3.4.23 and ours refuse them as compacted.
 * - hash_revision is 3.5+; 3.4.23 leaves it 0. It is compared with 3.6's.
 *
 * A second property grants leases with client-chosen ids on every server (etcd lets LeaseGrant
 * name the id), attaches keys to them and revokes them: a key's lease id is part of the hash, and
 * with the same ids the hashes are the same.
 *
 * Ours is also reopened from its data dir once, and must still hash alike.
 *
 * The servers live for the whole file and the runs build on each other's data (the store only
 * grows); a failure stops at the first run that differs (endOnFailure) and prints its steps.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, rawClient, startInProcess, type UnaryResult, unaryCall } from "./support/in-process.js"

const KEYS = ["a", "b", "c", "d/1", "d/2", "e"] as const

/** etcd 3.6's binary: $ETCD_36_BIN, else what benchmarks/go/build.sh has built already (nothing built here). */
const etcd36Bin = ((): string | undefined => {
  if (process.env["ETCD_36_BIN"] !== undefined) return process.env["ETCD_36_BIN"]
  try {
    const out = execFileSync("bash", ["benchmarks/go/build.sh", "--cached"], { encoding: "utf8", timeout: 60_000 })
    return /^ETCD_36_BIN=(.+)$/m.exec(out)?.[1]
  } catch {
    return undefined // no Go, a build holding the lock, or nothing built: 3.4 alone is the oracle
  }
})()

/** a key range: one key, [from, to), a prefix, or every key from one on */
type Range =
  | { readonly t: "one"; readonly k: number }
  | { readonly t: "span"; readonly k: number; readonly to: number }
  | { readonly t: "prefix" }
  | { readonly t: "from"; readonly k: number }

type SubOp =
  | { readonly t: "put"; readonly k: number; readonly v: number; readonly lease: number }
  | { readonly t: "del"; readonly r: Range }

type Op =
  | SubOp
  | {
      readonly t: "txn"
      /** compare: the key's version equals n (-1: no compare) */
      readonly cmpKey: number
      readonly cmpVersion: number
      readonly success: ReadonlyArray<SubOp>
      readonly failure: ReadonlyArray<SubOp>
    }
  | { readonly t: "compact"; readonly back: number }
  | { readonly t: "hash"; readonly back: number }
  | { readonly t: "grant"; readonly lease: number }
  | { readonly t: "revoke"; readonly lease: number }

const key = fc.integer({ min: 0, max: KEYS.length - 1 })
const range: fc.Arbitrary<Range> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("one" as const), k: key }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("span" as const), k: key, to: key }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("prefix" as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("from" as const), k: key }) }
)
/** leases: how many a run may use (0: lease-free) */
const subOp = (leases: number): fc.Arbitrary<SubOp> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant("put" as const),
        k: key,
        v: fc.nat(9),
        lease: leases === 0 ? fc.constant(-1) : fc.integer({ min: -1, max: leases - 1 })
      })
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("del" as const), r: range }) }
  )
const op = (leases: number): fc.Arbitrary<Op> => {
  const arbs: Array<fc.WeightedArbitrary<Op>> = [
    { weight: 8, arbitrary: subOp(leases) },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("txn" as const),
        cmpKey: fc.integer({ min: -1, max: KEYS.length - 1 }),
        cmpVersion: fc.nat(3),
        success: fc.array(subOp(leases), { maxLength: 3 }),
        failure: fc.array(subOp(leases), { maxLength: 3 })
      })
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("compact" as const), back: fc.nat(6) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant("hash" as const), back: fc.nat(8) }) }
  ]
  if (leases > 0) {
    arbs.push(
      { weight: 1, arbitrary: fc.record({ t: fc.constant("grant" as const), lease: fc.nat(leases - 1) }) },
      { weight: 1, arbitrary: fc.record({ t: fc.constant("revoke" as const), lease: fc.nat(leases - 1) }) }
    )
  }
  return fc.oneof(...arbs)
}

/** Drops what differs by nature: ids and raft term. */
const scrub = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(scrub)
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (k === "cluster_id" || k === "member_id" || k === "raft_term") continue
      out[k] = scrub(x)
    }
    return out
  }
  return v
}

interface Side {
  readonly name: "etcd 3.4" | "etcd 3.6" | "ours"
  readonly kv: ReturnType<typeof rawClient>
  readonly lease: ReturnType<typeof rawClient>
  readonly maint: ReturnType<typeof rawClient>
}

describe.skipIf(skipEtcd)("HashKV: etcd-effect vs etcd 3.4.23 (and 3.6)", { shuffle: false }, () => {
  const processes: Array<EtcdProcess> = []
  let ours: InProcessServer | undefined
  let dataDir = ""
  const sides: Array<Side> = []
  let run = 0
  let compactRev = -1
  /** the revisions compacted at, in order */
  const compactions: Array<number> = []
  /** what the comparisons covered, so a generator that stopped reaching a case would show */
  const covered = {
    hashes: 0,
    pastHashes: 0,
    compacted: 0,
    future: 0,
    compactions: 0,
    emptyKeep: 0,
    leased: 0,
    cached36: 0
  }

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "hashkv-"))
    const [e34, e36, o] = await Promise.all([
      EtcdProcess.start(),
      etcd36Bin === undefined ? undefined : EtcdProcess.start({ bin: etcd36Bin }),
      startInProcess({ dataDir })
    ])
    processes.push(e34)
    ours = o
    const endpoints: Array<[Side["name"], string]> = [["etcd 3.4", e34.endpoint]]
    if (e36 !== undefined) {
      processes.push(e36)
      endpoints.push(["etcd 3.6", e36.endpoint])
    }
    endpoints.push(["ours", o.endpoint])
    for (const [name, endpoint] of endpoints) {
      sides.push({
        name,
        kv: rawClient("KV", endpoint),
        lease: rawClient("Lease", endpoint),
        maint: rawClient("Maintenance", endpoint)
      })
    }
  }, 120_000)
  afterAll(async () => {
    for (const s of sides) for (const c of [s.kv, s.lease, s.maint]) c.close()
    await Promise.all([...processes.map((p) => p.dispose()), ours?.close()])
    if (dataDir !== "") fs.rmSync(dataDir, { recursive: true, force: true })
  })

  const side = (name: Side["name"]) => sides.findIndex((s) => s.name === name)

  /** The same call on every server; every answer must equal etcd 3.4's (scrubbed). Returns it. */
  const all = async (
    client: "kv" | "lease" | "maint",
    method: string,
    request: unknown,
    steps: ReadonlyArray<string>
  ): Promise<UnaryResult<any>> => {
    const results = (await Promise.all(sides.map((s) => unaryCall(s[client], method, request)))).map(scrub) as Array<
      UnaryResult<any>
    >
    const oracle = results[0]!
    const what = `${method} ${JSON.stringify(request)} after:\n  ${steps.join("\n  ")}`
    results.forEach((r, i) => {
      const name = sides[i]!.name
      if (i === 0) return
      if (name === "etcd 3.6") return expect36(oracle, r, method, request, what)
      expect(hashRevisionless(r), `${name} vs etcd 3.4: ${what}`).toEqual(hashRevisionless(oracle))
    })
    // ours carries hash_revision as 3.6 does
    const o = results[side("ours")]!
    if (method === "HashKV" && o.ok) {
      const asked = Number((request as { revision: number }).revision)
      expect(o.value.hash_revision).toBe(String(asked === 0 ? o.value.header.revision : asked))
    }
    return oracle
  }

  /** 3.6 answers as 3.4 does, except HashKV at one of its last ten compactions (see the module comment). */
  const expect36 = (oracle: UnaryResult<any>, r: UnaryResult<any>, method: string, request: unknown, what: string) => {
    const asked = method === "HashKV" ? Number((request as { revision: number }).revision) : 0
    const at = compactions.slice(-10).indexOf(asked)
    if (asked > 0 && at >= 0) {
      expect(oracle).toEqual({ ok: false, code: 11, details: "etcdserver: mvcc: required revision has been compacted" })
      expect(r.ok, `etcd 3.6 answers HashKV at a compaction it stored: ${what}`).toBe(true)
      const before = compactions.slice(-10)[at - 1] ?? compactions[compactions.length - 11] ?? -1
      // the hash its compaction computed, over what the compaction before it had left
      if (r.ok) expect(r.value.compact_revision).toBe(String(before))
      covered.cached36++
      return
    }
    expect(hashRevisionless(r), `etcd 3.6 vs etcd 3.4: ${what}`).toEqual(hashRevisionless(oracle))
  }

  const hashRevisionless = (r: UnaryResult<any>): unknown => {
    if (!r.ok || r.value?.hash_revision === undefined) return r
    const { hash_revision: _, ...rest } = r.value
    return { ok: true, value: rest }
  }

  const kb = (k: number) => Buffer.from(KEYS[k]!)
  const rangeRequest = (r: Range) => {
    switch (r.t) {
      case "one":
        return { key: kb(r.k) }
      case "span":
        return { key: kb(r.k), range_end: kb(r.to) } // to <= k: an empty range, as etcd takes it
      case "prefix":
        return { key: Buffer.from("d/"), range_end: Buffer.from("d0") }
      case "from":
        return { key: kb(r.k), range_end: Buffer.from([0]) }
    }
  }

  const runHistory = async (ops: ReadonlyArray<Op>) => {
    const r = run++
    const leaseId = (i: number) => String(0x10000 + r * 16 + i)
    const steps: Array<string> = []
    const put = (o: Extract<SubOp, { t: "put" }>) => ({
      key: kb(o.k),
      value: Buffer.from(`${r}:${o.v}`),
      lease: o.lease < 0 ? "0" : leaseId(o.lease)
    })
    const requestOp = (o: SubOp) =>
      o.t === "put" ? { request_put: put(o) } : { request_delete_range: rangeRequest(o.r) }
    let current = 0
    const head = async () => {
      const h = await all("kv", "Range", { key: Buffer.from([0]), count_only: true }, steps)
      if (!h.ok) throw new Error(`Range failed: ${h.details}`)
      current = Number(h.value.header.revision)
    }
    await head()

    const hashAt = async (revision: number) => {
      const h = await all("maint", "HashKV", { revision }, steps)
      covered.hashes++
      if (h.ok && revision !== 0 && revision < current) covered.pastHashes++
      if (!h.ok && h.details.includes("compacted")) covered.compacted++
      if (!h.ok && h.details.includes("future")) covered.future++
    }

    for (const o of ops) {
      steps.push(JSON.stringify(o))
      switch (o.t) {
        case "put":
          if (o.lease >= 0) covered.leased++
          await all("kv", "Put", put(o), steps)
          break
        case "del":
          await all("kv", "DeleteRange", rangeRequest(o.r), steps)
          break
        case "txn":
          await all(
            "kv",
            "Txn",
            {
              compare:
                o.cmpKey < 0
                  ? []
                  : [{ key: kb(o.cmpKey), target: "VERSION", result: "EQUAL", version: String(o.cmpVersion) }],
              success: o.success.map(requestOp),
              failure: o.failure.map(requestOp)
            },
            steps
          )
          break
        case "compact": {
          const at = Math.max(1, current - o.back)
          const c = await all("kv", "Compact", { revision: at, physical: true }, steps)
          if (c.ok) {
            compactRev = at
            compactions.push(at)
            covered.compactions++
            // nothing live at the watermark: every key's newest revision is a delete
            const live = await all(
              "kv",
              "Range",
              { key: Buffer.from([0]), range_end: Buffer.from([0]), count_only: true, revision: at },
              steps
            )
            if (live.ok && Number(live.value.count) === 0) covered.emptyKeep++
            await hashAt(0)
            await hashAt(at)
          }
          break
        }
        case "hash":
          await hashAt(Math.max(1, current - o.back))
          break
        case "grant":
          await all("lease", "LeaseGrant", { ID: leaseId(o.lease), TTL: 3600 }, steps)
          break
        case "revoke":
          await all("lease", "LeaseRevoke", { ID: leaseId(o.lease) }, steps)
          break
      }
      await head()
    }

    // the end of the run: the head, every revision from below the watermark to the head (at most
    // 12 of them, the newest), and the future
    steps.push("(end of run)")
    await hashAt(0)
    const from = Math.max(1, compactRev - 1, current - 12)
    for (let rev = from; rev <= current; rev++) await hashAt(rev)
    if (compactRev > 1) await hashAt(compactRev - 1)
    await hashAt(current + 1)
    await hashAt(current + 1000)
  }

  it("random lease-free histories hash alike at the head and at past revisions", async () => {
    const numRuns = Number(process.env["HASHKV_RUNS"] ?? 25)
    await fc.assert(fc.asyncProperty(fc.array(op(0), { minLength: 5, maxLength: 25 }), runHistory), {
      numRuns,
      endOnFailure: true
    })
    expect(covered.compactions).toBeGreaterThan(0)
    expect(covered.pastHashes).toBeGreaterThan(0)
    expect(covered.compacted).toBeGreaterThan(0)
    expect(covered.future).toBeGreaterThan(0)
  }, 600_000)

  it("a compaction at a delete that leaves nothing live: its tombstones are not hashed (etcd 3.4 drops them)", async () => {
    const before = covered.emptyKeep
    // every key is >= "a": the from-key delete removes them all, then the compaction lands on it
    await runHistory([
      { t: "put", k: 0, v: 1, lease: -1 },
      { t: "put", k: 3, v: 2, lease: -1 },
      { t: "del", r: { t: "from", k: 0 } },
      { t: "compact", back: 0 },
      { t: "hash", back: 1 }
    ])
    expect(covered.emptyKeep).toBe(before + 1)
  })

  it("ours reopened from its LMDB data dir hashes alike at the head and at past revisions", async () => {
    // a compaction at a delete, so the tombstones at the watermark are on disk, then revisions above it
    await runHistory([
      { t: "put", k: 1, v: 1, lease: -1 },
      { t: "put", k: 2, v: 2, lease: -1 },
      { t: "put", k: 1, v: 3, lease: -1 },
      { t: "del", r: { t: "one", k: 2 } },
      { t: "compact", back: 0 },
      { t: "put", k: 2, v: 4, lease: -1 },
      { t: "put", k: 1, v: 5, lease: -1 }
    ])
    const i = side("ours")
    for (const c of [sides[i]!.kv, sides[i]!.lease, sides[i]!.maint]) c.close()
    await ours!.close()
    ours = await startInProcess({ dataDir })
    const endpoint = ours.endpoint
    sides[i] = {
      name: "ours",
      kv: rawClient("KV", endpoint),
      lease: rawClient("Lease", endpoint),
      maint: rawClient("Maintenance", endpoint)
    }
    const before = covered.pastHashes
    // the end-of-run checks: the head, every revision from below the watermark up, the future
    await runHistory([{ t: "hash", back: 0 }])
    expect(covered.pastHashes).toBeGreaterThan(before)
  })

  it("histories with leases of client-chosen ids hash alike too", async () => {
    const numRuns = Number(process.env["HASHKV_LEASE_RUNS"] ?? 10)
    const before = covered.leased
    await fc.assert(fc.asyncProperty(fc.array(op(2), { minLength: 5, maxLength: 25 }), runHistory), {
      numRuns,
      endOnFailure: true
    })
    expect(covered.leased).toBeGreaterThan(before)
    if (process.env["HASHKV_DEBUG"] === "1")
      console.log(
        sides.map((s) => s.name),
        JSON.stringify(covered)
      )
  }, 600_000)
})
