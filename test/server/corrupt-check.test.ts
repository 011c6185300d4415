/**
 * Corruption, as an operator meets it (src/server/corrupt-check.ts): the real program, a real
 * LMDB file with one byte flipped on disk, etcdctl 3.4. The read fails with etcd's data-loss error
 * and never returns the bytes; CORRUPT shows in `etcdctl alarm list`; writes are refused as
 * etcd's applierV3Corrupt refuses them while ranges and read-only txns go on; the record is
 * logged with its key and revision; disarming lifts the refusals. The periodic check finds a byte
 * that rots under a running server.
 */
import { afterAll, describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { etcdctlAvailable } from "../support/etcd.js"
import { etcdctl } from "./support/etcdctl.js"
import { ensureBuilt, ServeProcess, tempDir } from "./support/process.js"

const dirs: Array<string> = []
const procs: Array<ServeProcess> = []
afterAll(async () => {
  for (const p of procs) await p.kill("SIGKILL")
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

const serve = async (dataDir: string, args: ReadonlyArray<string> = []) => {
  const p = await ServeProcess.start({ dataDir, args })
  procs.push(p)
  return p
}

/**
 * Flips one bit in every occurrence of `needle` in the file, in place (as a disk would): LMDB
 * copies pages on write, so a freed page may hold an older copy of the record too.
 */
const flip = (file: string, needle: string): void => {
  const content = fs.readFileSync(file)
  const at: Array<number> = []
  for (let i = content.indexOf(needle); i >= 0; i = content.indexOf(needle, i + 1)) at.push(i + 3)
  expect(at.length).toBeGreaterThan(0)
  const fd = fs.openSync(file, "r+")
  try {
    for (const pos of at) {
      const b = Buffer.alloc(1)
      fs.readSync(fd, b, 0, 1, pos)
      b[0]! ^= 0x20
      fs.writeSync(fd, b, 0, 1, pos)
    }
  } finally {
    fs.closeSync(fd)
  }
}

const CORRUPT = "etcdserver: corrupt cluster"

describe.skipIf(!etcdctlAvailable)("corruption detected, never served (etcdctl 3.4, real LMDB)", () => {
  it("a byte flipped on disk: the read fails with DataLoss, CORRUPT is raised, writes are refused, reads go on", async () => {
    await ensureBuilt()
    const dataDir = tempDir()
    dirs.push(dataDir)
    const first = await serve(dataDir)
    const ep = first.endpoint
    expect((await etcdctl(ep, ["put", "foo", "value-to-rot"])).code).toBe(0)
    expect((await etcdctl(ep, ["put", "other", "sound"])).code).toBe(0)
    expect(await first.kill("SIGTERM")).toBe(0)
    flip(path.join(dataDir, "member", "snap", "db"), "value-to-rot")

    const p = await serve(dataDir, ["--experimental-initial-corrupt-check"])
    const get = await etcdctl(p.endpoint, ["get", "foo"])
    expect(get.code).toBe(1)
    expect(get.stderr).toContain(`code = DataLoss desc = ${CORRUPT}`)
    expect(get.stdout).toBe("")
    // the whole range fails: a prefix read that includes the key serves nothing of it
    const prefix = await etcdctl(p.endpoint, ["get", "", "--prefix"])
    expect(prefix.code).toBe(1)
    expect(prefix.stdout).not.toContain("value")
    // other keys read; a read-only txn too
    expect((await etcdctl(p.endpoint, ["get", "other"])).stdout).toBe("other\nsound\n")
    const roTxn = await etcdctl(p.endpoint, ["txn"], 'value("other") = "sound"\n\nget other\n\n\n')
    expect(roTxn.stdout).toBe("SUCCESS\n\nother\nsound\n")

    const alarms = await etcdctl(p.endpoint, ["alarm", "list"])
    expect(alarms.stdout).toMatch(/^memberID:\d+ alarm:CORRUPT \n$/)
    for (const args of [
      ["put", "x", "y"],
      ["del", "other"],
      ["compaction", "1"],
      ["lease", "grant", "60"]
    ]) {
      const r = await etcdctl(p.endpoint, args)
      expect(r.code, args.join(" ")).toBe(1)
      expect(r.stderr, args.join(" ")).toContain(`code = DataLoss desc = ${CORRUPT}`)
    }
    const wTxn = await etcdctl(p.endpoint, ["txn"], "\nput x y\n\n\n")
    expect(wTxn.stderr).toContain(CORRUPT)

    // logged with key and revision, at start (the initial check and the restore) and on the read
    // (logfmt escapes the quotes)
    expect(p.stderr).toContain('corrupt record (checksum mismatch) at revision 2.0, key \\"foo\\"')
    expect(p.stderr).toContain("initial corruption check: 1 corrupt record(s)")
    expect(p.stderr).toContain("alarm raised: CORRUPT")
    expect(p.stderr).toContain("the request fails, nothing is served")

    // the alarm survives a restart; disarming it lets writes through again (the rotten read still fails)
    expect(await p.kill("SIGTERM")).toBe(0)
    const again = await serve(dataDir)
    expect((await etcdctl(again.endpoint, ["alarm", "list"])).stdout).toContain("alarm:CORRUPT")
    expect((await etcdctl(again.endpoint, ["alarm", "disarm"])).code).toBe(0)
    expect((await etcdctl(again.endpoint, ["put", "x", "y"])).stdout).toBe("OK\n")
    expect((await etcdctl(again.endpoint, ["get", "foo"])).stderr).toContain(CORRUPT)
    // a put of that key needs its current record (etcd reads it for the version): it fails too
    expect((await etcdctl(again.endpoint, ["put", "foo", "new"])).stderr).toContain(CORRUPT)
    expect(await again.kill("SIGTERM")).toBe(0)
  }, 120_000)

  it("a lease that expires under CORRUPT keeps its keys (the expiry revoke is refused) until disarmed", async () => {
    await ensureBuilt()
    const dataDir = tempDir()
    dirs.push(dataDir)
    const first = await serve(dataDir)
    expect((await etcdctl(first.endpoint, ["put", "foo", "value-to-rot"])).code).toBe(0)
    const grant = await etcdctl(first.endpoint, ["lease", "grant", "2"])
    const id = /^lease ([0-9a-f]+) granted with TTL\(2s\)\n$/.exec(grant.stdout)![1]!
    expect((await etcdctl(first.endpoint, ["put", "held", "v", `--lease=${id}`])).stdout).toBe("OK\n")
    expect(await first.kill("SIGTERM")).toBe(0)
    flip(path.join(dataDir, "member", "snap", "db"), "value-to-rot")

    const p = await serve(dataDir, ["--experimental-initial-corrupt-check"])
    expect((await etcdctl(p.endpoint, ["alarm", "list"])).stdout).toContain("alarm:CORRUPT")
    const revision = async () =>
      JSON.parse((await etcdctl(p.endpoint, ["get", "held", "-w", "json"])).stdout).header.revision
    const rev = await revision()
    // the lease expires (its TTL plus etcd's promote extension after a restart); the expiry loop
    // tries to revoke it and is refused, which it logs
    for (let i = 0; !p.stderr.includes("failed to revoke an expired lease"); i++) {
      expect(i).toBeLessThan(600)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(p.stderr).toContain(CORRUPT)
    expect((await etcdctl(p.endpoint, ["get", "held"])).stdout).toBe("held\nv\n")
    expect(await revision()).toBe(rev)
    expect((await etcdctl(p.endpoint, ["lease", "timetolive", id])).stdout).toContain("remaining(0s)")

    // disarmed: the next try (etcd's 3 s retry interval) revokes it, in one revision
    expect((await etcdctl(p.endpoint, ["alarm", "disarm"])).code).toBe(0)
    for (let i = 0; (await etcdctl(p.endpoint, ["get", "held"])).stdout !== ""; i++) {
      expect(i).toBeLessThan(600)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(await revision()).toBe(rev + 1)
    expect((await etcdctl(p.endpoint, ["lease", "timetolive", id])).stdout).toContain("already expired")
    expect(await p.kill("SIGTERM")).toBe(0)
  }, 120_000)

  it("--experimental-corrupt-check-time: a byte that rots under a running server raises CORRUPT", async () => {
    await ensureBuilt()
    const dataDir = tempDir()
    dirs.push(dataDir)
    const p = await serve(dataDir, ["--experimental-corrupt-check-time", "100ms"])
    expect((await etcdctl(p.endpoint, ["put", "foo", "value-to-rot"])).code).toBe(0)
    const db = path.join(dataDir, "member", "snap", "db")
    // the value reaches LMDB within its 100 ms commit interval
    for (let i = 0; fs.readFileSync(db).indexOf("value-to-rot") < 0; i++) {
      expect(i).toBeLessThan(600)
      await new Promise((r) => setTimeout(r, 50))
    }
    flip(db, "value-to-rot")
    for (let i = 0; !(await etcdctl(p.endpoint, ["alarm", "list"])).stdout.includes("alarm:CORRUPT"); i++) {
      expect(i).toBeLessThan(200)
    }
    // the alarm shows once it is set; its log line follows once the alarm record is durable
    for (let i = 0; !p.stderr.includes("found by the periodic corruption check"); i++) {
      expect(i).toBeLessThan(600)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect((await etcdctl(p.endpoint, ["put", "x", "y"])).stderr).toContain(CORRUPT)
    expect(await p.kill("SIGTERM")).toBe(0)
  }, 120_000)
})
