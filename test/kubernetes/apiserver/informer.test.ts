/**
 * @kubernetes/client-node 1.4 informers (list + watch, as controllers use them) against the
 * apiserver: over a CRD's resource and over ConfigMaps, the informer's cache equals the store
 * after thousands of random writes, including a relist after a 410 — from the Cacher after an
 * apiserver restart, and from etcd's compaction with --watch-cache=false.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compactWith } from "../../../src/kubernetes/storage/etcd3/compact.js"
import { startInProcess, type InProcessServer } from "../../server/support/in-process.js"
import { freePort } from "../../support/ports.js"
import { STALL_MS, watchdog } from "../../support/stall.js"
import { kubeConfig } from "./clients.js"
import { configMap, newNamespace, request, startApiServer, widgetCRD } from "./support.js"

/** A seeded PRNG (mulberry32): the writes are random but the same on every run. */
const prng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** `n` random creates/updates/deletes by 4 concurrent writers over 10 names each; the apiserver is the judge of what exists. */
const randomWrites = (
  base: () => string,
  collection: string,
  make: (name: string, i: number) => unknown,
  n: number,
  seed: number
) => Promise.all([0, 1, 2, 3].map((w) => writer(base, collection, make, Math.ceil(n / 4), seed * 10 + w, `w${w}-`)))

const writer = async (
  base: () => string,
  collection: string,
  make: (name: string, i: number) => unknown,
  n: number,
  seed: number,
  prefix: string
) => {
  const rand = prng(seed)
  const present = new Set<string>()
  for (let i = 0; i < n; i++) {
    const name = `${prefix}${Math.floor(rand() * 10)}`
    const r = rand()
    if (!present.has(name)) {
      const c = await request(base(), "POST", collection, make(name, i))
      if (c.status === 201 || c.status === 409) present.add(name)
    } else if (r < 0.25) {
      await request(base(), "DELETE", `${collection}/${name}`)
      present.delete(name)
    } else {
      await request(base(), "PUT", `${collection}/${name}`, make(name, i))
    }
    progress++
  }
}

const storeState = async (base: string, collection: string): Promise<Record<string, string>> => {
  const r = await request(base, "GET", collection)
  return Object.fromEntries(r.body.items.map((o: any) => [o.metadata.name, o.metadata.resourceVersion]))
}

const cacheState = (informer: k8s.ObjectCache<k8s.KubernetesObject>): Record<string, string> =>
  Object.fromEntries(informer.list().map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]))

/** requests answered, informer events seen, phases begun: what the watchdog of each test watches */
let progress = 0

/**
 * Polls until the informer's cache equals the store. Fails when the cache has not moved for
 * STALL_MS while it differs: a lost event or a hung watch, not a slow machine.
 */
const converges = async (informer: k8s.ObjectCache<k8s.KubernetesObject>, base: string, collection: string) => {
  let since = Date.now()
  let last = ""
  for (;;) {
    const want = await storeState(base, collection)
    const got = cacheState(informer)
    const seen = JSON.stringify(Object.entries(got).sort())
    if (seen === JSON.stringify(Object.entries(want).sort())) return want
    if (seen !== last) {
      last = seen
      since = Date.now()
      progress++
    } else if (Date.now() - since > STALL_MS) expect(got).toEqual(want)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** An informer that, like client-node's example, restarts 100 ms after an error (e.g. the server was down). */
const startInformer = async <T extends k8s.KubernetesObject>(
  informer: k8s.Informer<T>,
  counters: { errors: number; relists: number }
) => {
  informer.on("error", () => {
    counters.errors++
    setTimeout(() => void informer.start().catch(() => {}), 100)
  })
  informer.on("connect", () => void counters.relists++)
  for (const event of ["add", "update", "delete"] as const) informer.on(event, () => void progress++)
  await informer.start()
}

/** an apiserver on `port` (fixed, so the informer's URL outlives a restart), counted as progress */
const apiOn = async (etcd: InProcessServer, port: number | undefined, watchCache = true) => {
  progress++
  const api = await startApiServer({
    etcdServers: [etcd.endpoint],
    ...(port === undefined ? {} : { port }),
    watchCache
  })
  progress++
  return api
}

// Each test owns its apiservers (a test that stopped one mid-way leaves nothing to the next) and
// has no wall-clock budget: its watchdog fails it when no request, event or phase moved for STALL_MS.
describe("apiserver: @kubernetes/client-node informers", () => {
  let etcd: InProcessServer

  beforeAll(async () => {
    etcd = await startInProcess()
  })
  afterAll(async () => {
    await etcd?.close()
  })

  it(
    "over a CRD's resource: the cache equals the store after 1200 random writes, and again after an apiserver restart (relist on the Cacher's 410)",
    () =>
      watchdog(
        "informer over a CRD's resource",
        () => progress,
        async () => {
          const port = await freePort()
          let api = await apiOn(etcd, port)
          const url = () => api.url
          try {
            await request(url(), "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD())
            const ns = await newNamespace(url())
            const collection = `/apis/example.com/v1/namespaces/${ns}/widgets`
            // the CRD's resource is served once the CRD controller saw it
            while ((await request(url(), "GET", collection)).status !== 200) await new Promise((r) => setTimeout(r, 20))
            const kc = kubeConfig(url())
            const custom = kc.makeApiClient(k8s.CustomObjectsApi)
            const informer = k8s.makeInformer<k8s.KubernetesObject>(
              kc,
              collection,
              () =>
                custom.listNamespacedCustomObject({
                  group: "example.com",
                  version: "v1",
                  namespace: ns,
                  plural: "widgets"
                }) as never
            )
            const counters = { errors: 0, relists: 0 }
            await startInformer(informer, counters)
            const widget = (name: string, i: number) => ({
              apiVersion: "example.com/v1",
              kind: "Widget",
              metadata: { name, labels: { i: String(i % 7) } },
              spec: { size: i }
            })
            try {
              await randomWrites(url, collection, widget, 1200, 1)
              await converges(informer, url(), collection)
              // restart: the informer's watch breaks; it restarts from its RV, the new cache answers 410, it relists
              await api.close()
              api = await apiOn(etcd, port)
              await randomWrites(url, collection, widget, 200, 2)
              const state = await converges(informer, url(), collection)
              expect(Object.keys(state).length).toBeGreaterThan(0)
              expect(counters.relists).toBeGreaterThan(1)
            } finally {
              await informer.stop()
            }
          } finally {
            await api.close()
          }
        }
      ),
    0
  )

  it(
    "over ConfigMaps: the cache equals the store after 1200 random writes, and after etcd compacted past the informer's RV (410 from etcd, relist)",
    () =>
      watchdog(
        "informer over ConfigMaps",
        () => progress,
        async () => {
          const port = await freePort()
          let api = await apiOn(etcd, port)
          const url = () => api.url
          try {
            const ns = await newNamespace(url())
            const collection = `/api/v1/namespaces/${ns}/configmaps`
            const kc = kubeConfig(url())
            const core = kc.makeApiClient(k8s.CoreV1Api)
            const informer = k8s.makeInformer<k8s.KubernetesObject>(
              kc,
              collection,
              () => core.listNamespacedConfigMap({ namespace: ns }) as never
            )
            const counters = { errors: 0, relists: 0 }
            await startInformer(informer, counters)
            const cm = (name: string, i: number) => configMap(name, { v: String(i) })
            try {
              await randomWrites(url, collection, cm, 1200, 3)
              await converges(informer, url(), collection)
              const relistsBefore = counters.relists
              // the apiserver goes away; meanwhile writes happen and etcd is compacted past the informer's RV
              await api.close()
              const other = await apiOn(etcd, undefined)
              await randomWrites(() => other.url, collection, cm, 200, 4)
              const rev = BigInt((await request(other.url, "GET", collection)).body.metadata.resourceVersion)
              await other.close()
              progress++
              await Effect.runPromise(
                Effect.scoped(
                  Effect.flatMap(
                    Effect.promise(() => import("../../../src/client/client.js")),
                    ({ make }) =>
                      Effect.flatMap(Effect.orDie(make({ endpoints: [etcd.endpoint] })), (client) =>
                        compactWith(client, rev)
                      )
                  )
                )
              )
              // back without the watch cache: the informer's watch goes to etcd, which answers 410
              api = await apiOn(etcd, port, false)
              await randomWrites(url, collection, cm, 100, 5)
              await converges(informer, url(), collection)
              expect(counters.relists).toBeGreaterThan(relistsBefore)
            } finally {
              await informer.stop()
            }
          } finally {
            await api.close()
          }
        }
      ),
    0
  )
})
