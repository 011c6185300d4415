/**
 * When does a write Effect complete? Traced at the system-call level: a child writes batches with
 * 4 concurrent writers under strace, printing "stage n" right before staging and "ack n" when the
 * write Effect completed. For every ack there must be, after its staging and before its ack, a
 * write to the WAL that started after the staging, then an fdatasync of that WAL file that started
 * after the write and returned: the batch's record was on disk before it was acknowledged. LMDB
 * itself is committed off that path: fewer LMDB syncs than acks, and one (fdatasync + O_DSYNC meta
 * write) after the last ack, when close applies what the WAL holds.
 *
 * The same child with the WAL's fdatasync skipped must fail the check (so the check can fail).
 * Skips when strace is missing or not permitted (containers without ptrace).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { bundleChild, makeTempDir, projectRoot, removeDir } from "./harness.js"

const strace = spawnSync("strace", ["-o", "/dev/null", "true"]).status === 0
const root = makeTempDir("durability")
let child: { file: string; dir: string }
beforeAll(async () => {
  if (strace) child = await bundleChild()
})
afterAll(() => {
  removeDir(root)
  if (child !== undefined) removeDir(child.dir)
})

type Kind =
  "stage" | "ack" | "walWriteStart" | "walWriteDone" | "walSyncStart" | "walSyncDone" | "dbSyncDone" | "metaWriteDone"

interface Event {
  readonly kind: Kind
  readonly n?: number
  /** pairs a start with its completion */
  readonly id?: string
  readonly fd?: string
}

/** Parses `strace -f -o` output into the events we need, in log order. */
const parse = (log: string): Array<Event> => {
  const events: Array<Event> = []
  const walFds = new Set<string>() // WAL segments: written with pwritev, synced with fdatasync
  const dataFds = new Set<string>() // the LMDB file opened read-write: synced with fdatasync
  const dsyncFds = new Set<string>() // the LMDB file opened O_DSYNC: meta pages
  const pending = new Map<string, Event>() // thread → the call it has unfinished, as its completion event
  const openingOn = new Map<string, [string, string]>() // thread → the openat it has unfinished
  let seq = 0
  for (const line of log.split("\n")) {
    const m = /^(\d+)\s+(.*)$/.exec(line)
    if (m === null) continue
    const tid = m[1]!
    const rest = m[2]!
    const unfinished = rest.endsWith("<unfinished ...>")
    let mm: RegExpExecArray | null
    const opened = (file: string, flags: string, fd: string) => {
      if (/\/member\/wal\/[0-9a-f]{16}-[0-9a-f]{16}\.wal$/.test(file)) walFds.add(fd)
      else if (file.endsWith("/member/snap/db")) (flags.includes("O_DSYNC") ? dsyncFds : dataFds).add(fd)
    }
    if ((mm = /^openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+)/.exec(rest)) !== null) {
      const [, file, flags] = mm as unknown as [string, string, string]
      const fd = /\)\s+= (\d+)$/.exec(rest)?.[1]
      if (fd !== undefined) opened(file, flags, fd)
      else if (unfinished) openingOn.set(tid, [file, flags])
    } else if ((mm = /^<\.\.\. openat resumed>.*\)\s+= (\d+)$/.exec(rest)) !== null) {
      const o = openingOn.get(tid)
      openingOn.delete(tid)
      if (o !== undefined) opened(o[0], o[1], mm[1]!)
    } else if ((mm = /^close\((\d+)/.exec(rest)) !== null) {
      // a closed number can be reused for another file
      walFds.delete(mm[1]!)
      dataFds.delete(mm[1]!)
      dsyncFds.delete(mm[1]!)
    } else if ((mm = /^write\(1, "(stage|ack) (\d+)\\n"/.exec(rest)) !== null) {
      events.push({ kind: mm[1] as "stage" | "ack", n: Number(mm[2]) })
    } else if ((mm = /^pwritev\((\d+),/.exec(rest)) !== null && walFds.has(mm[1]!)) {
      const id = `w${seq++}`
      events.push({ kind: "walWriteStart", id, fd: mm[1]! })
      const done: Event = { kind: "walWriteDone", id, fd: mm[1]! }
      if (unfinished) pending.set(tid, done)
      else if (/\)\s+= \d+$/.test(rest)) events.push(done)
    } else if ((mm = /^fdatasync\((\d+)/.exec(rest)) !== null && (walFds.has(mm[1]!) || dataFds.has(mm[1]!))) {
      const fd = mm[1]!
      const id = `s${seq++}`
      const wal = walFds.has(fd)
      if (wal) events.push({ kind: "walSyncStart", id, fd })
      const done: Event = { kind: wal ? "walSyncDone" : "dbSyncDone", id, fd }
      if (unfinished) pending.set(tid, done)
      else if (/\)\s+= 0$/.test(rest)) events.push(done)
    } else if ((mm = /^pwrite64\((\d+),/.exec(rest)) !== null && dsyncFds.has(mm[1]!)) {
      const done: Event = { kind: "metaWriteDone" }
      if (unfinished) pending.set(tid, done)
      else if (/\)\s+= \d+$/.test(rest)) events.push(done)
    } else if ((mm = /^<\.\.\. (pwritev|fdatasync|pwrite64) resumed>.*\)\s+= (\d+)$/.exec(rest)) !== null) {
      const done = pending.get(tid)
      pending.delete(tid)
      const ok = mm[1] === "fdatasync" ? mm[2] === "0" : true
      if (done !== undefined && ok) events.push(done)
    }
  }
  return events
}

/** The acks not preceded (after their staging) by a WAL write and then an fdatasync of that file. */
const uncoveredAcks = (events: ReadonlyArray<Event>): Array<string> => {
  const staged = new Map<number, number>()
  const problems: Array<string> = []
  events.forEach((e, i) => {
    if (e.kind === "stage") staged.set(e.n!, i)
    if (e.kind !== "ack") return
    const s = staged.get(e.n!)
    if (s === undefined) return problems.push(`ack ${e.n} without stage`)
    const writesStarted = new Set<string>()
    const written = new Set<string>() // fds with a write that started after staging and finished
    const syncsStarted = new Set<string>()
    for (let j = s + 1; j < i; j++) {
      const x = events[j]!
      if (x.kind === "walWriteStart") writesStarted.add(x.id!)
      if (x.kind === "walWriteDone" && writesStarted.has(x.id!)) written.add(x.fd!)
      if (x.kind === "walSyncStart" && written.has(x.fd!)) syncsStarted.add(x.id!)
      if (x.kind === "walSyncDone" && syncsStarted.has(x.id!)) return
    }
    problems.push(`ack ${e.n} at event ${i} (staged at ${s}) without a WAL write + fdatasync in between`)
  })
  return problems
}

/** the traced writer runs as a child the worker waits for, not under spawnSync: a blocked worker misses vitest's RPC deadline */
const traceWriter = async (name: string, extra: ReadonlyArray<string>) => {
  const dir = path.join(root, name)
  const log = path.join(root, `${name}.strace`)
  const status = await new Promise<number>((resolve) =>
    execFile(
      "strace",
      [
        "-f",
        "-qq",
        "-e",
        "trace=openat,close,fdatasync,pwritev,pwrite64,write",
        "-e",
        "signal=none",
        "-s",
        "24",
        "-o",
        log,
        process.execPath,
        child.file,
        "durability-writer",
        dir,
        "60",
        ...extra
      ],
      { cwd: projectRoot, encoding: "utf8", timeout: 45_000 },
      (e) => resolve(e === null ? 0 : typeof e.code === "number" ? e.code : 1)
    )
  )
  expect(status).toBe(0)
  return parse(fs.readFileSync(log, "utf8"))
}

describe("durability (LMDB backend with WAL, system-call trace)", () => {
  it.skipIf(!strace)(
    "a write Effect completes only after its WAL record was written and fdatasync'ed; LMDB is synced off that path",
    async () => {
      const events = await traceWriter("synced", [])
      expect(uncoveredAcks(events)).toEqual([])
      const acks = events.filter((e) => e.kind === "ack").map((e) => e.n!)
      expect(acks.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
      // Group commit: fewer WAL syncs than acks.
      const walSyncs = events.filter((e) => e.kind === "walSyncDone").length
      expect(walSyncs).toBeGreaterThan(0)
      expect(walSyncs).toBeLessThanOrEqual(60)
      // LMDB: synced a few times after the first staging (periodic commits and close), not per batch...
      const firstStage = events.findIndex((e) => e.kind === "stage")
      const dbSyncs = events.slice(firstStage).filter((e) => e.kind === "dbSyncDone").length
      expect(dbSyncs).toBeGreaterThan(0)
      expect(dbSyncs).toBeLessThan(30)
      // ...and close applied what the WAL held: a full LMDB commit after the last ack.
      const lastAck = events.map((e) => e.kind).lastIndexOf("ack")
      const after = events.slice(lastAck).map((e) => e.kind)
      const sync = after.indexOf("dbSyncDone")
      expect(sync).toBeGreaterThan(0)
      expect(after.indexOf("metaWriteDone", sync)).toBeGreaterThan(sync)
    },
    60_000
  )

  it.skipIf(!strace)(
    "the check fails when the WAL does not sync (acks without an fdatasync)",
    async () => {
      const events = await traceWriter("unsynced", ["nosync"])
      expect(events.filter((e) => e.kind === "ack").length).toBe(60)
      expect(events.some((e) => e.kind === "walWriteDone")).toBe(true)
      expect(uncoveredAcks(events).length).toBe(60)
    },
    60_000
  )
})
