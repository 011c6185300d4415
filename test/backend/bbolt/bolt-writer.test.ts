/**
 * The bbolt writer and reader: random stores written and read back equal, consistent by our check,
 * and accepted by the real tools — etcdctl 3.4's `snapshot status` (bbolt 1.3's open and Tx.Check)
 * and, when benchmarks/go/build.sh has built it, bbolt 1.4's own `bbolt check`. Stores range from
 * empty buckets (inline) to thousands of keys (branch pages) and values larger than a page
 * (overflow pages).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { checkBolt, readBolt, writeBolt, type BucketInput } from "../../../src/backend/bbolt/index.js"
import { ETCDCTL_BIN, etcdctlAvailable } from "../../support/etcd.js"
import { goBins } from "../../support/go-bins.js"

const run = promisify(execFile)

const bytes = (max: number) => fc.uint8Array({ minLength: 1, maxLength: max })

/** One bucket: a name and up to `n` entries, some values large. */
const bucketArb = fc.record({
  // not "key": etcdctl reads that bucket's keys as revisions
  name: fc.constantFrom("meta", "lease", "alarm", "auth", "authUsers", "authRoles", "members", "cluster", "x"),
  small: fc.array(fc.tuple(bytes(40), fc.uint8Array({ maxLength: 60 })), { maxLength: 40 }),
  many: fc.nat({ max: 1500 }),
  large: fc.array(fc.tuple(bytes(20), fc.integer({ min: 1000, max: 20_000 })), { maxLength: 3 })
})

/** Distinct, sorted buckets of distinct, sorted keys. */
const storeArb = fc.array(bucketArb, { maxLength: 6 }).map((bs): Array<BucketInput> => {
  const byName = new Map<string, Map<string, readonly [Uint8Array, Uint8Array]>>()
  for (const b of bs) {
    const m = byName.get(b.name) ?? new Map()
    byName.set(b.name, m)
    const add = (k: Uint8Array, v: Uint8Array) => m.set(Buffer.from(k).toString("hex"), [k, v])
    for (const [k, v] of b.small) add(k, v)
    for (let i = 0; i < b.many; i++) {
      const k = Buffer.alloc(17)
      k.writeBigUInt64BE(BigInt(i + 1), 0)
      k[8] = 0x5f
      add(new Uint8Array(k), new Uint8Array(Buffer.from(`value-${i}`)))
    }
    for (const [k, size] of b.large) add(k, new Uint8Array(size).fill(size & 0xff))
  }
  return [...byName].map(([name, m]) => ({
    name: new Uint8Array(Buffer.from(name)),
    entries: [...m.values()].sort((a, b) => Buffer.compare(a[0], b[0]))
  }))
})

const asPlain = (bs: ReadonlyArray<BucketInput>) =>
  [...bs]
    .sort((a, b) => Buffer.compare(a.name, b.name))
    .map((b) => ({
      name: Buffer.from(b.name).toString(),
      entries: b.entries.map(([k, v]) => [Buffer.from(k).toString("hex"), Buffer.from(v).toString("hex")])
    }))

describe("bbolt writer and reader", () => {
  it("a written store reads back equal and passes the check (100 runs)", () => {
    fc.assert(
      fc.property(storeArb, (store) => {
        const file = writeBolt(store)
        expect(file.length % 4096).toBe(0)
        expect(checkBolt(file)).toEqual([])
        const read = readBolt(file)
        expect(asPlain(read.buckets.map((b) => ({ name: b.name, entries: b.entries })))).toEqual(asPlain(store))
      }),
      { numRuns: 100 }
    )
  })

  it("a flipped byte in a meta page falls back to the other meta; both flipped is 'invalid database'", () => {
    const file = writeBolt([{ name: new Uint8Array(Buffer.from("key")), entries: [] }])
    const one = Buffer.from(file)
    const flip = (b: Buffer, at: number) => b.writeUInt8(b.readUInt8(at) ^ 0xff, at)
    flip(one, 16 + 20)
    expect(checkBolt(one)).toEqual([])
    const both = Buffer.from(one)
    flip(both, 4096 + 16)
    flip(both, 16)
    expect(() => readBolt(both)).toThrow("invalid database")
  })

  it("an orphan page and a truncated file are reported", () => {
    const file = writeBolt([
      { name: new Uint8Array(Buffer.from("key")), entries: [[new Uint8Array([1]), new Uint8Array(5000)]] }
    ])
    expect(checkBolt(file.subarray(0, file.length - 4096))).not.toEqual([])
  })

  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "bolt-writer-"))

  it.skipIf(!etcdctlAvailable)(
    "etcdctl 3.4's snapshot status accepts written files (15 runs)",
    async () => {
      const dir = tmp()
      try {
        await fc.assert(
          fc.asyncProperty(storeArb, async (store) => {
            const file = path.join(dir, "s.db")
            fs.writeFileSync(file, writeBolt(store))
            const { stdout } = await run(ETCDCTL_BIN, ["snapshot", "status", file, "-w", "json"], {
              env: { ...process.env, ETCDCTL_API: "3" }
            })
            const total = store.reduce((n, b) => n + b.entries.length, 0)
            // 3.4 counts every entry of every bucket
            expect(JSON.parse(stdout)).toMatchObject({ totalKey: total, totalSize: fs.statSync(file).size })
          }),
          { numRuns: 15 }
        )
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    0
  )

  it.skipIf(goBins.BBOLT_BIN === undefined)(
    "bbolt 1.4's `bbolt check` accepts written files (15 runs)",
    async () => {
      const dir = tmp()
      try {
        await fc.assert(
          fc.asyncProperty(storeArb, async (store) => {
            const file = path.join(dir, "s.db")
            fs.writeFileSync(file, writeBolt(store))
            const { stdout } = await run(goBins.BBOLT_BIN!, ["check", file])
            expect(stdout.trim()).toBe("OK")
          }),
          { numRuns: 15 }
        )
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    0
  )
})
