/**
 * InitialEvents: what a watch from resourceVersion 0 starts with, shared while the watch cache is
 * unchanged. Against a model (the cache's objects under the key that pass the selector, in key
 * order, at the cache's RV), after any events, bookmarks and relists, with lists asked for again
 * and again in between.
 */
import { it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { describe, expect } from "vitest"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import * as Labels from "../../../src/kubernetes/api/labels.js"
import { filterFor } from "../../../src/kubernetes/cacher/cacher-deps.js"
import { InitialEvents } from "../../../src/kubernetes/cacher/initial-events.js"
import { makeWatchCache } from "../../../src/kubernetes/cacher/watch-cache.js"
import { defaultAttrs, selectionPredicate } from "../../../src/kubernetes/storage/selection-predicate.js"

const keyOf = (o: KubeObject) => `/cm/${o.metadata.namespace}/${o.metadata.name}`
const ns = fc.constantFrom("a", "a1", "b")
const name = fc.constantFrom("x", "x1", "y")
const app = fc.constantFrom("web", "db")
const op = fc.oneof(
  fc.record({ kind: fc.constantFrom("ADDED" as const, "MODIFIED" as const, "DELETED" as const), ns, name, app }),
  fc.record({ kind: fc.constant("REPLACE" as const), objects: fc.array(fc.tuple(ns, name, app), { maxLength: 8 }) }),
  fc.record({ kind: fc.constant("BOOKMARK" as const) }),
  fc.record({
    kind: fc.constant("WATCH" as const),
    key: fc.constantFrom("/cm/", "/cm/a/", "/cm/a1/", "/cm/a/x", "/cm/b/y"),
    selector: fc.constantFrom("", "app=web", "app!=web", "app in (web,db)")
  })
)

describe("InitialEvents", () => {
  it.prop(
    "a watch from 0 starts with the objects under its key that pass its selector, shared only while the cache is unchanged",
    [fc.array(op, { maxLength: 50 })],
    ([ops]) => {
      const wc = makeWatchCache(keyOf, defaultAttrs, () => 0)
      const initial = new InitialEvents()
      const model = new Map<string, KubeObject>()
      let rv = 1n
      wc.replace([], rv)
      const o = (namespace: string, n: string, label: string, v: bigint): KubeObject => ({
        metadata: { name: n, namespace, labels: { app: label }, resourceVersion: String(v) }
      })
      for (const step of ops) {
        if (step.kind === "WATCH") {
          const recursive = step.key.endsWith("/")
          const label = Labels.parse(step.selector)
          if (Either.isLeft(label)) throw new Error(label.left)
          const pred = selectionPredicate({ label: label.right })
          const got = initial.of(
            wc,
            step.key,
            recursive,
            `${label.right.toString()} `,
            filterFor(step.key, recursive, pred)
          )
          const want = [...model.entries()]
            .filter(
              ([k, x]) =>
                (recursive ? k.startsWith(step.key) : k === step.key) && label.right.matches(x.metadata.labels ?? {})
            )
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([, x]) => ({ type: "ADDED", object: x }))
          expect(got.events).toEqual(want)
          expect(got.resourceVersion).toBe(rv)
          continue
        }
        rv++
        if (step.kind === "BOOKMARK") {
          wc.updateResourceVersion(rv)
        } else if (step.kind === "REPLACE") {
          const objects = step.objects.map(([namespace, n, a]) => o(namespace, n, a, rv))
          wc.replace(objects, rv)
          model.clear()
          for (const x of objects) model.set(keyOf(x), x)
        } else {
          const x = o(step.ns, step.name, step.app, rv)
          wc.processEvent(step.kind, x, rv)
          if (step.kind === "DELETED") model.delete(keyOf(x))
          else model.set(keyOf(x), x)
        }
      }
    }
  )

  it("two watches of one key and selector at one cache state share one list; an event makes the next one anew", () => {
    const wc = makeWatchCache(keyOf, defaultAttrs, () => 0)
    wc.replace([{ metadata: { name: "x", namespace: "a" } }], 5n)
    const initial = new InitialEvents()
    const all = (k: string, attrs: unknown) => k.startsWith("/cm/a/") && attrs !== undefined
    const first = initial.of(wc, "/cm/a/", true, "", all)
    expect(initial.of(wc, "/cm/a/", true, "", all)).toBe(first)
    // another selector text is another list
    expect(initial.of(wc, "/cm/a/", true, "app=web ", all)).not.toBe(first)
    // a bookmark: same objects, a newer RV, so a new list that says so
    wc.updateResourceVersion(6n)
    const bookmarked = initial.of(wc, "/cm/a/", true, "", all)
    expect(bookmarked).not.toBe(first)
    expect(bookmarked.resourceVersion).toBe(6n)
    expect(bookmarked.events).toEqual(first.events)
    wc.processEvent("MODIFIED", { metadata: { name: "x", namespace: "a", labels: { v: "2" } } }, 7n)
    const next = initial.of(wc, "/cm/a/", true, "", all)
    expect(next).not.toBe(first)
    expect(next.resourceVersion).toBe(7n)
    expect(next.events.map((e) => (e.object as KubeObject).metadata.labels)).toEqual([{ v: "2" }])
  })
})
