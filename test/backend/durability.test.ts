/**
 * When does a write Effect complete? Traced at the system-call level: a child writes batches with
 * 4 concurrent writers under strace, printing "stage n" right before staging and "ack n" when the
 * write Effect completed. For every ack there must be, after its staging and before its ack, an
 * fdatasync of the LMDB file that started after the staging and returned, followed by the meta-page
 * write on LMDB's O_DSYNC descriptor: the batch was on disk before it was acknowledged.
 * Skips when strace is missing or not permitted (containers without ptrace).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
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

interface Event {
  readonly kind: "stage" | "ack" | "syncStart" | "syncDone" | "metaWriteDone"
  readonly n?: number
  readonly id?: string
}

/** Parses `strace -f -o` output into the events we need, in log order. */
const parse = (log: string): Array<Event> => {
  const events: Array<Event> = []
  const dataFds = new Set<string>() // the LMDB file opened read-write: synced with fdatasync
  const dsyncFds = new Set<string>() // the LMDB file opened O_DSYNC: meta pages
  const pending = new Map<string, string>() // thread → what it has unfinished
  let syncSeq = 0
  for (const line of log.split("\n")) {
    const m = /^(\d+)\s+(.*)$/.exec(line)
    if (m === null) continue
    const tid = m[1]!
    const rest = m[2]!
    let mm: RegExpExecArray | null
    if ((mm = /^openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+).*\)\s+= (\d+)$/.exec(rest)) !== null) {
      if (!mm[1]!.endsWith("/member/snap/db")) continue
      if (mm[2]!.includes("O_DSYNC")) dsyncFds.add(mm[3]!)
      else dataFds.add(mm[3]!)
    } else if ((mm = /^write\(1, "(stage|ack) (\d+)\\n"/.exec(rest)) !== null) {
      events.push({ kind: mm[1] as "stage" | "ack", n: Number(mm[2]) })
    } else if ((mm = /^f(?:data)?sync\((\d+)(\)\s+= 0| <unfinished \.\.\.>)$/.exec(rest)) !== null) {
      if (!dataFds.has(mm[1]!)) continue
      const id = `s${syncSeq++}`
      events.push({ kind: "syncStart", id })
      if (mm[2]!.startsWith(")")) events.push({ kind: "syncDone", id })
      else pending.set(tid, id)
    } else if (/^<\.\.\. f(?:data)?sync resumed>\)\s+= 0$/.test(rest)) {
      const id = pending.get(tid)
      pending.delete(tid)
      if (id !== undefined) events.push({ kind: "syncDone", id })
    } else if ((mm = /^pwrite64\((\d+), .*(\)\s+= \d+| <unfinished \.\.\.>)$/.exec(rest)) !== null) {
      if (!dsyncFds.has(mm[1]!)) continue
      if (mm[2]!.startsWith(")")) events.push({ kind: "metaWriteDone" })
      else pending.set(tid, "meta")
    } else if (/^<\.\.\. pwrite64 resumed>.*\)\s+= \d+$/.test(rest) && pending.get(tid) === "meta") {
      pending.delete(tid)
      events.push({ kind: "metaWriteDone" })
    }
  }
  return events
}

describe("durability (LMDB backend, system-call trace)", () => {
  it.skipIf(!strace)("a write Effect completes only after fdatasync of the data and the O_DSYNC meta write", () => {
    const dir = path.join(root, "data")
    const log = path.join(root, "strace.log")
    const r = spawnSync(
      "strace",
      ["-f", "-qq", "-e", "trace=openat,fsync,fdatasync,pwrite64,write", "-e", "signal=none", "-s", "32", "-o", log, process.execPath, child.file, "durability-writer", dir, "60"],
      { cwd: projectRoot, encoding: "utf8", timeout: 45_000 }
    )
    expect(r.status).toBe(0)
    const events = parse(fs.readFileSync(log, "utf8"))
    const staged = new Map<number, number>()
    const acks: Array<number> = []
    const problems: Array<string> = []
    events.forEach((e, i) => {
      if (e.kind === "stage") staged.set(e.n!, i)
      if (e.kind !== "ack") return
      acks.push(e.n!)
      const s = staged.get(e.n!)
      if (s === undefined) return problems.push(`ack ${e.n} without stage`)
      // a sync that started after staging and returned before the ack, then a meta write, then the ack
      const started = new Set<string>()
      let synced = -1
      for (let j = s + 1; j < i; j++) {
        const x = events[j]!
        if (x.kind === "syncStart") started.add(x.id!)
        if (x.kind === "syncDone" && started.has(x.id!) && synced < 0) synced = j
        if (x.kind === "metaWriteDone" && synced >= 0) return
      }
      problems.push(`ack ${e.n} at event ${i} (staged at ${s}) without a covering fdatasync + meta write`)
    })
    expect(problems).toEqual([])
    expect(acks.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
  }, 60_000)
})
