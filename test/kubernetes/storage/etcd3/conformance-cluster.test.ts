/**
 * The etcd3 store on a 3-member etcd 3.4 cluster on loopback: the whole conformance suite with the
 * client given every member, then what only a cluster can show — the leader SIGKILLed during a
 * watch with writes going on, and GuaranteedUpdate from several processes at once.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../../src/kubernetes/api/watch-event.js"
import { ensureBuilt, repoRoot } from "../../../server/support/process.js"
import { EtcdProcess, skipEtcd } from "../../../support/etcd.js"
import { makeBackend } from "../conformance/backend.js"
import { runStorageConformance } from "../conformance/index.js"
import { pod, run, Watching } from "../conformance/support.js"

const here = path.dirname(fileURLToPath(import.meta.url))

describe.skipIf(skipEtcd)("storage on a 3-member etcd 3.4 cluster", () => {
  let members: Array<EtcdProcess>
  let backend: Awaited<ReturnType<typeof makeBackend>>
  beforeAll(async () => {
    members = await EtcdProcess.cluster(3)
    backend = await makeBackend(
      "etcd 3.4 ×3",
      members.map((m) => m.endpoint)
    )
  })
  afterAll(async () => {
    await backend?.close()
    await Promise.all((members ?? []).map((m) => m.dispose()))
  })

  describe("conformance", () => {
    runStorageConformance(() => backend)
  })

  const leader = async (): Promise<EtcdProcess> => {
    for (;;) {
      for (const m of members) {
        if (m.running && (await m.metric("etcd_server_is_leader").catch(() => undefined)) === 1) return m
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  it("the leader is killed during a watch with writes going on: nothing lost, repeated or reordered", async () => {
    const { store } = backend.newStore()
    const start = await run(store.getCurrentResourceVersion)
    // the watch resumes after an ERROR from the last RV it saw, as a reflector does
    const seen: Array<WatchEvent> = []
    let lastRV = start.toString()
    let watching = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: lastRV })
    const acknowledged: Array<KubeObject> = []
    const writes = (async () => {
      for (let i = 0; i < 60; i++) {
        const r = await Effect.runPromise(
          Effect.either(store.create(`/pods/ns/p${String(i).padStart(2, "0")}`, pod("ns", `p${i}`)))
        )
        if (r._tag === "Right") acknowledged.push(r.right)
        if (i === 20) {
          const l = await leader()
          await l.stop("SIGKILL")
          setTimeout(() => void l.startProcess(), 1500)
        }
      }
    })()
    const deadline = Date.now() + 60_000
    await writes
    while (Date.now() < deadline) {
      const batch = await watching.next(1, 5000).catch(() => [] as Array<WatchEvent>)
      for (const e of batch) {
        if (e.type === "ERROR") {
          await watching.stop()
          watching = await Watching.start(store, "/pods/", { recursive: true, resourceVersion: lastRV })
          continue
        }
        seen.push(e)
        lastRV = (e.object as KubeObject).metadata.resourceVersion!
      }
      if (
        seen.length >= acknowledged.length &&
        acknowledged.every((a) => seen.some((s) => (s.object as KubeObject).metadata.name === a.metadata.name))
      )
        break
    }
    await watching.stop()
    // a write that failed on the client side may still have committed: the watch shows what etcd has
    const rvs = seen.map((e) => BigInt((e.object as KubeObject).metadata.resourceVersion!))
    expect(rvs).toEqual([...rvs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    expect(new Set(rvs).size).toBe(rvs.length)
    for (const a of acknowledged) expect(seen.map((e) => e.object)).toContainEqual(a)
    expect(seen.every((e) => e.type === "ADDED")).toBe(true)
    const listed = await run(store.getList("/pods/", { recursive: true }))
    expect(listed.items.map((o) => o.metadata.name)).toEqual(seen.map((e) => (e.object as KubeObject).metadata.name))
    expect(acknowledged.length).toBeGreaterThan(40)
  })

  it("GuaranteedUpdate from 4 processes at once never loses an update", async () => {
    await ensureBuilt()
    const { pathPrefix, store } = backend.newStore()
    await run(store.create("/pods/ns/counter", { ...pod("ns", "counter"), count: 0 }))
    const endpoints = members.map((m) => m.endpoint).join(",")
    const writer = () =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          [path.join(here, "fixtures/increment.mjs"), repoRoot, endpoints, pathPrefix, "25"],
          { timeout: 120_000 },
          (e, out, err) => (e === null ? resolve(out.trim()) : reject(new Error(`${e.message}\n${err}`)))
        )
      )
    expect(await Promise.all([writer(), writer(), writer(), writer()])).toEqual(["done", "done", "done", "done"])
    expect((await run(store.get("/pods/ns/counter")))!["count"]).toBe(100)
  })
})
