/**
 * Watch ids are int64 end to end: client-chosen ids above 2^53 stay distinct (2^53 and 2^53 + 1
 * were one id while ids went through Number), a duplicate gets etcd's created+canceled answer
 * with watch id -1, and auto ids count from 0, skipping ids in use. The same raw transcript runs
 * against etcd 3.4 and our server and must come out as the one written here on both (each
 * server's test checks its own, so no test reads what another left behind).
 */
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toWatchId } from "../../src/watch/watcher.js"
import { serverTargets, type TestServer } from "../support/servers.js"
import { call, rawClient } from "./support/in-process.js"
import { RawWatch, text } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)
const TWO_53 = "9007199254740992"
const TWO_53_PLUS_1 = "9007199254740993"
const MAX_INT64 = "9223372036854775807"
const DUPLICATE = "mvcc: duplicate watch ID provided on the WatchStream"

/** What a client sees of a response, headers left out. */
const seen = (r: any) => ({
  watch_id: r.watch_id,
  created: r.created,
  canceled: r.canceled,
  cancel_reason: r.cancel_reason,
  keys: r.events.map((e: any) => text(e.kv.key))
})

describe("toWatchId", () => {
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
  const near53 = fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }).chain((v) => fc.constantFrom(v, -v))

  it("one canonical form per int64: from its decimal string or its bigint, equal ids are ===, others are not", () => {
    fc.assert(
      fc.property(fc.oneof(int64, near53), fc.oneof(int64, near53), (x, y) => {
        const a = toWatchId(String(x))
        expect(toWatchId(x)).toBe(a)
        expect(BigInt(a)).toBe(x)
        expect(typeof a).toBe(x >= -(2n ** 53n - 1n) && x <= 2n ** 53n - 1n ? "number" : "bigint")
        expect(toWatchId(String(y)) === a).toBe(x === y)
      })
    )
  })
})

const enabled = serverTargets.filter((t) => t.enabled)

describe.each(enabled)("int64 watch ids ($name)", (target) => {
  let server: TestServer
  let kv: ReturnType<typeof rawClient>
  let w: RawWatch | undefined

  beforeAll(async () => {
    server = await target.start()
    kv = rawClient("KV", server.endpoint)
  })
  afterAll(async () => {
    w?.close()
    kv?.close()
    await server?.dispose()
  })

  const put = (k: string) => call(kv, "Put", { key: b(k), value: b("v") })

  it("ids 2^53 and 2^53+1 are two watches; a duplicate is refused; auto ids skip ids in use", async () => {
    w = new RawWatch(server.endpoint)
    w.create({ key: b("ids/a"), watch_id: TWO_53 })
    w.create({ key: b("ids/b"), watch_id: TWO_53_PLUS_1 })
    w.create({ key: b("ids/c"), watch_id: TWO_53_PLUS_1 }) // in use
    w.create({ key: b("ids/d") }) // auto: 0
    w.create({ key: b("ids/e"), watch_id: "1" })
    w.create({ key: b("ids/f") }) // auto: 1 is taken, so 2
    w.create({ key: b("ids/g"), watch_id: MAX_INT64 })
    await w.waitFor(7)
    await put("ids/a")
    await put("ids/b")
    await put("ids/g")
    await w.waitFor(10)
    w.cancel(TWO_53_PLUS_1)
    await w.waitFor(11)
    await put("ids/b") // cancelled: nothing for it
    await put("ids/a")
    const all = (await w.waitFor(12)).map(seen)

    const created = (watch_id: string) => ({ watch_id, created: true, canceled: false, cancel_reason: "", keys: [] })
    const event = (watch_id: string, key: string) => ({
      watch_id,
      created: false,
      canceled: false,
      cancel_reason: "",
      keys: [key]
    })
    expect(all).toEqual([
      created(TWO_53),
      created(TWO_53_PLUS_1),
      { watch_id: "-1", created: true, canceled: true, cancel_reason: DUPLICATE, keys: [] },
      created("0"),
      created("1"),
      created("2"),
      created(MAX_INT64),
      event(TWO_53, "ids/a"),
      event(TWO_53_PLUS_1, "ids/b"),
      event(MAX_INT64, "ids/g"),
      { watch_id: TWO_53_PLUS_1, created: false, canceled: true, cancel_reason: "", keys: [] },
      event(TWO_53, "ids/a")
    ])
  })
})
