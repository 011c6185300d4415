/**
 * The space quota (--quota-backend-bytes) and the NOSPACE alarm, side by side with etcd 3.4 given
 * the same quota: fill until a write is refused (etcd's error and code), reads and deletes go
 * on, puts, txns with puts and lease grants are refused, `etcdctl alarm list` shows the alarm,
 * which survives a restart; after compaction + defrag, `etcdctl alarm disarm` lets writes in again.
 */
import * as grpc from "@grpc/grpc-js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, runCommand, ETCDCTL_BIN, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, rawClient, startInProcess, unaryCall } from "./support/in-process.js"

const QUOTA = 1024 * 1024
const VALUE = Buffer.alloc(16 * 1024, 7)

const etcdctl = async (endpoint: string, args: ReadonlyArray<string>) => {
  const r = await runCommand(ETCDCTL_BIN, ["--endpoints", endpoint, ...args], { ETCDCTL_API: "3" })
  // member ids differ between the servers
  const mask = (s: string) => s.replace(/memberID:\d+/g, "memberID:<id>")
  return { code: r.code, stdout: mask(r.stdout), error: mask(r.stderr.trim().split("\n").pop() ?? "") }
}

/**
 * The tests below are the steps of one story on one pair of servers, in the order written: the
 * first fills both to the quota and raises NOSPACE, the next work under the alarm it raised, the
 * last restarts and recovers. A shuffled run keeps this order (`shuffle: false`); the files around
 * it still move.
 */
const story = "space quota and the NOSPACE alarm, differential against etcd 3.4"
describe.skipIf(skipEtcd)(story, { shuffle: false }, () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  let dataDir: string

  const startOurs = () =>
    startInProcess({
      dataDir,
      quotaBackendBytes: QUOTA,
      listenClientUrls: [`http://${ours?.endpoint ?? "127.0.0.1:0"}`]
    })

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "etcd-effect-quota-"))
    ;[etcd, ours] = await Promise.all([
      EtcdProcess.start({ extraArgs: ["--quota-backend-bytes", String(QUOTA)], upWithAlarms: true }),
      startInProcess({ dataDir, quotaBackendBytes: QUOTA })
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ours?.close()])
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  const endpoints = () => [etcd.endpoint, ours.endpoint] as const

  /** Puts distinct keys until one is refused; the refusal and how many got in. */
  const fill = async (endpoint: string) => {
    const kv = rawClient("KV", endpoint)
    try {
      for (let i = 0; i < 1000; i++) {
        const r = await unaryCall(kv, "Put", { key: Buffer.from(`fill/${String(i).padStart(4, "0")}`), value: VALUE })
        if (!r.ok) return { n: i, code: r.code, details: r.details }
      }
      return { n: 1000, code: 0, details: "" }
    } finally {
      kv.close()
    }
  }

  it("writes past the quota are refused with etcd's error, and NOSPACE is raised", async () => {
    const [theirs, mine] = await Promise.all(endpoints().map(fill))
    expect(theirs!.code).toBe(grpc.status.RESOURCE_EXHAUSTED)
    expect(theirs!.details).toBe("etcdserver: mvcc: database space exceeded")
    expect({ code: mine!.code, details: mine!.details }).toEqual({ code: theirs!.code, details: theirs!.details })
    // both let in roughly a quota's worth (the sizes are each backend's own)
    expect(mine!.n).toBeGreaterThan(10)
    expect(mine!.n).toBeLessThan(QUOTA / VALUE.length + 10)
    const [a, b] = await Promise.all(endpoints().map((e) => etcdctl(e, ["alarm", "list"])))
    expect(a!.stdout).toBe("memberID:<id> alarm:NOSPACE \n")
    expect(b).toEqual(a)
    // /health: unhealthy while an alarm is up on both (ours words it as etcd 3.5), unless excluded
    const health = async (url: string) => (await (await fetch(url)).json()) as { health: string; reason?: string }
    expect((await health(`${etcd.clientUrl}/health`)).health).toBe("false")
    expect(await health(`http://${ours.endpoint}/health`)).toEqual({ health: "false", reason: "ALARM NOSPACE" })
    expect((await health(`http://${ours.endpoint}/health?exclude=NOSPACE`)).health).toBe("true")
  }, 60_000)

  it("with NOSPACE up: reads and deletes go on; puts, txns with puts and lease grants are refused", async () => {
    for (const args of [
      ["get", "fill/0000", "--print-value-only"],
      ["put", "small", "x"],
      ["txn"],
      ["lease", "grant", "100"],
      ["del", "fill/0001"],
      ["get", "fill/0001"]
    ]) {
      const input = args[0] === "txn" ? "\nput small x\n\n" : undefined
      const [theirs, mine] =
        input === undefined
          ? await Promise.all(endpoints().map((e) => etcdctl(e, args)))
          : await Promise.all(endpoints().map((e) => txn(e, input)))
      expect({ args, ...mine }).toEqual({ args, ...theirs })
    }
  }, 60_000)

  const txn = (endpoint: string, input: string) =>
    new Promise<{ code: number; stdout: string; error: string }>((resolve) => {
      const { execFile } = require("node:child_process") as typeof import("node:child_process")
      const child = execFile(
        ETCDCTL_BIN,
        ["--endpoints", endpoint, "txn"],
        { env: { ...process.env, ETCDCTL_API: "3" } },
        (e, stdout, stderr) =>
          resolve({
            code: e === null ? 0 : typeof e.code === "number" ? e.code : 1,
            stdout: stdout.toString(),
            error: stderr.toString().trim().split("\n").pop() ?? ""
          })
      )
      child.stdin?.end(input)
    })

  it("the alarm survives a restart; compaction + defrag + disarm let writes in again", async () => {
    await ours.close()
    ours = await startOurs()
    await etcd.restart()
    const [a, b] = await Promise.all(endpoints().map((e) => etcdctl(e, ["alarm", "list"])))
    expect(a!.stdout).toBe("memberID:<id> alarm:NOSPACE \n")
    expect(b).toEqual(a)
    const [p1, p2] = await Promise.all(endpoints().map((e) => etcdctl(e, ["put", "after-restart", "x"])))
    expect(p1!.error).toBe("Error: etcdserver: mvcc: database space exceeded")
    expect(p2).toEqual(p1)

    // free the space: delete everything, compact, defragment, then disarm
    for (const e of endpoints()) {
      expect((await etcdctl(e, ["del", "fill/", "--prefix"])).code).toBe(0)
      const rev = JSON.parse((await etcdctl(e, ["get", "x", "-w", "json"])).stdout).header.revision
      expect((await etcdctl(e, ["compaction", "--physical", String(rev)])).code).toBe(0)
      expect((await etcdctl(e, ["defrag"])).code).toBe(0)
    }
    const [d1, d2] = await Promise.all(endpoints().map((e) => etcdctl(e, ["alarm", "disarm"])))
    expect(d1!.stdout).toBe("memberID:<id> alarm:NOSPACE \n")
    expect(d2).toEqual(d1)
    const [l1, l2] = await Promise.all(endpoints().map((e) => etcdctl(e, ["alarm", "list"])))
    expect(l1!.stdout).toBe("")
    expect(l2).toEqual(l1)
    const [w1, w2] = await Promise.all(endpoints().map((e) => etcdctl(e, ["put", "again", "x"])))
    expect(w1).toEqual({ code: 0, stdout: "OK\n", error: "" })
    expect(w2).toEqual(w1)
  }, 90_000)
})
