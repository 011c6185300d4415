/**
 * `etcdctl make-mirror` (etcd 3.4) between etcd 3.4 and our server, both ways: it copies every key
 * of the prefix, then follows live puts and deletes (a prefix Watch from the copy's revision), and
 * afterwards the two stores hold the same keys and values.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, etcdctlAvailable, requireEtcd, skipEtcd } from "../support/etcd.js"
import { CtlProcess, etcdctl, stopAll } from "./support/etcdctl.js"
import { eventually, type InProcessServer, startInProcess } from "./support/in-process.js"

const skip = skipEtcd || (!etcdctlAvailable && !requireEtcd)

/** key → value of every key under `prefix`, as etcdctl reads it */
const contents = async (endpoint: string, prefix: string): Promise<Record<string, string>> => {
  const r = await etcdctl(endpoint, ["get", prefix, "--prefix", "-w", "json"])
  const kvs: Array<{ key: string; value: string }> = JSON.parse(r.stdout).kvs ?? []
  return Object.fromEntries(
    kvs.map((kv) => [Buffer.from(kv.key, "base64").toString(), Buffer.from(kv.value, "base64").toString()])
  )
}

describe.skipIf(skip)("etcdctl make-mirror between etcd 3.4 and etcd-effect", () => {
  let etcd: EtcdProcess
  let ours: InProcessServer

  beforeAll(async () => {
    ;[etcd, ours] = await Promise.all([EtcdProcess.start(), startInProcess()])
  })
  afterAll(async () => {
    await stopAll()
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  const mirror = async (from: string, to: string, prefix: string) => {
    // existing keys, some overwritten and some deleted before the mirror starts
    for (let i = 0; i < 40; i++) await etcdctl(from, ["put", `${prefix}${i}`, `v${i}`])
    for (let i = 0; i < 10; i++) await etcdctl(from, ["put", `${prefix}${i}`, `w${i}`])
    await etcdctl(from, ["del", `${prefix}3`])
    await etcdctl(from, ["put", `/outside${prefix}`, "not mirrored"])
    const mm = new CtlProcess(from, ["make-mirror", "--prefix", prefix, to])
    const copied = await contents(from, prefix)
    await eventually(
      async () => JSON.stringify(await contents(to, prefix)) === JSON.stringify(copied),
      20_000,
      `the copy (${mm.stderr})`
    )
    // live writes while it follows: puts, overwrites, a range delete, a txn
    for (let i = 40; i < 60; i++) await etcdctl(from, ["put", `${prefix}${i}`, `v${i}`])
    await etcdctl(from, ["del", `${prefix}5`, `${prefix}9`]) // [5, 9): 5, 50–59, 6, 7, 8
    await etcdctl(from, ["txn"], `\nput ${prefix}t1 a\nput ${prefix}t2 b\n\n\n`)
    await etcdctl(from, ["put", `${prefix}0`, "last"])
    const source = await contents(from, prefix)
    expect(source[`${prefix}0`]).toBe("last")
    expect(source[`${prefix}55`]).toBeUndefined()
    await eventually(
      async () => JSON.stringify(await contents(to, prefix)) === JSON.stringify(source),
      20_000,
      `the live writes (${mm.stderr})`
    )
    expect(await contents(to, `/outside${prefix}`)).toEqual({})
    await mm.stop()
    return Object.keys(source).length
  }

  it("from etcd 3.4 into etcd-effect", async () => {
    expect(await mirror(etcd.endpoint, ours.endpoint, "/from-etcd/")).toBe(47)
  }, 60_000)

  it("from etcd-effect into etcd 3.4", async () => {
    expect(await mirror(ours.endpoint, etcd.endpoint, "/from-ours/")).toBe(47)
  }, 60_000)
})
