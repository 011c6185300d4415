/**
 * Bad input from "etcd": a body that is not JSON, a non-numeric X-Etcd-Index, a body that is JSON but
 * not a v2 response. Each is one ERROR event and the end of that watch — never a crash. A node whose
 * value does not decode is skipped and the watch goes on (seed 001: a client resuming from its
 * resourceVersion could never get past a bad value). A small HTTP server plays a broken etcd (real
 * etcd cannot send these); the undecodable object is also written to the real etcd 3.4.
 */
import * as http from "node:http"
import { Effect, Exit, Schedule } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encodeObject } from "../../../src/kubernetes/api/codec.js"
import type { Status } from "../../../src/kubernetes/api/status.js"
import { etcdWatcher } from "../../../src/kubernetes/etcd2/etcd-watcher.js"
import type { KeysClientShape } from "../../../src/kubernetes/etcd2/keys-client.js"
import { type EtcdProcess, skipEtcd } from "../../support/etcd.js"
import { pod, Watching } from "../storage/conformance/support.js"
import { keysClient, newStore, runKeys, startEtcdV2 } from "./support.js"

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** A "v2 server" answering every request with `answer(request)`. */
const brokenEtcd = async (answer: (url: URL) => Answer) => {
  const server = http.createServer((req, res) => {
    const a = answer(new URL(req.url ?? "/", "http://x"))
    res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers })
    res.end(a.body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const goodNode = (index: number) =>
  JSON.stringify({
    action: "create",
    node: {
      key: "/registry/pods/ns/a",
      value: new TextDecoder().decode(encodeObject(pod("ns", "a"))),
      modifiedIndex: index,
      createdIndex: index
    }
  })

/** The watch's whole output (it must end by itself). */
const watchAll = async (keys: KeysClientShape, rv: number) => {
  const w = new Watching(etcdWatcher({ keys }, "/registry/pods", rv, { recursive: true }))
  return w.ended(20_000)
}

const status = (e: { object: unknown }) => e.object as Status

describe("etcd2 watcher: bad input ends the watch with one ERROR", () => {
  const cases: Array<{ name: string; answer: Answer; message: RegExp }> = [
    {
      name: "a body that is not JSON",
      answer: { status: 200, headers: { "X-Etcd-Index": "10" }, body: "<html>502 bad gateway</html>" },
      message: /^invalid JSON in etcd v2 response: /
    },
    {
      name: "a non-numeric X-Etcd-Index",
      answer: { status: 200, headers: { "X-Etcd-Index": "ten" }, body: goodNode(11) },
      message: /^invalid X-Etcd-Index header: "ten"$/
    },
    {
      name: "a missing X-Etcd-Index",
      answer: { status: 200, headers: {}, body: goodNode(11) },
      message: /^invalid X-Etcd-Index header: ""$/
    },
    {
      name: "JSON that is not a v2 response",
      answer: { status: 200, headers: { "X-Etcd-Index": "10" }, body: `{"action":"create","node":{"key":5}}` },
      message: /^unexpected etcd v2 response: /
    },
    {
      name: "an error status without an error body",
      answer: { status: 500, headers: { "X-Etcd-Index": "10" }, body: `{"hello":"world"}` },
      message: /^etcd v2 answered 500 without an error body$/
    }
  ]
  for (const c of cases) {
    for (const phase of ["the long poll", "the initial list (RV 0)"] as const) {
      it(`${c.name} in ${phase}`, async () => {
        const server = await brokenEtcd((url) => {
          const waiting = url.searchParams.get("wait") === "true"
          // the initial list itself is fine when the poll is under test, and the other way round
          if (phase === "the long poll" ? waiting : !waiting) return c.answer
          return {
            status: 200,
            headers: { "X-Etcd-Index": "10" },
            body: JSON.stringify({
              action: "get",
              node: { key: "/registry/pods", dir: true, modifiedIndex: 1, createdIndex: 1 }
            })
          }
        })
        try {
          const events = await watchAll(keysClient(server.url), phase === "the long poll" ? 9 : 0)
          expect(events).toHaveLength(1)
          expect(events[0]!.type).toBe("ERROR")
          expect(status(events[0]!)).toMatchObject({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: 500,
            reason: "InternalError"
          })
          expect(status(events[0]!).message).toMatch(c.message)
        } finally {
          await server.close()
        }
      })
    }
  }

  for (const phase of ["the long poll", "the initial list (RV 0)"] as const) {
    it(`a node whose value is not an object in ${phase}: skipped, the events after it delivered`, async () => {
      const bad = (action: string) =>
        JSON.stringify({
          action,
          node: { key: "/registry/pods/ns/bad", value: "[1,2,3]", modifiedIndex: 12, createdIndex: 12 }
        })
      const server = await brokenEtcd((url) => {
        const waitIndex = Number(url.searchParams.get("waitIndex") ?? "0")
        if (url.searchParams.get("wait") !== "true") {
          // the initial list: the bad node beside nothing else
          return {
            status: 200,
            headers: { "X-Etcd-Index": "12" },
            body: JSON.stringify({
              action: "get",
              node: {
                key: "/registry/pods",
                dir: true,
                nodes: [JSON.parse(bad("get")).node],
                modifiedIndex: 1,
                createdIndex: 1
              }
            })
          }
        }
        if (waitIndex <= 12) return { status: 200, headers: { "X-Etcd-Index": "12" }, body: bad("set") }
        if (waitIndex === 13) return { status: 200, headers: { "X-Etcd-Index": "13" }, body: goodNode(13) }
        return {
          status: 401,
          headers: { "X-Etcd-Index": "20" },
          body: JSON.stringify({
            errorCode: 401,
            message: "The event in requested index is outdated and cleared",
            cause: "the requested history has been cleared [15/14]",
            index: 20
          })
        }
      })
      try {
        const events = await watchAll(keysClient(server.url), phase === "the long poll" ? 11 : 0)
        expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"])
        expect((events[0]!.object as { metadata: { name: string } }).metadata.name).toBe("a")
        expect(status(events[1]!)).toMatchObject({ code: 410, reason: "Expired" })
      } finally {
        await server.close()
      }
    })
  }

  it("an etcd that refuses connections: retried by the schedule, then one ERROR (500) and the end", async () => {
    const server = await brokenEtcd(() => ({ status: 200, headers: {}, body: "" }))
    const url = server.url
    await server.close()
    let attempts = 0
    const keys = keysClient(url)
    const counting: KeysClientShape = {
      ...keys,
      watch: (k, o) => Effect.suspend(() => (attempts++, keys.watch(k, o)))
    }
    const w = new Watching(
      etcdWatcher({ keys: counting, retry: Schedule.recurs(3) }, "/registry/pods", 5, { recursive: true })
    )
    const events = await w.ended()
    expect(attempts).toBe(4)
    expect(events).toHaveLength(1)
    expect(status(events[0]!)).toMatchObject({ code: 500, reason: "InternalError" })
    expect(status(events[0]!).message).toMatch(/^Transport error/)
  })
})

describe.skipIf(skipEtcd)("etcd2 store on etcd 3.4: stored garbage", () => {
  let etcd: EtcdProcess
  let keys: KeysClientShape
  beforeAll(async () => {
    etcd = await startEtcdV2()
    keys = keysClient(etcd.clientUrl)
  })
  afterAll(async () => {
    await etcd?.dispose()
  })

  it("an undecodable object written to etcd: the watch skips it and goes on, reads fail with a Status error", async () => {
    const t = newStore(keys)
    const start = await Effect.runPromise(t.store.getCurrentResourceVersion)
    const w = await Watching.start(t.store, "/pods/", { recursive: true, resourceVersion: start.toString() })
    await runKeys(keys.set(`${t.pathPrefix}/pods/ns/bad`, "this is not json"))
    const good = await t.store.create("/pods/ns/good", pod("ns", "good")).pipe(Effect.runPromise)
    expect(await w.next(1)).toEqual([{ type: "ADDED", object: good }])
    await w.none(100)
    await w.stop()
    const get = await Effect.runPromiseExit(t.store.get("/pods/ns/bad"))
    expect(Exit.isFailure(get) && get.cause._tag === "Fail" && get.cause.error._tag).toBe("InternalError")
    const list = await Effect.runPromiseExit(t.store.getList("/pods/", { recursive: true }))
    expect(Exit.isFailure(list) && list.cause._tag === "Fail" && list.cause.error._tag).toBe("InternalError")
  })
})
