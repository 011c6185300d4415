/**
 * Lists from the Cacher's snapshots against etcd as the model: random creates, updates and deletes
 * over two namespaces; then at every RV the ring still holds, Exact lists (whole, and page by page
 * with random limits and selectors) through the Cacher equal the etcd3 store's Exact list at that
 * RV, and not one of them reaches etcd. Tokens minted by the cache are the etcd3 store's format:
 * etcd continues a cache page exactly where the cache would.
 */
import { it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import type { KubeList, KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import type { StorageShape } from "../../../src/kubernetes/storage/interfaces.js"
import { onOurServer } from "../storage/conformance/backend.js"
import { Everything, pod, predicate, run } from "../storage/conformance/support.js"
import { cacherOver } from "./support.js"

type Op =
  | { readonly kind: "put"; readonly ns: string; readonly name: string; readonly color: string }
  | {
      readonly kind: "delete"
      readonly ns: string
      readonly name: string
    }
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      ns: fc.constantFrom("a", "b"),
      name: fc.constantFrom("p", "q", "r", "s", "t"),
      color: fc.constantFrom("red", "blue")
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("delete" as const),
      ns: fc.constantFrom("a", "b"),
      name: fc.constantFrom("p", "q", "r", "s", "t")
    })
  }
)
const listArb = fc.record({
  at: fc.nat(),
  key: fc.constantFrom("/pods/", "/pods/a/", "/pods/b/"),
  color: fc.constantFrom("red", "blue", undefined),
  limit: fc.integer({ min: 1, max: 4 })
})

const names = (l: KubeList) =>
  l.items.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`)

describe("Cacher lists from snapshots vs etcd (our server)", () => {
  const ours = onOurServer()

  it.effect.prop(
    "Exact lists and pages at every RV the ring holds equal etcd's, served without asking etcd",
    [fc.array(opArb, { minLength: 1, maxLength: 20 }), fc.array(listArb, { minLength: 1, maxLength: 6 })],
    ([ops, lists]) =>
      Effect.promise(async () => {
        const { store } = ours().newStore()
        let etcdLists = 0
        const counted: StorageShape = {
          ...store,
          getList: (k, o) =>
            Effect.zipRight(
              Effect.sync(() => etcdLists++),
              store.getList(k, o)
            )
        }
        const { cacher, close } = await cacherOver(counted)
        const rvs: Array<bigint> = [await run(store.getCurrentResourceVersion)]
        const live = new Map<string, string>()
        for (const op of ops) {
          const key = `/pods/${op.ns}/${op.name}`
          const before = live.get(key)
          if (op.kind === "put") {
            if (before === op.color) continue
            const obj = pod(op.ns, op.name, { labels: { color: op.color } })
            const out =
              before === undefined
                ? await run(store.create(key, obj))
                : await run(store.guaranteedUpdate(key, { tryUpdate: () => Effect.succeed({ object: obj }) }))
            live.set(key, op.color)
            rvs.push(BigInt(out.metadata.resourceVersion!))
          } else if (before !== undefined) {
            const out = await run(store.delete(key))
            live.delete(key)
            rvs.push(BigInt(out.metadata.resourceVersion!))
          }
        }
        // the cache has caught up (a NotOlderThan read waits for it)
        await run(
          cacher.getList("/pods/", {
            recursive: true,
            resourceVersion: rvs[rvs.length - 1]!.toString(),
            resourceVersionMatch: "NotOlderThan"
          })
        )
        const listsBefore = etcdLists
        for (const l of lists) {
          const rv = rvs[l.at % rvs.length]!.toString()
          const pred = l.color === undefined ? Everything : predicate({ label: `color=${l.color}` })
          const whole = await run(
            store.getList(l.key, {
              recursive: true,
              resourceVersion: rv,
              resourceVersionMatch: "Exact",
              predicate: pred
            })
          )
          const etcdCalls = etcdLists
          const cached = await run(
            cacher.getList(l.key, {
              recursive: true,
              resourceVersion: rv,
              resourceVersionMatch: "Exact",
              predicate: pred
            })
          )
          expect(names(cached)).toEqual(names(whole))
          expect(cached.metadata.resourceVersion).toBe(rv)
          // page by page from the cache: full pages, the same RV, together the whole list
          const paged: Array<KubeObject> = []
          let token = ""
          let first = true
          for (let guard = 0; guard < 20; guard++) {
            const p = await run(
              cacher.getList(l.key, {
                recursive: true,
                resourceVersion: first ? rv : "",
                predicate:
                  l.color === undefined
                    ? predicate({ limit: l.limit, continue: token })
                    : predicate({ label: `color=${l.color}`, limit: l.limit, continue: token })
              })
            )
            expect(p.metadata.resourceVersion).toBe(rv)
            paged.push(...p.items)
            token = p.metadata.continue ?? ""
            if (token === "") break
            expect(p.items).toHaveLength(l.limit)
            if (l.color === undefined) {
              // without a selector the remaining count is told, and etcd continues the cache's page the same way
              expect(p.metadata.remainingItemCount).toBe(whole.items.length - paged.length)
              const fromEtcd = await run(
                store.getList(l.key, { recursive: true, predicate: predicate({ limit: l.limit, continue: token }) })
              )
              const fromCache = await run(
                cacher.getList(l.key, { recursive: true, predicate: predicate({ limit: l.limit, continue: token }) })
              )
              expect(names(fromCache)).toEqual(names(fromEtcd))
            }
            first = false
          }
          expect(names({ metadata: {}, items: paged })).toEqual(names(whole))
          expect(etcdLists).toBe(etcdCalls)
        }
        // only the reflector's own list reached etcd
        expect(etcdLists).toBe(listsBefore)
        await close()
      }),
    { fastCheck: { numRuns: 12 } }
  )
})
