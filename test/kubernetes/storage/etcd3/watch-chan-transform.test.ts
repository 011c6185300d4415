/**
 * The watchChan's transform (etcd3/watcher.go): fed etcd watch responses directly, so every case is
 * about what it makes of them. The property: a client that applies the emitted events to its own
 * cache (ADDED inserts a new key, MODIFIED replaces an existing one, DELETED removes one) holds
 * exactly the objects the predicate selects, after every revision.
 */
import { it } from "@effect/vitest"
import { Chunk, Effect, FastCheck as fc, Stream } from "effect"
import { describe, expect } from "vitest"
import type { EtcdClientShape } from "../../../../src/client/client.js"
import { EventType, type Event } from "../../../../src/client/key-value.js"
import type { WatchResponse } from "../../../../src/client/watch-response.js"
import type { KubeObject } from "../../../../src/kubernetes/api/object-meta.js"
import type { WatchEvent } from "../../../../src/kubernetes/api/watch-event.js"
import { Everything, type SelectionPredicate } from "../../../../src/kubernetes/storage/selection-predicate.js"
import { watchChan } from "../../../../src/kubernetes/storage/etcd3/watcher.js"
import { identity, type ValueTransformer } from "../../../../src/kubernetes/storage/value/transformer.js"

const enc = new TextEncoder()
const PREFIX = "/registry/pods/"

type Op =
  | { readonly kind: "put"; readonly name: string; readonly color: string }
  | { readonly kind: "delete"; readonly name: string }

const objectOf = (name: string, color: string, gen: number): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "ns", labels: { color } },
  spec: { gen }
})

/** etcd's responses for a sequence of ops from revision 2 on (one revision each), with prev_kv */
const history = (ops: ReadonlyArray<Op>) => {
  const live = new Map<
    string,
    { value: Uint8Array; createRevision: bigint; modRevision: bigint; version: bigint; obj: KubeObject }
  >()
  const responses: Array<WatchResponse> = []
  const states: Array<Map<string, KubeObject>> = []
  let rev = 1n
  ops.forEach((op, i) => {
    const key = enc.encode(PREFIX + "ns/" + op.name)
    const prev = live.get(op.name)
    if (op.kind === "delete" && prev === undefined) return
    rev++
    const prevKv =
      prev === undefined
        ? undefined
        : {
            key,
            createRevision: prev.createRevision,
            modRevision: prev.modRevision,
            version: prev.version,
            value: prev.value,
            lease: 0n
          }
    let event: Event
    if (op.kind === "put") {
      const obj = objectOf(op.name, op.color, i)
      const value = enc.encode(JSON.stringify(obj))
      const createRevision = prev?.createRevision ?? rev
      const version = (prev?.version ?? 0n) + 1n
      live.set(op.name, { value, createRevision, modRevision: rev, version, obj })
      event = { type: EventType.PUT, kv: { key, createRevision, modRevision: rev, version, value, lease: 0n }, prevKv }
    } else {
      live.delete(op.name)
      event = {
        type: EventType.DELETE,
        kv: { key, createRevision: 0n, modRevision: rev, version: 0n, value: new Uint8Array(), lease: 0n },
        prevKv
      }
    }
    responses.push({
      header: { clusterId: 1n, memberId: 1n, revision: rev, raftTerm: 1n },
      events: [event],
      created: false,
      progressNotify: false
    })
    states.push(new Map([...live].map(([n, s]) => [n, s.obj])))
  })
  return { responses, states }
}

const fakeClient = (responses: ReadonlyArray<WatchResponse>): EtcdClientShape =>
  ({ watch: () => Stream.fromIterable(responses) }) as unknown as EtcdClientShape

const colorIs = (color: string): SelectionPredicate => ({
  ...Everything,
  label: { matches: (l) => l["color"] === color, empty: () => false, toString: () => `color=${color}` }
})

const run = (
  responses: ReadonlyArray<WatchResponse>,
  predicate: SelectionPredicate,
  transformer: ValueTransformer = identity
) =>
  Effect.runPromise(
    Stream.runCollect(
      watchChan(
        {
          client: fakeClient(responses),
          transformer,
          groupResource: { group: "", resource: "pods" },
          typeMeta: { apiVersion: "v1", kind: "Pod" },
          getCurrentResourceVersion: Effect.succeed(1n)
        },
        PREFIX,
        1n,
        { recursive: true, predicate }
      )
    )
  ).then(Chunk.toArray)

const opArb = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    name: fc.constantFrom("a", "b", "c"),
    color: fc.constantFrom("red", "blue")
  }),
  fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom("a", "b", "c") })
)

describe("watchChan transform (etcd3/watcher.go)", () => {
  it.effect.prop(
    "a cache built from the events holds exactly the selected objects after every revision",
    [fc.array(opArb, { maxLength: 40 }), fc.constantFrom("red", "blue", "all")],
    ([ops, color]) =>
      Effect.promise(async () => {
        const { responses, states } = history(ops)
        const pred = color === "all" ? Everything : colorIs(color)
        const events = await run(responses, pred)
        const cache = new Map<string, KubeObject>()
        let at = 0
        const revOf = (e: WatchEvent) => BigInt(e.object.metadata!.resourceVersion!)
        for (const e of events) {
          expect(e.type).not.toBe("ERROR")
          const obj = e.object as KubeObject
          const name = obj.metadata.name!
          // events come once per revision, in order
          const rev = revOf(e)
          const idx = responses.findIndex((r) => r.header.revision === rev)
          expect(idx).toBeGreaterThanOrEqual(at)
          // catch the cache up to this revision: no event may have been skipped before it
          for (; at < idx; at++) expectCacheIs(cache, states[at]!, pred)
          if (e.type === "ADDED") {
            expect(cache.has(name)).toBe(false)
            cache.set(name, obj)
          } else if (e.type === "MODIFIED") {
            expect(cache.has(name)).toBe(true)
            cache.set(name, obj)
          } else if (e.type === "DELETED") {
            expect(cache.has(name)).toBe(true)
            // the last state the watcher could see, with the deletion's revision
            expect({ ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } }).toEqual({
              ...cache.get(name)!,
              metadata: { ...cache.get(name)!.metadata, resourceVersion: undefined }
            })
            cache.delete(name)
          }
          expectCacheIs(cache, states[idx]!, pred)
          at = idx + 1
        }
        for (; at < states.length; at++) expectCacheIs(cache, states[at]!, pred)
      })
  )

  it("turns a progress notification into a BOOKMARK of the watched kind", async () => {
    const events = await run(
      [
        {
          header: { clusterId: 1n, memberId: 1n, revision: 7n, raftTerm: 1n },
          events: [],
          created: false,
          progressNotify: true
        }
      ],
      Everything
    )
    expect(events).toEqual([
      { type: "BOOKMARK", object: { apiVersion: "v1", kind: "Pod", metadata: { resourceVersion: "7" } } }
    ])
  })

  it("an update without its previous value (compacted) is an ERROR, and nothing follows", async () => {
    const { responses } = history([
      { kind: "put", name: "a", color: "red" },
      { kind: "put", name: "a", color: "blue" },
      { kind: "put", name: "b", color: "blue" }
    ])
    const broken = responses.map((r, i) =>
      i === 1 ? { ...r, events: r.events.map((e) => ({ type: e.type, kv: e.kv })) } : r
    )
    const events = await run(broken, Everything)
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"])
    expect(events[1]!.object).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'Internal error occurred: etcd event received with PrevKv=nil (key="/registry/pods/ns/a", modRevision=3, type=PUT)',
      reason: "InternalError",
      details: {
        causes: [
          { message: 'etcd event received with PrevKv=nil (key="/registry/pods/ns/a", modRevision=3, type=PUT)' }
        ]
      },
      code: 500
    })
  })

  it("a value that does not decode or decrypt is an ERROR for that watch only, after the events before it", async () => {
    const { responses } = history([
      { kind: "put", name: "a", color: "red" },
      { kind: "put", name: "b", color: "red" },
      { kind: "put", name: "c", color: "red" }
    ])
    const failing: ValueTransformer = {
      fromStorage: (data, key) =>
        key.endsWith("/b") ? { ok: false, error: "no matching prefix found" } : identity.fromStorage(data, key),
      toStorage: identity.toStorage
    }
    const events = await run(responses, Everything, failing)
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"])
    expect((events[1]!.object as { message: string }).message).toBe("Internal error occurred: no matching prefix found")
    const garbage = responses.map((r, i) =>
      i === 0 ? { ...r, events: r.events.map((e) => ({ ...e, kv: { ...e.kv, value: enc.encode("{not json") } })) } : r
    )
    const bad = await run(garbage, Everything)
    expect(bad.map((e) => e.type)).toEqual(["ERROR"])
    expect((bad[0]!.object as { code: number }).code).toBe(500)
  })

  it("a DELETE whose previous value does not decode or decrypt is 500 StoreReadError (transformIfCorruptObjectError)", async () => {
    const { responses } = history([
      { kind: "put", name: "a", color: "red" },
      { kind: "delete", name: "a" }
    ])
    // the deletion's prev_kv is garbage: the object was stored corrupt
    const corrupt = responses.map((r, i) =>
      i === 1
        ? { ...r, events: r.events.map((e) => ({ ...e, prevKv: { ...e.prevKv!, value: enc.encode("{not json") } })) }
        : r
    )
    const events = await run(corrupt, Everything)
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"])
    expect(events[1]!.object).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        "saw a DELETED event, but object data is corrupt - object not decodable revision=3: couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string",
      reason: "StoreReadError",
      code: 500
    })
    const undecryptable: ValueTransformer = {
      fromStorage: (data, key) =>
        data.length > 0 && new TextDecoder().decode(data).includes("gen") && responses.length > 0 && key.endsWith("/a")
          ? { ok: false, error: "no matching prefix found" }
          : identity.fromStorage(data, key),
      toStorage: identity.toStorage
    }
    // only the DELETE's previous value fails to decrypt (a PUT's failure stays an InternalError)
    const onlyDelete = await run(responses.slice(1), Everything, undecryptable)
    expect(onlyDelete).toHaveLength(1)
    expect(onlyDelete[0]!.object).toMatchObject({
      reason: "StoreReadError",
      code: 500,
      message:
        "saw a DELETED event, but object data is corrupt - data from the storage is not transformable revision=0: no matching prefix found"
    })
  })
})

const expectCacheIs = (cache: Map<string, KubeObject>, state: Map<string, KubeObject>, pred: SelectionPredicate) => {
  const selected = [...state]
    .filter(([, o]) => pred.label.matches(o.metadata.labels ?? {}))
    .map(([n, o]) => [n, o["spec"]])
  expect([...cache].map(([n, o]) => [n, o["spec"]]).sort()).toEqual(selected.sort())
}
