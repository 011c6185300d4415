/**
 * `etcd-effect snapshot save|status|restore` against the real tools, as an operator uses them:
 * snapshots saved from etcd 3.4 (etcdctl 3.4) and etcd 3.6 (etcdctl 3.6), and from our own server
 * by our `snapshot save`, restored by our `snapshot restore`; our server started on the restored
 * dir serves what the source served (kvs, revisions, versions, compaction point, leases with their
 * TTL, users and roles). `snapshot status` prints what etcdutl 3.6 prints of the same files, and
 * refusals (a truncated or altered file, an existing data dir) are etcdutl's words and leave no
 * directory behind.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ETCDCTL_BIN, EtcdProcess, skipEtcd } from "../support/etcd.js"
import { goBins } from "../support/go-bins.js"
import { readBolt } from "../../src/backend/bbolt/index.js"
import { SnapshotWriter } from "../../src/backend/snapshot-format.js"
import { fromEtcdBuckets } from "../../src/server/snapshot/from-etcd-buckets.js"
import { ensureBuilt, mainJs, ServeProcess, tempDir } from "../server/support/process.js"

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (bin: string, args: ReadonlyArray<string>, cwd?: string): Promise<Run> =>
  new Promise((resolve) => {
    const [file, argv] = bin === mainJs ? [process.execPath, [mainJs, ...args]] : [bin, [...args]]
    execFile(file, argv, { cwd, env: { ...process.env, ETCDCTL_API: "3" }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
  })

const ok = async (bin: string, args: ReadonlyArray<string>): Promise<string> => {
  const r = await run(bin, args)
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0)
  return r.stdout
}

const ours = (args: ReadonlyArray<string>, cwd?: string) => run(mainJs, args, cwd)
const ctl = (endpoint: string, args: ReadonlyArray<string>, bin = ETCDCTL_BIN) =>
  ok(bin, [`--endpoints=${endpoint}`, ...args])

/** a history with overwrites, a delete, a lease, a compaction, a big value, a user and a role */
const writeHistory = async (endpoint: string): Promise<string> => {
  for (const [k, v] of [
    ["a", "1"],
    ["b", "2"],
    ["a", "3"]
  ])
    await ctl(endpoint, ["put", k!, v!])
  await ctl(endpoint, ["del", "b"])
  const lease = /lease ([0-9a-f]+) granted/.exec(await ctl(endpoint, ["lease", "grant", "600"]))![1]!
  await ctl(endpoint, ["put", "c", "with-lease", `--lease=${lease}`])
  await ctl(endpoint, ["put", "big", "x".repeat(10_000)])
  await ctl(endpoint, ["compaction", "3"])
  await ctl(endpoint, ["put", "a", "4"])
  await ctl(endpoint, ["user", "add", "alice:secret"])
  await ctl(endpoint, ["role", "add", "reader"])
  await ctl(endpoint, ["role", "grant-permission", "reader", "read", "a", "z"])
  await ctl(endpoint, ["user", "grant-role", "alice", "reader"])
  return lease
}

/** what a served store shows: every kv and the revision (ids and term aside) */
const served = async (endpoint: string) => {
  const out = JSON.parse(await ctl(endpoint, ["get", "", "--prefix", "-w", "json"]))
  return { revision: out.header.revision, kvs: out.kvs }
}

const etcdutl = goBins["ETCDUTL_36_BIN"]
const etcd36 = goBins["ETCD_36_BIN"]
const etcdctl36 = goBins["ETCDCTL_36_BIN"]

/** the names in `dir` (a refusal must leave it as it was) */
const names = (dir: string) => fs.readdirSync(dir).sort()

describe.skipIf(skipEtcd)("etcd-effect snapshot save|status|restore", () => {
  const dir = tempDir()
  const servers: Array<ServeProcess> = []
  const etcds: Array<EtcdProcess> = []

  beforeAll(async () => {
    await ensureBuilt()
  }, 0)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()))
    await Promise.all(etcds.map((e) => e.dispose()))
    fs.rmSync(dir, { recursive: true, force: true })
  })

  /** our restore of `file` into a fresh dir, then our server on it */
  const restoreAndServe = async (file: string, name: string, extra: ReadonlyArray<string> = []) => {
    const dataDir = path.join(dir, name)
    const r = await ours(["snapshot", "restore", file, "--data-dir", dataDir, ...extra])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("")
    const s = await ServeProcess.start({ dataDir })
    servers.push(s)
    return s
  }

  /** the source and the restored copy serve the same data */
  const sameData = async (source: string, restored: string, lease: string) => {
    expect(await served(restored)).toEqual(await served(source))
    const compacted = await run(ETCDCTL_BIN, [`--endpoints=${restored}`, "get", "a", "--rev=2"])
    expect(compacted.stderr).toContain("required revision has been compacted")
    expect(await ctl(restored, ["lease", "timetolive", lease])).toMatch(
      new RegExp(`lease ${lease} granted with TTL\\(600s\\)`)
    )
    for (const args of [
      ["user", "get", "alice"],
      ["role", "get", "reader"],
      ["user", "list"],
      ["role", "list"]
    ])
      expect(await ctl(restored, args)).toBe(await ctl(source, args))
  }

  it("etcd 3.4's snapshot (etcdctl 3.4 snapshot save) restores into a data dir our server serves alike", async () => {
    const etcd = await EtcdProcess.start()
    etcds.push(etcd)
    const lease = await writeHistory(etcd.endpoint)
    const file = path.join(dir, "etcd34.db")
    await ctl(etcd.endpoint, ["snapshot", "save", file])
    const s = await restoreAndServe(file, "from34.etcd")
    await sameData(etcd.endpoint, s.endpoint, lease)
    // the restored member's ids are those etcdutl gives the same flags (default name, URL, token)
    // (ids read from the text: they are past JSON's safe integers)
    const members = await ctl(s.endpoint, ["member", "list", "-w", "json"])
    expect(BigInt(/"ID":(\d+)/.exec(members)![1]!).toString(16)).toBe("8e9e05c52164694d")
    expect(BigInt(/"cluster_id":(\d+)/.exec(members)![1]!).toString(16)).toBe("cdf818194e3a8c32")
  }, 0)

  it.skipIf(etcd36 === undefined || etcdctl36 === undefined)(
    "etcd 3.6's snapshot (etcdctl 3.6 snapshot save) restores alike",
    async () => {
      const etcd = await EtcdProcess.start({ bin: etcd36! })
      etcds.push(etcd)
      const lease = await writeHistory(etcd.endpoint)
      const file = path.join(dir, "etcd36.db")
      await ctl(etcd.endpoint, ["snapshot", "save", file], etcdctl36!)
      const s = await restoreAndServe(file, "from36.etcd", [
        "--name",
        "m1",
        "--initial-cluster",
        "m1=http://localhost:2380"
      ])
      await sameData(etcd.endpoint, s.endpoint, lease)
    },
    0
  )

  it("ours → etcd-effect snapshot save → restore → serve: the same data; --bump-revision as etcdutl's", async () => {
    const source = await ServeProcess.start({ dataDir: path.join(dir, "source.etcd") })
    servers.push(source)
    const lease = await writeHistory(source.endpoint)
    const file = path.join(dir, "ours.db")
    const saved = await ours([`--endpoints=${source.endpoint}`, "snapshot", "save", file])
    expect(saved).toMatchObject({ code: 0, stdout: `Snapshot saved at ${file}\n` })
    expect(fs.existsSync(`${file}.part`)).toBe(false)
    const s = await restoreAndServe(file, "fromours.etcd")
    await sameData(source.endpoint, s.endpoint, lease)

    // the same data in our old format (what etcd-effect sent before etcd's): restored alike
    const oldFormat = path.join(dir, "ours-old-format.db")
    const writer = new SnapshotWriter()
    const db = fs.readFileSync(file).subarray(0, -32)
    for (const e of fromEtcdBuckets(readBolt(db).buckets).entries) writer.add(e.bucket, e.key, e.value)
    fs.writeFileSync(oldFormat, writer.finish())
    const fromOld = await restoreAndServe(oldFormat, "fromold.etcd")
    await sameData(source.endpoint, fromOld.endpoint, lease)

    const bumped = await restoreAndServe(file, "bumped.etcd", ["--bump-revision", "100", "--mark-compacted"])
    const before = await served(source.endpoint)
    const after = await served(bumped.endpoint)
    expect(after).toEqual({ revision: before.revision + 100, kvs: before.kvs })
    const old = await run(ETCDCTL_BIN, [`--endpoints=${bumped.endpoint}`, "get", "a", `--rev=${before.revision}`])
    expect(old.stderr).toContain("required revision has been compacted")
  }, 0)

  it.skipIf(etcdutl === undefined)(
    "status prints what etcdutl 3.6 prints of the same files",
    async () => {
      const files = ["etcd34.db", "etcd36.db", "ours.db"].map((f) => path.join(dir, f)).filter((f) => fs.existsSync(f))
      expect(files.length).toBeGreaterThan(0)
      for (const file of files) {
        for (const w of ["simple", "json", "table", "fields"]) {
          const mine = await ours(["snapshot", "status", file, "-w", w])
          const theirs = await run(etcdutl!, ["snapshot", "status", file, "-w", w])
          expect({ code: mine.code, stdout: mine.stdout }, `${file} -w ${w}`).toEqual({
            code: theirs.code,
            stdout: theirs.stdout
          })
        }
      }
      // our old format, which etcdutl cannot read: the same revision and keys as etcd's form of it
      const old = JSON.parse(
        (await ours(["snapshot", "status", path.join(dir, "ours-old-format.db"), "-w", "json"])).stdout
      )
      const etcds = JSON.parse((await ours(["snapshot", "status", path.join(dir, "ours.db"), "-w", "json"])).stdout)
      expect({ revision: old.revision, totalKey: old.totalKey, version: old.version }).toEqual({
        revision: etcds.revision,
        totalKey: etcds.totalKey,
        version: ""
      })
      const protobuf = await ours(["snapshot", "status", files[0]!, "-w", "protobuf"])
      expect(protobuf).toMatchObject({ code: 4, stderr: "Error: protobuf not supported as output format\n" })
    },
    0
  )

  it.skipIf(etcdutl === undefined)(
    "a truncated or altered file and an existing data dir are refused in etcdutl's words, leaving nothing",
    async () => {
      const good = fs.readFileSync(path.join(dir, "ours.db"))
      const cases: Record<string, Buffer> = {
        // 32 past a multiple of 512: read as hashed, the hash is wrong
        "cut-hashed.db": good.subarray(0, good.length - 512),
        // no hash at all
        "cut.db": good.subarray(0, good.length - 100),
        altered: Buffer.concat([good.subarray(0, 5000), Buffer.from("Z"), good.subarray(5001)])
      }
      const work = path.join(dir, "refusals")
      fs.mkdirSync(work)
      for (const [name, bytes] of Object.entries(cases)) fs.writeFileSync(path.join(work, name), bytes)
      const occupied = path.join(work, "occupied.etcd")
      fs.mkdirSync(occupied)
      fs.writeFileSync(path.join(occupied, "keep"), "")
      const listing = names(work)
      const errorLine = (r: Run) => r.stderr.split("\n").filter((l) => l.startsWith("Error: "))
      for (const [file, target] of [
        ...Object.keys(cases).map((f) => [f, "new.etcd"] as const),
        [path.join(dir, "ours.db"), "occupied.etcd"] as const
      ]) {
        const mine = await ours(["snapshot", "restore", file, "--data-dir", target], work)
        expect(mine.code, file).toBe(1)
        expect(names(work), `${file}: nothing left behind`).toEqual(listing)
        const theirs = await run(etcdutl!, ["snapshot", "restore", file, "--data-dir", target], work)
        fs.rmSync(path.join(work, "new.etcd"), { recursive: true, force: true })
        expect(errorLine(mine), file).toEqual(errorLine(theirs))
        expect(errorLine(mine).length).toBe(1)
      }
      expect(names(occupied)).toEqual(["keep"])
    },
    0
  )
})
