/**
 * The stored values' checksum (src/backend/value-checksum.ts), as a property, and on a real LMDB
 * file: a byte flipped on disk is thrown as a CorruptRecord (never returned), found by `verify`,
 * remembered in `corruptions`; a data dir written before checksums (layout 2, the fixture) opens,
 * is sealed once, and reads back the same.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import fc from "fast-check"
import { afterAll } from "vitest"
import { CorruptRecord } from "../../src/backend/backend.js"
import { MARKER_CONTENT, MARKER_FILE } from "../../src/backend/data-dir.js"
import { makeLmdbBackend } from "../../src/backend/lmdb.js"
import { openValue, sealValue } from "../../src/backend/value-checksum.js"
import { makeTempDir, removeDir } from "./harness.js"

const root = makeTempDir("checksum")
afterAll(() => removeDir(root))
let seq = 0
const freshDir = () => `${root}/d${seq++}`

const bytes = fc.uint8Array({ minLength: 1, maxLength: 64 })

/** Flips one bit of the first occurrence of `needle` in the file; returns its offset. */
const flipInFile = (file: string, needle: string, at = 3): number => {
  const b = fs.readFileSync(file)
  const i = b.indexOf(Buffer.from(needle))
  if (i < 0) throw new Error(`${needle} not in ${file}`)
  b[i + at]! ^= 0x20
  fs.writeFileSync(file, b)
  return i
}

describe("value checksum", () => {
  it("a sealed value opens to itself; any one flipped bit of it is refused", () =>
    fc.assert(
      fc.property(
        bytes,
        fc.uint8Array({ maxLength: 256 }),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        (key, value, pos, bit) => {
          const sealed = sealValue(key, value)
          expect(Buffer.from(openValue("key", key, sealed) as Uint8Array)).toEqual(Buffer.from(value))
          const bad = Buffer.from(sealed)
          bad[pos % bad.length]! ^= 1 << bit
          const r = openValue("key", key, bad)
          expect(r).toBeInstanceOf(CorruptRecord)
          expect((r as CorruptRecord).bucket).toBe("key")
        }
      ),
      { numRuns: 500 }
    ))

  it("a value read under another key is refused (the key is covered)", () =>
    fc.assert(
      fc.property(bytes, bytes, fc.uint8Array({ maxLength: 64 }), (k1, k2, value) => {
        fc.pre(Buffer.compare(Buffer.from(k1), Buffer.from(k2)) !== 0)
        expect(openValue("meta", k2, sealValue(k1, value))).toBeInstanceOf(CorruptRecord)
      }),
      { numRuns: 300 }
    ))

  it.live("a byte flipped in the LMDB file: get and range throw CorruptRecord, verify finds it, the rest reads", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const k = (s: string) => Buffer.from(s)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { backend } = yield* makeLmdbBackend({ dataDir: dir })
          yield* backend.write([
            { bucket: "key", key: k("rev-1"), value: k("value-that-rots") },
            { bucket: "key", key: k("rev-2"), value: k("value-that-stays") },
            { bucket: "lease", key: k("lease-1"), value: k("lease-value") }
          ])
        })
      )
      flipInFile(path.join(dir, "member", "snap", "db"), "value-that-rots")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { backend } = yield* makeLmdbBackend({ dataDir: dir })
          expect(backend.corruptions()).toEqual([])
          const thrown = (() => {
            try {
              return backend.get("key", k("rev-1"))
            } catch (e) {
              return e
            }
          })()
          expect(thrown).toBeInstanceOf(CorruptRecord)
          expect(Buffer.from((thrown as CorruptRecord).key).toString()).toBe("rev-1")
          expect(() => backend.range("key", k("rev-0"), undefined)).toThrow(CorruptRecord)
          // sound records still read, around it
          expect(Buffer.from(backend.get("key", k("rev-2"))!).toString()).toBe("value-that-stays")
          expect(backend.range("key", k("rev-2"), undefined).length).toBe(1)
          const found = yield* backend.verify
          expect(found.map((c) => `${c.bucket}/${Buffer.from(c.key).toString()}`)).toEqual(["key/rev-1"])
          expect(backend.corruptions().length).toBe(1)
          // a rewrite of the key replaces the record: it reads again
          yield* backend.write([{ bucket: "key", key: k("rev-1"), value: k("fresh") }])
          yield* backend.defragment
          expect(Buffer.from(backend.get("key", k("rev-1"))!).toString()).toBe("fresh")
          expect(yield* backend.verify).toEqual([])
        })
      )
    })
  )

  it.live("a layout-2 data dir (before checksums, fixture with a WAL to replay) opens, is sealed, reads the same", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      fs.mkdirSync(dir)
      execFileSync("tar", ["xzf", path.join(__dirname, "fixtures", "layout2-data-dir.tar.gz"), "-C", dir])
      const marker = path.join(dir, "member", MARKER_FILE)
      expect(fs.readFileSync(marker, "utf8")).toBe("etcd-effect data dir, layout 2\n")
      const read = () =>
        Effect.scoped(
          Effect.gen(function* () {
            const { backend } = yield* makeLmdbBackend({ dataDir: dir })
            const values = backend
              .range("key", new Uint8Array(0), undefined)
              .map(([, v]) => Buffer.from(v).toString("latin1"))
            expect(yield* backend.verify).toEqual([])
            return values
          })
        )
      const first = yield* read()
      expect(fs.readFileSync(marker, "utf8")).toBe(MARKER_CONTENT)
      // the fixture's puts: foo=bar-layout2, foo=bar-again, k2=v2, then k2's tombstone
      expect(first.length).toBe(4)
      expect(first.some((v) => v.includes("bar-layout2"))).toBe(true)
      expect(first.some((v) => v.includes("bar-again"))).toBe(true)
      // sealed once: the second open reads the same values (not sealed twice)
      expect(yield* read()).toEqual(first)
    })
  )
})
