/**
 * Maintenance.Snapshot in etcd's format, tried as an operator would with etcdctl 3.4: `snapshot
 * save` from our server, `snapshot status` reads it, `snapshot restore` makes a data dir, and a
 * real etcd 3.4 started on it serves the same keys, values, create/mod revisions, versions, leases
 * (with their granted TTL), compaction point, and auth users and roles.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ETCD_BIN, etcdctlAvailable, skipEtcd } from "../../support/etcd.js"
import { freePorts } from "../../support/ports.js"
import { untilDone } from "../../support/stall.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"
import { etcdctl } from "../support/etcdctl.js"

const ok = async (endpoint: string, args: ReadonlyArray<string>): Promise<string> => {
  const r = await etcdctl(endpoint, args)
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0)
  return r.stdout
}

/** what a range shows of each kv, the header's revision aside */
const kvs = async (endpoint: string) => {
  const out = JSON.parse(await ok(endpoint, ["get", "", "--prefix", "-w", "json"]))
  return { revision: out.header.revision, kvs: out.kvs }
}

describe.skipIf(skipEtcd || !etcdctlAvailable)("snapshot in etcd's format (etcdctl 3.4, etcd 3.4)", () => {
  let ours: InProcessServer
  let etcd: ChildProcess | undefined
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-snapshot-"))

  beforeAll(async () => {
    ours = await startInProcess({ name: "test" })
  }, 0)
  afterAll(async () => {
    etcd?.kill("SIGKILL")
    await ours?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("save → status → restore → etcd 3.4 serves the same data", async () => {
    const e = ours.endpoint
    await ok(e, ["put", "a", "1"])
    await ok(e, ["put", "b", "2"])
    await ok(e, ["put", "a", "3"])
    await ok(e, ["del", "b"])
    const lease = /lease ([0-9a-f]+) granted/.exec(await ok(e, ["lease", "grant", "600"]))![1]!
    await ok(e, ["put", "c", "with-lease", `--lease=${lease}`])
    await ok(e, ["put", "big", "x".repeat(10_000)])
    await ok(e, ["compaction", "3"])
    await ok(e, ["put", "a", "4"])
    await ok(e, ["user", "add", "alice:secret"])
    await ok(e, ["role", "add", "reader"])
    await ok(e, ["role", "grant-permission", "reader", "read", "a", "z"])
    await ok(e, ["user", "grant-role", "alice", "reader"])
    const before = await kvs(e)

    const file = path.join(dir, "s.db")
    expect(await ok(e, ["snapshot", "save", file])).toBe(`Snapshot saved at ${file}\n`)
    const status = JSON.parse(await ok(e, ["snapshot", "status", file, "-w", "json"]))
    expect(status).toMatchObject({ revision: Number(before.revision), totalSize: fs.statSync(file).size - 32 })

    const [client, peer] = await freePorts(2)
    const peerUrl = `http://127.0.0.1:${peer}`
    const clientUrl = `http://127.0.0.1:${client}`
    const data = path.join(dir, "restored")
    const restored = await etcdctl(e, [
      "snapshot",
      "restore",
      file,
      "--data-dir",
      data,
      "--name",
      "m1",
      "--initial-cluster",
      `m1=${peerUrl}`,
      "--initial-advertise-peer-urls",
      peerUrl
    ])
    expect(restored.code, restored.stderr).toBe(0)
    etcd = spawn(
      ETCD_BIN,
      [
        "--name",
        "m1",
        "--data-dir",
        data,
        "--listen-client-urls",
        clientUrl,
        "--advertise-client-urls",
        clientUrl,
        "--listen-peer-urls",
        peerUrl,
        "--initial-advertise-peer-urls",
        peerUrl,
        "--initial-cluster",
        `m1=${peerUrl}`
      ],
      { stdio: "ignore" }
    )
    const endpoint = `127.0.0.1:${client}`
    let healthy = false
    await untilDone(
      "restored etcd healthy",
      async () => (healthy = (await etcdctl(endpoint, ["endpoint", "health"])).code === 0),
      () => healthy
    )

    expect(await kvs(endpoint)).toEqual(before)
    // the compaction point came along
    const compacted = await etcdctl(endpoint, ["get", "a", "--rev=2"])
    expect(compacted.stderr).toContain("required revision has been compacted")
    const ttl = await ok(endpoint, ["lease", "timetolive", lease])
    expect(ttl).toMatch(new RegExp(`lease ${lease} granted with TTL\\(600s\\)`))
    expect(await ok(endpoint, ["user", "get", "alice"])).toBe("User: alice\nRoles: reader\n")
    expect(await ok(endpoint, ["role", "get", "reader"])).toBe(await ok(e, ["role", "get", "reader"]))
  }, 0)
})
