/**
 * The etcd3 npm client (microsoft/etcd3 1.1.2, written by others against real etcd) against our
 * server, unchanged: KV, txn, watch (prefix, prev kv, start revision, many watchers on one
 * stream), leases with keep-alive and expiry, election and lock.
 */
import { Etcd3, EtcdLockFailedError, type IKeyValue } from "etcd3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, type InProcessServer, sleep, startInProcess } from "./support/in-process.js"

describe("etcd3 npm client against etcd-effect", () => {
  let srv: InProcessServer
  let client: Etcd3
  beforeAll(async () => {
    srv = await startInProcess()
    client = new Etcd3({ hosts: `http://${srv.endpoint}` })
  })
  afterAll(async () => {
    client?.close()
    await srv?.close()
  })

  it("KV: put, get, getAll with prefix, delete, count", async () => {
    await client.put("fruit/apple").value("red")
    await client.put("fruit/banana").value("yellow")
    await client.put("veg/kale").value("green")
    expect(await client.get("fruit/apple").string()).toBe("red")
    expect(await client.getAll().prefix("fruit/").strings()).toEqual({ "fruit/apple": "red", "fruit/banana": "yellow" })
    expect(await client.getAll().prefix("fruit/").count()).toBe(2)
    expect(await client.get("nope").string()).toBeNull()
    await client.delete().key("fruit/apple")
    expect(await client.getAll().prefix("fruit/").keys()).toEqual(["fruit/banana"])
  })

  it("txn: compare-and-swap both ways", async () => {
    await client.put("cas").value("1")
    const ok = await client
      .if("cas", "Value", "==", "1")
      .then(client.put("cas").value("2"))
      .else(client.get("cas"))
      .commit()
    expect(ok.succeeded).toBe(true)
    const no = await client
      .if("cas", "Value", "==", "1")
      .then(client.put("cas").value("3"))
      .else(client.get("cas"))
      .commit()
    expect(no.succeeded).toBe(false)
    expect(no.responses[0]!.response_range!.kvs[0]!.value.toString()).toBe("2")
  })

  it("watch: prefix with previous kv, from a start revision, many watchers on one stream", async () => {
    const seen: Array<[string, string, string | undefined]> = []
    const w = await client.watch().prefix("w/").withPreviousKV().create()
    w.on("put", (kv: IKeyValue, prev?: IKeyValue) => seen.push(["put", kv.key.toString(), prev?.value.toString()]))
    w.on("delete", (kv: IKeyValue, prev?: IKeyValue) =>
      seen.push(["delete", kv.key.toString(), prev?.value.toString()])
    )
    const first = await client.put("w/a").value("1").exec()
    await client.put("w/a").value("2")
    await client.delete().key("w/a")
    await eventually(() => seen.length === 3, 5000, "3 events")
    expect(seen).toEqual([
      ["put", "w/a", undefined],
      ["put", "w/a", "1"],
      ["delete", "w/a", "2"]
    ])
    await w.cancel()

    const replay: Array<string> = []
    const h = await client.watch().prefix("w/").startRevision(first.header.revision).create()
    h.on("data", (r) => r.events.forEach((e) => replay.push(`${e.type}:${e.kv.key.toString()}:${e.kv.mod_revision}`)))
    await eventually(() => replay.length === 3, 5000, "replayed history")
    expect(replay[0]).toBe(`Put:w/a:${first.header.revision}`)
    await h.cancel()

    const watchers = await Promise.all(Array.from({ length: 20 }, (_, i) => client.watch().key(`many/${i}`).create()))
    const got = new Set<string>()
    watchers.forEach((wt) => wt.on("put", (kv: IKeyValue) => got.add(kv.key.toString())))
    for (let i = 0; i < 20; i++) await client.put(`many/${i}`).value("x")
    await eventually(() => got.size === 20, 5000, "20 watchers to fire")
    expect(srv.server.calls().streams).toBeLessThanOrEqual(2)
    await Promise.all(watchers.map((wt) => wt.cancel()))
  })

  it("leases: keep-alive holds a key past its TTL; without it the key expires", async () => {
    const kept = client.lease(2)
    const dropped = client.lease(2, { autoKeepAlive: false })
    await kept.put("lease/kept").value("1")
    await dropped.put("lease/dropped").value("1")
    let lost = false
    kept.on("lost", () => {
      lost = true
    })
    await eventually(async () => (await client.get("lease/dropped").string()) === null, 8000, "dropped lease to expire")
    await sleep(500)
    expect(await client.get("lease/kept").string()).toBe("1")
    expect(lost).toBe(false)
    const ka = await kept.keepaliveOnce()
    expect(ka.TTL).toBe("2")
    await kept.revoke()
    expect(await client.get("lease/kept").string()).toBeNull()
  })

  it("lock: exclusive until released", async () => {
    const a = client.lock("the-lock")
    await a.acquire()
    await expect(client.lock("the-lock").acquire()).rejects.toBeInstanceOf(EtcdLockFailedError)
    await a.release()
    const b = client.lock("the-lock")
    await b.acquire()
    await b.release()
  })

  it("election: the first campaign leads, the next takes over on resign, observers follow", async () => {
    const election = client.election("leader-test", 5)
    const observer = await election.observe()
    const leaders: Array<string | undefined> = []
    observer.on("change", (v) => leaders.push(v))
    const one = election.campaign("one")
    await one.wait()
    const two = election.campaign("two")
    let twoElected = false
    two.on("elected", () => {
      twoElected = true
    })
    await sleep(300)
    expect(twoElected).toBe(false)
    expect(await election.leader()).toBe("one")
    await one.resign()
    await eventually(() => twoElected, 5000, "second campaign to be elected")
    expect(await election.leader()).toBe("two")
    await eventually(() => leaders.includes("two"), 5000, "observer to see the new leader")
    await two.resign()
    await observer.cancel()
  })
})
