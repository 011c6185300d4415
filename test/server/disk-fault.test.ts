/**
 * An fdatasync error stops the member as etcd's does (it panics): the real program, with a WAL
 * fault injected through TEST_ONLY_ETCD_EFFECT_WAL_FAULT (src/backend/fault-io.ts), prints one
 * line and exits 1; the write whose sync failed was never acknowledged, and every acknowledged
 * write is there after a restart. A real full disk (a 2 MiB tmpfs as the data dir; mounting it
 * needs root, the test skips otherwise) stops it the same way, as etcd 3.4 stops on a commit that
 * fails with ENOSPC ("failed to commit tx"): the put that met it fails, nothing acknowledged is lost.
 */
import { afterAll, describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { etcdctlAvailable } from "../support/etcd.js"
import { etcdctl } from "./support/etcdctl.js"
import { beyondInfo, ensureBuilt, ServeProcess, tempDir } from "./support/process.js"

const dirs: Array<string> = []
const mounts: Array<string> = []
const procs: Array<ServeProcess> = []
afterAll(async () => {
  for (const p of procs) await p.kill("SIGKILL")
  for (const m of mounts) execFileSync("umount", [m])
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})
const isRoot = process.getuid?.() === 0

describe.skipIf(!etcdctlAvailable)("disk faults, the real program", () => {
  it("an fdatasync error: one line, exit 1, every acknowledged put kept", async () => {
    await ensureBuilt()
    const dataDir = tempDir()
    dirs.push(dataDir)
    const p = await ServeProcess.start({ dataDir, env: { TEST_ONLY_ETCD_EFFECT_WAL_FAULT: "fdatasync:EIO:6" } })
    procs.push(p)
    const acked: Array<string> = []
    for (let i = 0; i < 10 && p.exitCode === undefined; i++) {
      const r = await etcdctl(p.endpoint, ["put", `k${i}`, `v${i}`, "--command-timeout=3s"])
      if (r.stdout === "OK\n") acked.push(`k${i}`)
      else break
    }
    expect(await p.exited).toBe(1)
    // how many syncs start-up takes is not pinned: some puts were acknowledged, then one failed
    expect(acked.length).toBeLessThan(10)
    const lines = beyondInfo(p.stderr).filter((l) => !l.includes("level=ERROR") && !l.includes("level=WARN"))
    expect(lines).toEqual(["etcd-effect: backend: WAL write failed: EIO: injected fault, fdatasync"])
    const again = await ServeProcess.start({ dataDir })
    procs.push(again)
    const keys = await etcdctl(again.endpoint, ["get", "k", "--prefix", "--keys-only"])
    const after = keys.stdout.split("\n").filter((l) => l !== "")
    // every acknowledged put is there; the one whose sync failed was not acknowledged, and may or
    // may not be (its bytes were written, its fdatasync failed: indeterminate, as a timed-out put)
    expect(after.slice(0, acked.length)).toEqual(acked)
    expect(after.slice(acked.length).every((k) => k === `k${acked.length}`)).toBe(true)
    expect(await again.kill("SIGTERM")).toBe(0)
  }, 120_000)

  it.skipIf(!isRoot)(
    "a real full disk (tmpfs, root only): the put fails, one line, exit 1, every acknowledged put kept",
    async () => {
      await ensureBuilt()
      const mount = tempDir()
      dirs.push(mount)
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount])
      mounts.push(mount)
      const dataDir = path.join(mount, "data")
      const p = await ServeProcess.start({ dataDir })
      procs.push(p)
      const value = "x".repeat(20_000)
      const acked: Array<string> = []
      let failed: { key: string; stderr: string } | undefined
      for (let i = 0; i < 500 && failed === undefined; i++) {
        const key = `k${String(i).padStart(3, "0")}`
        const r = await etcdctl(p.endpoint, ["put", key, value, "--command-timeout=3s"])
        if (r.stdout === "OK\n") acked.push(key)
        else failed = { key, stderr: r.stderr }
      }
      expect(failed).toBeDefined()
      expect(await p.exited).toBe(1)
      // lmdb-js writes the commit's error to stderr itself; the member's own last line says why it stopped
      const last = p.stderr.trimEnd().split("\n").at(-1)
      expect(last).toMatch(/^etcd-effect: backend: (commit|WAL write) failed: ENOSPC: no space left on device/)

      execFileSync("mount", ["-o", "remount,size=8m", mount])
      const again = await ServeProcess.start({ dataDir })
      procs.push(again)
      const keys = await etcdctl(again.endpoint, ["get", "k", "--prefix", "--keys-only"])
      const after = keys.stdout.split("\n").filter((l) => l !== "")
      expect(after.slice(0, acked.length)).toEqual(acked)
      // the put that failed: absent when refused as out of space; else (the member stopped under it) unknown
      const extra = after.slice(acked.length)
      if (failed!.stderr.includes("database space exceeded")) expect(extra).toEqual([])
      else expect(extra.every((k) => k === failed!.key)).toBe(true)
      expect(await again.kill("SIGTERM")).toBe(0)
    },
    120_000
  )
})
