/**
 * From etcd-effect to etcd 3.6, as an operator does it with etcd 3.6's own tools: `etcdctl snapshot
 * save` (3.6) from our server, `etcdutl snapshot status` reads it, `bbolt check` finds it
 * consistent, then `etcdutl snapshot restore`
 *
 * - into one member: etcd 3.6 serves the same keys, values, create/mod revisions, versions,
 *   compaction point, lease (its granted TTL, its key) and auth user and role;
 * - into three members from the same file: the cluster forms (one leader, seen by all three), every
 *   member serves the same data on serializable reads, and a write after the restore reaches all.
 *
 * The binaries come from benchmarks/go/build.sh (test/support/go-bins.ts): without them the suite
 * is skipped, unless REQUIRE_GO=1, where it runs and fails.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCommand } from "../../support/etcd.js"
import { goBins, requireGo } from "../../support/go-bins.js"
import { freePorts } from "../../support/ports.js"
import { peerUrlOf, RestoredMember, type RestoredMemberSpec, restoreMember } from "../../support/restored-etcd.js"
import { untilDone } from "../../support/stall.js"
import { type InProcessServer, startInProcess } from "../support/in-process.js"

const ETCD = goBins.ETCD_36_BIN!
const ETCDCTL = goBins.ETCDCTL_36_BIN!
const ETCDUTL = goBins.ETCDUTL_36_BIN!
const BBOLT = goBins.BBOLT_BIN!
const missing = [ETCD, ETCDCTL, ETCDUTL, BBOLT].some((b) => b === undefined)

const ctl = (endpoint: string, args: ReadonlyArray<string>) => runCommand(ETCDCTL, ["--endpoints", endpoint, ...args])

const ok = async (endpoint: string, args: ReadonlyArray<string>): Promise<string> => {
  const r = await ctl(endpoint, args)
  expect(r.code, `etcdctl ${args.join(" ")}: ${r.stderr}`).toBe(0)
  return r.stdout
}

/** every kv with the header's revision; `serializable`: this member's own answer */
const kvs = async (endpoint: string, serializable = false) => {
  const args = ["get", "", "--prefix", "-w", "json", ...(serializable ? ["--consistency=s"] : [])]
  const out = JSON.parse(await ok(endpoint, args))
  return { revision: out.header.revision, kvs: out.kvs }
}

describe.skipIf(missing && !requireGo)("snapshot from etcd-effect restored into etcd 3.6 (etcdctl/etcdutl 3.6)", () => {
  let ours: InProcessServer
  const members: Array<RestoredMember> = []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etcd36-restore-"))
  const file = path.join(dir, "backup.db")
  let before: { revision: unknown; kvs: unknown }
  let lease: string

  beforeAll(async () => {
    ours = await startInProcess({ name: "ours" })
    const e = ours.endpoint
    await ok(e, ["put", "a", "1"])
    await ok(e, ["put", "b", "2"])
    await ok(e, ["put", "a", "3"])
    await ok(e, ["del", "b"])
    await ok(e, ["put", "d", "1"])
    await ok(e, ["put", "d", "2"])
    lease = /lease ([0-9a-f]+) granted/.exec(await ok(e, ["lease", "grant", "900"]))![1]!
    await ok(e, ["put", "c", "with-lease", `--lease=${lease}`])
    // larger than a page: bbolt overflow pages
    await ok(e, ["put", "big", "x".repeat(100_000)])
    await ok(e, ["compaction", "4"])
    await ok(e, ["put", "a", "4"])
    await ok(e, ["del", "d"])
    await ok(e, ["user", "add", "alice:secret"])
    await ok(e, ["role", "add", "reader"])
    await ok(e, ["role", "grant-permission", "reader", "read", "a", "z"])
    await ok(e, ["user", "grant-role", "alice", "reader"])
    before = await kvs(e)
    const saved = await ctl(e, ["snapshot", "save", file])
    expect(saved.code, saved.stderr).toBe(0)
    expect(saved.stdout).toBe(`Snapshot saved at ${file}\n`)
  }, 0)

  afterAll(async () => {
    await Promise.all(members.map((m) => m.kill()))
    await ours?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }, 0)

  /** restores `file` into n members on fresh ports and starts them; resolves when all are healthy */
  const restoreCluster = async (label: string, n: number): Promise<Array<RestoredMember>> => {
    const ports = await freePorts(2 * n)
    const names = Array.from({ length: n }, (_, i) => `m${i + 1}`)
    const initialCluster = names.map((name, i) => `${name}=${peerUrlOf(ports[2 * i + 1]!)}`).join(",")
    const specs: Array<RestoredMemberSpec> = names.map((name, i) => ({
      etcdBin: ETCD,
      name,
      dataDir: path.join(dir, `${label}-${name}`),
      clientPort: ports[2 * i]!,
      peerPort: ports[2 * i + 1]!,
      initialCluster
    }))
    for (const spec of specs) {
      const r = await restoreMember(ETCDUTL, file, spec)
      expect(r.code, `etcdutl snapshot restore (${spec.name}): ${r.stderr}`).toBe(0)
    }
    const started = specs.map((s) => RestoredMember.start(s))
    members.push(...started)
    await Promise.all(started.map((m) => m.ready(ETCDCTL)))
    return started
  }

  it("etcdutl snapshot status reads it (revision, live keys) and bbolt check finds it consistent", async () => {
    const status = await runCommand(ETCDUTL, ["snapshot", "status", file, "-w", "json"])
    expect(status.code, status.stderr).toBe(0)
    const live = (before.kvs as Array<unknown>).length
    // the file keeps the sha256 after the bolt pages (restore verifies it)
    expect(JSON.parse(status.stdout)).toMatchObject({
      revision: Number(before.revision),
      totalKey: live,
      totalSize: fs.statSync(file).size - 32
    })
    const check = await runCommand(BBOLT, ["check", file])
    expect(check.code, check.stderr).toBe(0)
    expect(check.stdout.trim()).toBe("OK")
  }, 0)

  it("one member: etcd 3.6 serves the same data, compaction point, lease and auth", async () => {
    const [m1] = await restoreCluster("one", 1)
    const e = m1!.endpoint
    expect(await kvs(e)).toEqual(before)
    // the compaction point came along: below it, etcd's error; at it, the history is there
    const compacted = await ctl(e, ["get", "a", "--rev=3"])
    expect(compacted.code).not.toBe(0)
    const lastLine = (t: string) => t.trim().split("\n").at(-1)
    expect(lastLine(compacted.stderr)).toBe("Error: etcdserver: mvcc: required revision has been compacted")
    expect(lastLine((await ctl(ours.endpoint, ["get", "a", "--rev=3"])).stderr)).toBe(lastLine(compacted.stderr))
    for (const rev of ["4", "7"]) {
      const at = ["get", "", "--prefix", `--rev=${rev}`, "-w", "json"]
      expect(JSON.parse(await ok(e, at)).kvs).toEqual(JSON.parse(await ok(ours.endpoint, at)).kvs)
    }
    const ttl = await ok(e, ["lease", "timetolive", lease, "--keys"])
    expect(ttl).toMatch(
      new RegExp(`^lease ${lease} granted with TTL\\(900s\\), remaining\\(\\d+s\\), attached keys\\(\\[c\\]\\)\\n$`)
    )
    expect(await ok(e, ["user", "get", "alice"])).toBe("User: alice\nRoles: reader\n")
    expect(await ok(e, ["role", "get", "reader"])).toBe(await ok(ours.endpoint, ["role", "get", "reader"]))
  }, 0)

  it("three members from the same file: the cluster forms, all serve the same data, a new write reaches all", async () => {
    const cluster = await restoreCluster("three", 3)
    const all = cluster.map((m) => m.endpoint).join(",")
    const status = JSON.parse(await ok(all, ["endpoint", "status", "-w", "json"])) as Array<{
      Endpoint: string
      Status: { header: { member_id: number }; leader: number; raftTerm: number }
    }>
    expect(status.map((s) => s.Endpoint).sort()).toEqual(cluster.map((m) => m.endpoint).sort())
    const leaders = new Set(status.map((s) => s.Status.leader))
    expect(leaders.size).toBe(1)
    expect(status.filter((s) => s.Status.header.member_id === s.Status.leader)).toHaveLength(1)
    expect(new Set(status.map((s) => s.Status.raftTerm)).size).toBe(1)
    expect((await ok(all, ["member", "list"])).trim().split("\n")).toHaveLength(3)

    for (const m of cluster) expect(await kvs(m.endpoint, true)).toEqual(before)

    await ok(cluster[1]!.endpoint, ["put", "after-restore", "yes"])
    const seen = new Set<string>()
    await untilDone(
      "the write after the restore on every member",
      async () => {
        for (const m of cluster) {
          const got = await kvs(m.endpoint, true)
          if (
            (got.kvs as Array<{ key: string }>).some((kv) => kv.key === Buffer.from("after-restore").toString("base64"))
          )
            seen.add(m.endpoint)
        }
        return seen.size === cluster.length
      },
      () => seen.size
    )
    for (const m of cluster) expect((await kvs(m.endpoint, true)).revision).toBe(Number(before.revision) + 1)
  }, 0)
})
