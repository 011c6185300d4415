/**
 * Start-up of the command line, side by side with etcdctl 3.4 in the same run: wall time, CPU
 * time (user + sys, GNU time) and peak RSS of `--help`, `get` and `watch` (until its first event;
 * wall only) against one etcd 3.4, N alternating runs each, medians. The program measured is the
 * bin (`dist/cli/main.js`): as users run it (its lean path serves these three: src/cli/lean/), and
 * beside it the full program it falls back to (`ETCD_EFFECT_LEAN=0`), with its code cache warm (one
 * run of each command before the timed ones writes it) and without (NODE_DISABLE_COMPILE_CACHE);
 * with `--unbundled` also the tsc output it is bundled from (`dist/src/cli/main.js`).
 *
 *   npm run build && npm run bench:cli-startup [-- --runs 20] [--unbundled]
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { startEtcd } from "./etcd.js"
import { projectRoot } from "./compare-servers.js"

const { values } = parseArgs({
  options: { runs: { type: "string", default: "15" }, unbundled: { type: "boolean", default: false } }
})
const runs = Number(values.runs)
const ETCDCTL = process.env.ETCDCTL_BIN ?? "/usr/bin/etcdctl"

const TIME = "/usr/bin/time"
const haveTime = fs.existsSync(TIME)

interface Sample {
  readonly ms: number
  /** user + sys CPU ms (GNU time), when measured */
  readonly cpuMs: number | undefined
}

/**
 * Wall time of one run, from spawn to exit, and its CPU time (a run that ends by itself goes
 * through GNU time, whose last stderr line is "<user s> <sys s>"); `until` ends a long-running
 * command (watch) once its output holds, and the time is taken then (no CPU figure: GNU time
 * would not pass the interrupt on).
 */
const measure = (
  file: string,
  args: ReadonlyArray<string>,
  until?: (out: string) => boolean,
  env: Record<string, string> = {}
): Promise<Sample> =>
  new Promise((resolve, reject) => {
    const timed = until === undefined && haveTime
    const start = process.hrtime.bigint()
    const child = spawn(timed ? TIME : file, timed ? ["-f", "%U %S", file, ...args] : args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ETCDCTL_API: "3", ...env }
    })
    let out = ""
    let err = ""
    let done = false
    let ms = 0
    child.stdout.on("data", (d) => {
      out += d
      if (!done && until?.(out) === true) {
        done = true
        ms = Number(process.hrtime.bigint() - start) / 1e6
        child.kill("SIGINT")
      }
    })
    child.stderr.on("data", (d) => (err += d))
    child.on("exit", (code, signal) => {
      if (until === undefined) ms = Number(process.hrtime.bigint() - start) / 1e6
      if (until === undefined ? code !== 0 : !done)
        return reject(new Error(`${file} ${args.join(" ")}: exit ${code ?? signal}\n${out}\n${err}`))
      let cpuMs: number | undefined
      if (timed) {
        const [user, sys] = err.trim().split("\n").pop()!.split(" ").map(Number)
        cpuMs = (user! + sys!) * 1000
      }
      resolve({ ms, cpuMs })
    })
  })

/** Peak RSS (KB) of one run, from GNU time's %M (Debian's /usr/bin/time), or undefined without it. */
const peakRss = (
  file: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<number | undefined> =>
  new Promise((resolve) => {
    if (!fs.existsSync("/usr/bin/time")) return resolve(undefined)
    const child = spawn("/usr/bin/time", ["-f", "%M", file, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ETCDCTL_API: "3", ...env }
    })
    let err = ""
    child.stderr.on("data", (d) => (err += d))
    child.on("exit", () => resolve(Number(err.trim().split("\n").pop())))
  })

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const main = async () => {
  const root = projectRoot()
  const programs: Array<{
    name: string
    cmd: (args: ReadonlyArray<string>) => [string, Array<string>]
    env?: Record<string, string>
    /** Node starting and exiting with nothing to run: the floor of any node program (not for watch) */
    floor?: boolean
  }> = [
    { name: "etcdctl 3.4", cmd: (args) => [ETCDCTL, [...args]] },
    { name: 'node -e "" (floor)', cmd: () => ["node", ["-e", ""]], floor: true },
    { name: "etcd-effect (bin)", cmd: (args) => ["node", [path.join(root, "dist/cli/main.js"), ...args]] },
    {
      name: "full program (ETCD_EFFECT_LEAN=0)",
      cmd: (args) => ["node", [path.join(root, "dist/cli/main.js"), ...args]],
      env: { ETCD_EFFECT_LEAN: "0" }
    },
    {
      name: "full program, no code cache",
      cmd: (args) => ["node", [path.join(root, "dist/cli/main.js"), ...args]],
      env: { ETCD_EFFECT_LEAN: "0", NODE_DISABLE_COMPILE_CACHE: "1" }
    }
  ]
  if (values.unbundled) {
    programs.push({
      name: "etcd-effect (tsc output)",
      cmd: (args) => ["node", [path.join(root, "dist/src/cli/main.js"), ...args]]
    })
  }
  const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "etcd-effect-startup-"))
  const etcd = await startEtcd(dataRoot, "etcd-")
  try {
    const ep = ["--endpoints", etcd.endpoint]
    await measure(ETCDCTL, ["put", "/startup", "v", ...ep])
    const cases: Array<{ name: string; args: Array<string>; until?: (out: string) => boolean }> = [
      { name: "--help", args: ["--help"] },
      { name: "get /startup", args: ["get", "/startup", ...ep] },
      // --rev 1 replays the put at once: the time to the first printed event
      {
        name: "watch /startup --rev 1 (first event)",
        args: ["watch", "/startup", "--rev", "1", ...ep],
        until: (o) => o.includes("\nv\n")
      }
    ]
    const results: Array<{
      program: string
      command: string
      ms: number
      cpuMs: number | undefined
      rssKb: number | undefined
    }> = []
    for (const c of cases) {
      const samples = new Map<string, Array<Sample>>()
      // the full program's code cache (one per command word) is written by its first run: the timed runs find it warm
      await measure("node", [path.join(root, "dist/cli/main.js"), ...c.args], c.until, { ETCD_EFFECT_LEAN: "0" })
      for (let i = 0; i < runs; i++) {
        // alternate the order each round so neither side always runs on a warmer machine
        const order = i % 2 === 0 ? programs : [...programs].reverse()
        for (const p of order) {
          if (p.floor === true && c.until !== undefined) continue
          const [file, args] = p.cmd(c.args)
          samples.set(p.name, [...(samples.get(p.name) ?? []), await measure(file, args, c.until, p.env)])
        }
      }
      for (const p of programs) {
        if (p.floor === true && c.until !== undefined) continue
        const [file, args] = p.cmd(c.args)
        const rssKb = c.until === undefined ? await peakRss(file, args, p.env) : undefined
        const taken = samples.get(p.name)!
        const cpu = taken.flatMap((t) => (t.cpuMs === undefined ? [] : [t.cpuMs]))
        results.push({
          program: p.name,
          command: c.name,
          ms: median(taken.map((t) => t.ms)),
          cpuMs: cpu.length === 0 ? undefined : median(cpu),
          rssKb
        })
      }
    }
    console.log(
      `CLI start-up (wall, CPU user + sys, peak RSS), median of ${runs} alternating runs; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
    )
    console.log(`| command | ${programs.map((p) => p.name).join(" | ")} |`)
    console.log(`|---|${programs.map(() => "---:").join("|")}|`)
    for (const c of cases) {
      const row = programs.map((p) => {
        const r = results.find((x) => x.program === p.name && x.command === c.name)
        if (r === undefined) return "—"
        const cpu = r.cpuMs === undefined ? "" : ` (${r.cpuMs.toFixed(0)} ms CPU)`
        return `${r.ms.toFixed(0)} ms${cpu}${r.rssKb !== undefined ? `, ${(r.rssKb / 1024).toFixed(0)} MB` : ""}`
      })
      console.log(`| \`${c.name}\` | ${row.join(" | ")} |`)
    }
  } finally {
    await etcd.stop()
    fs.rmSync(dataRoot, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : String(e))
  process.exit(1)
})
