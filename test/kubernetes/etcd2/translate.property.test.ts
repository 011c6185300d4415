/**
 * translate against a model: random v2 action sequences (what etcd v2 would send for them:
 * create, set, compareAndSwap, delete, compareAndDelete, expire, plus directory events) over a few
 * keys, through the real etcdIncoming → translate → outgoing path, give exactly the events the model
 * of (object, predicate) says: enter = ADDED, stay = MODIFIED, leave or go = DELETED with the last
 * object at the change's index, outside = nothing.
 */
import { Chunk, Effect, FastCheck as fc, Mailbox, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { encodeObject } from "../../../src/kubernetes/api/codec.js"
import type { KubeObject } from "../../../src/kubernetes/api/object-meta.js"
import { newInternalError } from "../../../src/kubernetes/api/status.js"
import type { WatchEvent } from "../../../src/kubernetes/api/watch-event.js"
import type { KeysError } from "../../../src/kubernetes/etcd2/errors.js"
import { EventIndexCleared } from "../../../src/kubernetes/etcd2/errors.js"
import { exceptKey, type Incoming, makeSendResult, translate } from "../../../src/kubernetes/etcd2/etcd-watcher.js"
import { makeWatcherMarks } from "../../../src/kubernetes/etcd2/high-water-mark.js"
import type { Node, Response } from "../../../src/kubernetes/etcd2/node.js"
import type { StatusError } from "../../../src/kubernetes/api/status.js"
import type { SelectionPredicate } from "../../../src/kubernetes/storage/selection-predicate.js"
import { Everything, matches } from "../../../src/kubernetes/storage/selection-predicate.js"
import { pod, predicate } from "../storage/conformance/support.js"

type Op =
  | { readonly op: "create" | "set" | "compareAndSwap"; readonly key: number; readonly inside: boolean }
  | { readonly op: "delete" | "compareAndDelete" | "expire"; readonly key: number }
  | { readonly op: "mkdir"; readonly key: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constantFrom("create" as const, "set" as const, "compareAndSwap" as const),
    key: fc.nat(3),
    inside: fc.boolean()
  }),
  fc.record({ op: fc.constantFrom("delete" as const, "compareAndDelete" as const, "expire" as const), key: fc.nat(3) }),
  fc.record({ op: fc.constant("mkdir" as const), key: fc.nat(3) })
)

const predicates: Array<[string, SelectionPredicate]> = [
  ["everything", Everything],
  ["in=yes", predicate({ label: "in=yes" })],
  ["in!=yes", predicate({ label: "in!=yes" })],
  ["metadata.name=k1", predicate({ field: "metadata.name=k1" })]
]

const text = (o: KubeObject) => new TextDecoder().decode(encodeObject(o))
const at = (o: KubeObject, index: number): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, resourceVersion: String(index) }
})

interface Stored {
  readonly obj: KubeObject
  readonly node: Node
}

/** What etcd v2 sends for the ops (invalid ones — create on an existing key, CAS on a missing one — fail in etcd: no event) and what the model expects. */
const simulate = (ops: ReadonlyArray<Op>, pred: SelectionPredicate) => {
  const state = new Map<string, Stored>()
  const responses: Array<Response> = []
  const expected: Array<WatchEvent> = []
  let index = 100
  let version = 0
  for (const o of ops) {
    const key = `/registry/pods/ns/k${o.key}`
    const old = state.get(key)
    if (o.op === "mkdir") {
      index++
      responses.push({
        action: "set",
        node: { key: `/registry/pods/dir${index}`, dir: true, createdIndex: index, modifiedIndex: index },
        etcdIndex: index
      })
      continue
    }
    if (o.op === "create" || o.op === "set" || o.op === "compareAndSwap") {
      if (o.op === "create" && old !== undefined) continue
      if (o.op === "compareAndSwap" && old === undefined) continue
      index++
      const obj = pod("ns", `k${o.key}`, { labels: { in: o.inside ? "yes" : "no", v: String(version++) } })
      // v2 "set" re-creates the node (createdIndex moves); compareAndSwap keeps it
      const createdIndex = o.op === "compareAndSwap" && old !== undefined ? old.node.createdIndex : index
      const node: Node = { key, value: text(obj), createdIndex, modifiedIndex: index }
      responses.push({ action: o.op, node, ...(old === undefined ? {} : { prevNode: old.node }), etcdIndex: index })
      state.set(key, { obj, node })
      const curPasses = matches(pred, obj)
      const oldPasses = old !== undefined && matches(pred, old.obj)
      if (curPasses && oldPasses) expected.push({ type: "MODIFIED", object: at(obj, index) })
      else if (curPasses) expected.push({ type: "ADDED", object: at(obj, index) })
      else if (oldPasses) expected.push({ type: "DELETED", object: at(old!.obj, index) })
      continue
    }
    if (old === undefined) continue
    index++
    responses.push({
      action: o.op,
      node: { key, createdIndex: old.node.createdIndex, modifiedIndex: index },
      prevNode: old.node,
      etcdIndex: index
    })
    state.delete(key)
    if (matches(pred, old.obj)) expected.push({ type: "DELETED", object: at(old.obj, index) })
  }
  return { responses, expected }
}

/** responses → etcdIncoming (ended, or failed with `error`) → translate → outgoing, collected */
const runTranslate = (responses: ReadonlyArray<Incoming>, pred: SelectionPredicate, error?: KeysError | StatusError) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const incoming = yield* Mailbox.make<Incoming, KeysError | StatusError>(100)
        const outgoing = yield* Mailbox.make<WatchEvent>(100)
        // the producer, in its own fiber: it blocks when etcdIncoming is full
        yield* Effect.forkScoped(
          Effect.zipRight(incoming.offerAll(responses), error === undefined ? incoming.end : incoming.fail(error))
        )
        yield* Effect.forkScoped(
          translate(incoming, outgoing, makeSendResult(pred), makeWatcherMarks(), "Pod").pipe(Mailbox.into(outgoing))
        )
        return Chunk.toArray(yield* Stream.runCollect(Mailbox.toStream(outgoing)))
      })
    )
  )

describe("translate (property)", () => {
  for (const [name, pred] of predicates) {
    it(`random v2 action sequences give exactly the model's events (${name})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 300 }), async (ops) => {
          const { expected, responses } = simulate(ops, pred)
          expect(await runTranslate(responses, pred)).toEqual(expected)
        }),
        { numRuns: 60 }
      )
    })
  }

  it("the producer's error comes after every response queued before it: 401 is 410 Expired, anything else 500", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 250 }), async (ops) => {
        const { expected, responses } = simulate(ops, Everything)
        const cleared = new EventIndexCleared({
          errorCode: 401,
          message: "The event in requested index is outdated and cleared",
          cause: "the requested history has been cleared [1/2]",
          index: 3
        })
        const events = await runTranslate(responses, Everything, cleared)
        expect(events.slice(0, -1)).toEqual(expected)
        expect(events[events.length - 1]).toEqual({
          type: "ERROR",
          object: {
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            code: 410,
            reason: "Expired",
            message:
              "401: The event in requested index is outdated and cleared (the requested history has been cleared [1/2]) [3]"
          }
        })
      }),
      { numRuns: 30 }
    )
    const internal = await runTranslate([], Everything, newInternalError("boom"))
    expect(internal).toMatchObject([
      { type: "ERROR", object: { code: 500, reason: "InternalError", message: "Internal error occurred: boom" } }
    ])
  })

  it("an undecodable node is skipped (seed 001's sendAdd/sendModify/sendDelete): the events around it as if it were not there", async () => {
    const { responses, expected } = simulate(
      [
        { op: "create", key: 0, inside: true },
        { op: "set", key: 0, inside: true }
      ],
      Everything
    )
    const bad: Response = {
      action: "create",
      node: { key: "/registry/pods/ns/bad", value: "{not json", createdIndex: 500, modifiedIndex: 500 },
      etcdIndex: 500
    }
    const after = simulate([{ op: "create", key: 1, inside: true }], Everything)
    const events = await runTranslate([...responses, bad, ...after.responses], Everything)
    expect(events).toEqual([...expected, ...after.expected])
  })

  it("sendAdd: a node changed since it was created is MODIFIED, as the initial list reports it (ModifiedIndex ≠ CreatedIndex)", async () => {
    const node = (created: number, modified: number): Response => ({
      action: "get",
      node: { key: "/registry/pods/ns/a", value: text(pod("ns", "a")), createdIndex: created, modifiedIndex: modified },
      etcdIndex: 20
    })
    const events = await runTranslate([node(5, 5), node(5, 9)], Everything)
    expect(events).toEqual([
      { type: "ADDED", object: at(pod("ns", "a"), 5) },
      { type: "MODIFIED", object: at(pod("ns", "a"), 9) }
    ])
  })

  it("include (exceptKey of a list watch): events of the watched directory's own key are left out", async () => {
    const send = makeSendResult(Everything, {}, exceptKey("/registry/pods"))
    const own: Response = {
      action: "set",
      node: { key: "/registry/pods", value: text(pod("ns", "x")), createdIndex: 3, modifiedIndex: 3 },
      etcdIndex: 3
    }
    const child: Response = { ...own, node: { ...own.node, key: "/registry/pods/ns/x" } }
    expect(send(own)).toBeUndefined()
    expect(send({ ...own, action: "delete", prevNode: own.node })).toBeUndefined()
    expect(send(child)).toEqual({ type: "ADDED", object: at(pod("ns", "x"), 3) })
  })
})
