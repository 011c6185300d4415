/**
 * 5,000 concurrent HTTP watches through the Cacher on one process: 4,000 with a label selector
 * (ten groups), 1,000 without; writes at a fixed rate (creates, updates, deletes); every watcher
 * gets every event of its selection, in RV order, and nothing else.
 *
 * Its work (5,000 HTTP connections served and read in this process) takes 15 s on a quiet machine
 * and over 60 s on a loaded one (load 10–12 on 2 cores: 36 s to open the watches alone), so a
 * wall-clock budget fails on a slow machine for no fault of the product. It has none: each phase
 * waits for its work and fails when that work makes no progress for STALL_MS (no watch opened, no
 * request answered, no event delivered; test/support/stall.ts) — a stall, which is what a lost
 * event or a hung watch is.
 */
import * as http from "node:http"
import { describe, expect, it } from "vitest"
import { untilDone, unstalled } from "../../support/stall.js"
import { configMap, newNamespace, request, startApiServer } from "./support.js"

const WATCHERS = Number(process.env["APISERVER_WATCHERS"] ?? "5000")
const GROUPS = 10
const WRITES = 24
const INTERVAL_MS = 50
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Seen {
  readonly events: Array<string>
  ended: boolean
}

const openWatch = (agent: http.Agent, url: string, seen: Seen): Promise<http.ClientRequest> =>
  new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`watch: HTTP ${res.statusCode}`))
      let buf = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        buf += chunk
        let i: number
        while ((i = buf.indexOf("\n")) >= 0) {
          const e = JSON.parse(buf.slice(0, i))
          buf = buf.slice(i + 1)
          seen.events.push(`${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`)
        }
      })
      res.on("close", () => void (seen.ended = true))
      resolve(req)
    })
    req.on("error", reject)
  })

describe("apiserver: many HTTP watchers", () => {
  it(`${WATCHERS} concurrent watches each get every event of their selector, in order`, async () => {
    const server = await startApiServer()
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
    const requests: Array<http.ClientRequest> = []
    try {
      const ns = await newNamespace(server.url)
      const collection = `/api/v1/namespaces/${ns}/configmaps`
      const rv = (await request(server.url, "GET", collection)).body.metadata.resourceVersion
      const seen: Array<Seen> = []
      const t0 = Date.now()
      const base = `${server.url}${collection}?watch=1&resourceVersion=${rv}`
      let openError: unknown
      for (let start = 0; start < WATCHERS; start += 500) {
        const end = Math.min(WATCHERS, start + 500)
        for (let i = start; i < end; i++) {
          const s: Seen = { events: [], ended: false }
          seen.push(s)
          const selector = i % 5 === 4 ? "" : `&labelSelector=g%3Dg${i % GROUPS}`
          openWatch(agent, base + selector, s).then(
            (req) => void requests.push(req),
            (e: unknown) => void (openError ??= e)
          )
        }
        await untilDone(
          "opening watches",
          () => {
            if (openError !== undefined) throw openError
            return requests.length >= end
          },
          () => requests.length
        )
      }
      const opened = Date.now()
      // the writes, at a fixed rate; what each selection must see, in order
      const all: Array<string> = []
      const byGroup: Array<Array<string>> = Array.from({ length: GROUPS }, () => [])
      const record = (type: string, obj: any) => {
        const line = `${type} ${obj.metadata.name} ${obj.metadata.resourceVersion}`
        all.push(line)
        byGroup[Number(String(obj.metadata.labels.g).slice(1))]!.push(line)
      }
      const live: Array<string> = []
      for (let k = 0; k < WRITES; k++) {
        const started = Date.now()
        if (k % 6 === 5 && live.length > 0) {
          const name = live.shift()!
          const r = await unstalled("DELETE", request(server.url, "DELETE", `${collection}/${name}`))
          expect(r.status).toBe(200)
          const got = await unstalled(
            "GET",
            request(server.url, "GET", `${collection}?resourceVersion=0&fieldSelector=metadata.name%3D${name}`)
          )
          expect(got.body.items).toEqual([])
          // the DELETED event carries the last state at the deletion RV: read it from the stream of an all-watcher later
          all.push(`DELETED ${name} ?`)
          byGroup[Number(name.split("-")[1]) % GROUPS]!.push(`DELETED ${name} ?`)
        } else if (k % 3 === 2 && live.length > 0) {
          const name = live[live.length - 1]!
          const r = await unstalled(
            "PUT",
            request(
              server.url,
              "PUT",
              `${collection}/${name}`,
              configMap(name, { v: String(k) }, { g: `g${Number(name.split("-")[1]) % GROUPS}` })
            )
          )
          expect(r.status).toBe(200)
          record("MODIFIED", r.body)
        } else {
          const name = `cm-${k}`
          const r = await unstalled(
            "POST",
            request(server.url, "POST", collection, configMap(name, { v: String(k) }, { g: `g${k % GROUPS}` }))
          )
          expect(r.status).toBe(201)
          record("ADDED", r.body)
          live.push(name)
        }
        const wait = INTERVAL_MS - (Date.now() - started)
        if (wait > 0) await sleep(wait)
      }
      const written = Date.now()
      const expectedFor = (i: number) => (i % 5 === 4 ? all : byGroup[i % GROUPS]!)
      // every watcher reaches its expected count (one that gets more fails below)
      await untilDone(
        "delivering events",
        () => seen.every((s, i) => s.events.length >= expectedFor(i).length),
        () => seen.reduce((n, s) => n + s.events.length, 0)
      )
      if (process.env["APISERVER_WATCHERS_DEBUG"] !== undefined)
        console.log({ opened: opened - t0, written: written - opened, delivered: Date.now() - written })
      // DELETED RVs are the deletion's: take them from the first all-watcher, and check they increase
      const reference = seen[4]!.events
      const resolve = (xs: Array<string>) =>
        xs.map((x) => (x.endsWith(" ?") ? reference.find((r) => r.startsWith(x.slice(0, -1)))! : x))
      const allResolved = resolve(all)
      const rvs = allResolved.map((x) => BigInt(x.split(" ")[2]!))
      expect(rvs).toEqual([...rvs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
      let mismatches = 0
      for (let i = 0; i < WATCHERS; i++) {
        const want = i % 5 === 4 ? allResolved : resolve(byGroup[i % GROUPS]!)
        if (JSON.stringify(seen[i]!.events) !== JSON.stringify(want)) {
          if (mismatches++ === 0) expect({ watcher: i, events: seen[i]!.events }).toEqual({ watcher: i, events: want })
        }
        expect(seen[i]!.ended).toBe(false)
      }
      expect(mismatches).toBe(0)
      expect(server.running.registry.byGroupResource("", "configmaps")!.storage).toBeDefined()
    } finally {
      for (const r of requests) r.destroy()
      agent.destroy()
      await server.close()
    }
    // no wall-clock budget: every wait above fails on a stall (STALL_MS)
  }, 0)
})
