/** The v2 keys client against etcd 3.4 --enable-v2: every write, typed errors, X-Etcd-Index. */
import { Effect, Either, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseResponse } from "../../../src/kubernetes/etcd2/keys-client.js"
import { leaves } from "../../../src/kubernetes/etcd2/node.js"
import { type EtcdProcess, skipEtcd } from "../../support/etcd.js"
import { keysClient, runKeys, startEtcdV2 } from "./support.js"

const either = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))

describe.skipIf(skipEtcd)("etcd2 keys client on etcd 3.4 --enable-v2", () => {
  let etcd: EtcdProcess
  let keys: ReturnType<typeof keysClient>
  beforeAll(async () => {
    etcd = await startEtcdV2()
    keys = keysClient(etcd.clientUrl)
  })
  afterAll(async () => {
    await etcd?.dispose()
  })

  it("create, set, compareAndSwap, get, compareAndDelete, delete: actions, nodes, prevNodes and X-Etcd-Index", async () => {
    const c = await runKeys(keys.create("/kc/a/x", "1"))
    expect(c.action).toBe("create")
    expect(c.node).toMatchObject({ key: "/kc/a/x", value: "1" })
    expect(c.node.createdIndex).toBe(c.node.modifiedIndex)
    expect(c.etcdIndex).toBe(c.node.modifiedIndex)
    const s = await runKeys(keys.set("/kc/a/x", "2"))
    expect(s.action).toBe("set")
    expect(s.prevNode).toMatchObject({ value: "1", modifiedIndex: c.node.modifiedIndex })
    const cas = await runKeys(keys.compareAndSwap("/kc/a/x", "3", { prevIndex: s.node.modifiedIndex }))
    expect(cas.action).toBe("compareAndSwap")
    expect(cas.prevNode?.value).toBe("2")
    const casValue = await runKeys(keys.compareAndSwap("/kc/a/x", "4", { prevValue: "3" }))
    expect(casValue.node.value).toBe("4")
    await runKeys(keys.create("/kc/a/y", "y"))
    const g = await runKeys(keys.get("/kc", { recursive: true, sorted: true }))
    expect(g.action).toBe("get")
    expect(leaves(g.node).map((n) => [n.key, n.value])).toEqual([
      ["/kc/a/x", "4"],
      ["/kc/a/y", "y"]
    ])
    expect(g.etcdIndex).toBeGreaterThanOrEqual(casValue.node.modifiedIndex)
    const cad = await runKeys(keys.compareAndDelete("/kc/a/x", { prevIndex: casValue.node.modifiedIndex }))
    expect(cad.action).toBe("compareAndDelete")
    expect(cad.prevNode?.value).toBe("4")
    const d = await runKeys(keys.delete("/kc/a/y"))
    expect(d.action).toBe("delete")
    expect(d.node.modifiedIndex).toBe(d.etcdIndex)
  })

  it("v2 error bodies become typed errors with etcd's code, message, cause and index", async () => {
    await runKeys(keys.create("/ke/x", "1"))
    const exists = await either(keys.create("/ke/x", "2"))
    expect(Either.isLeft(exists) && exists.left).toMatchObject({
      _tag: "NodeExist",
      errorCode: 105,
      message: "Key already exists",
      cause: "/ke/x"
    })
    const cmp = await either(keys.compareAndSwap("/ke/x", "2", { prevIndex: 1 }))
    expect(Either.isLeft(cmp) && cmp.left).toMatchObject({
      _tag: "CompareFailed",
      errorCode: 101,
      message: "Compare failed"
    })
    const missing = await either(keys.get("/ke/nothing"))
    expect(Either.isLeft(missing) && missing.left).toMatchObject({
      _tag: "KeyNotFound",
      errorCode: 100,
      message: "Key not found",
      cause: "/ke/nothing"
    })
    if (Either.isLeft(missing) && missing.left._tag === "KeyNotFound") expect(missing.left.index).toBeGreaterThan(0)
    const ttl = await either(keys.set("/ke/y", "1", { ttl: -5 }))
    // a negative TTL is not sent (0 means none); a key with TTL exists
    expect(Either.isRight(ttl)).toBe(true)
  })

  it("watch: one long poll from waitIndex; an index older than the 1000-event window is 401", async () => {
    const c = await runKeys(keys.create("/kw/a", "1"))
    const w = await runKeys(keys.watch("/kw", { recursive: true, waitIndex: c.node.modifiedIndex }))
    expect(Option.getOrThrow(w)).toMatchObject({ action: "create", node: { key: "/kw/a", value: "1" } })
    for (let i = 0; i < 1005; i++) await runKeys(keys.set("/kw-other", String(i)))
    const cleared = await either(keys.watch("/kw", { recursive: true, waitIndex: c.node.modifiedIndex }))
    expect(Either.isLeft(cleared) && cleared.left).toMatchObject({
      _tag: "EventIndexCleared",
      errorCode: 401,
      message: "The event in requested index is outdated and cleared"
    })
  })
})

describe("parseResponse", () => {
  it("reads X-Etcd-Index and the body; refuses a bad header, a non-JSON body and a non-v2 body", () => {
    const ok = parseResponse(
      200,
      "7",
      `{"action":"get","node":{"key":"/a","value":"x","modifiedIndex":3,"createdIndex":3}}`
    )
    expect(ok).toEqual(
      Either.right({ action: "get", node: { key: "/a", value: "x", modifiedIndex: 3, createdIndex: 3 }, etcdIndex: 7 })
    )
    expect(parseResponse(200, "7", "")).toEqual(Either.right(undefined))
    for (const [h, body] of [
      ["x7", "{}"],
      [undefined, "{}"],
      ["7", "not json"],
      ["7", `{"action":"get"}`],
      ["-1", "{}"]
    ] as const) {
      const r = parseResponse(200, h, body)
      expect(Either.isLeft(r) && r.left._tag).toBe("V2ResponseError")
    }
    const e = parseResponse(404, "9", `{"errorCode":100,"message":"Key not found","cause":"/a","index":9}`)
    expect(Either.isLeft(e) && e.left._tag).toBe("KeyNotFound")
  })
})
