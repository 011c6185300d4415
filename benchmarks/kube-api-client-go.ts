/**
 * bench:kube-api's client-go part (issue 27): client-go v0.37.2's typed clientset against
 * `etcd-effect apiserver`, protobuf (client-go's default for built-in kinds) against JSON, on
 * OBJECTS ConfigMaps of ~1 KiB (default 10,000). The client is benchmarks/go/kube-client (built
 * and cached by benchmarks/go/build.sh kube-client), one process per measurement:
 *
 *   - LIST: `typed-list`, LISTS typed LISTs of every ConfigMap at resourceVersion=0 (served from
 *     the watch cache), decoded into a ConfigMapList; p50 and p99;
 *   - watch: `typed-watch`, one typed watch with sendInitialEvents=true (the stream an informer
 *     syncs from): the time to the initial-events-end bookmark, decoded ADDED events per second;
 *   - informer sync: `informer`, a shared informer of every ConfigMap until HasSynced, with
 *     client-go's WatchListClient feature on (a WatchList stream) and off (a LIST, then a watch).
 *
 * ROUNDS rounds (default 3) alternate the two body types; each figure is the median of its rounds.
 */
import { execFile, execFileSync } from "node:child_process"
import * as path from "node:path"

const OBJECTS = Number(process.env.OBJECTS ?? "10000")
const LISTS = Number(process.env.LISTS ?? "10")
const ROUNDS = Number(process.env.ROUNDS ?? "3")
const CONTENTS = ["protobuf", "json"] as const
type Content = (typeof CONTENTS)[number]

/** benchmarks/go/build.sh kube-client's binary ($KUBE_CLIENT_BIN when set) */
export const kubeClientBin = (root: string): string => {
  if (process.env["KUBE_CLIENT_BIN"]) return process.env["KUBE_CLIENT_BIN"]
  const out = execFileSync("bash", [path.join(root, "benchmarks", "go", "build.sh"), "kube-client"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  const m = /^KUBE_CLIENT_BIN=(.+)$/m.exec(out)
  if (m === null) throw new Error("benchmarks/go/build.sh kube-client printed no KUBE_CLIENT_BIN")
  return m[1]!
}

const client = (bin: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<Record<string, unknown>>((resolve, reject) =>
    execFile(
      bin,
      [...args],
      { env: { ...process.env, ...env }, maxBuffer: 1 << 20, timeout: 10 * 60_000 },
      (err, stdout, stderr) => {
        if (err !== null) return reject(new Error(`kube-client ${args.join(" ")}: ${stderr || String(err)}`))
        const last = stdout.trim().split("\n").pop() ?? ""
        resolve(JSON.parse(last) as Record<string, unknown>)
      }
    )
  )

export interface ClientGoRow {
  readonly system: string
  readonly content: Content
  readonly objects: number
  readonly listP50Ms: number
  readonly listP99Ms: number
  readonly watchMs: number
  readonly watchEventsPerSec: number
  readonly informerWatchListMs: number
  readonly informerListMs: number
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? NaN
}

/** the client-go measurements against one apiserver: one row per body type */
export const measureClientGo = async (
  bin: string,
  apiUrl: string,
  system: string
): Promise<ReadonlyArray<ClientGoRow>> => {
  const base = ["-server", apiUrl]
  const created = await client(bin, ["create", ...base, "-namespaces", "10", "-n", String(OBJECTS), "-size", "1024"])
  if (created["errors"] !== 0) throw new Error(`create: ${JSON.stringify(created)}`)
  const total = OBJECTS + 10 // and one "bench" ConfigMap per namespace
  const samples = new Map<Content, Array<Omit<ClientGoRow, "system" | "content" | "objects">>>()
  for (let round = 0; round < ROUNDS; round++) {
    // alternate which body type goes first
    const order = round % 2 === 0 ? CONTENTS : [...CONTENTS].reverse()
    for (const content of order) {
      const c = ["-content", content]
      const list = await client(bin, ["typed-list", ...base, ...c, "-n", String(LISTS), "-rv", "0"])
      const watch = await client(bin, ["typed-watch", ...base, ...c])
      const on = await client(bin, ["informer", ...base, ...c], { KUBE_FEATURE_WatchListClient: "true" })
      const off = await client(bin, ["informer", ...base, ...c], { KUBE_FEATURE_WatchListClient: "false" })
      for (const [what, r, key] of [
        ["typed-list", list, "items"],
        ["typed-watch", watch, "events"],
        ["informer (WatchList)", on, "items"],
        ["informer (LIST)", off, "items"]
      ] as const)
        if (r[key] !== total) throw new Error(`${what} ${content}: ${String(r[key])} objects, expected ${total}`)
      if (on["watchList"] !== true || off["watchList"] !== false) throw new Error("WatchListClient not as set")
      const s = samples.get(content) ?? []
      s.push({
        listP50Ms: Number(list["p50"]),
        listP99Ms: Number(list["p99"]),
        watchMs: Number(watch["ms"]),
        watchEventsPerSec: (total / Number(watch["ms"])) * 1000,
        informerWatchListMs: Number(on["syncMs"]),
        informerListMs: Number(off["syncMs"])
      })
      samples.set(content, s)
      console.error(JSON.stringify({ system, content, round, list, watch, informer: { on, off } }))
    }
  }
  return CONTENTS.map((content) => {
    const s = samples.get(content)!
    const m = (k: keyof (typeof s)[number]) => median(s.map((x) => x[k]))
    return {
      system,
      content,
      objects: total,
      listP50Ms: m("listP50Ms"),
      listP99Ms: m("listP99Ms"),
      watchMs: m("watchMs"),
      watchEventsPerSec: m("watchEventsPerSec"),
      informerWatchListMs: m("informerWatchListMs"),
      informerListMs: m("informerListMs")
    }
  })
}

/** the Markdown table of the rows */
export const clientGoTable = (rows: ReadonlyArray<ClientGoRow>): ReadonlyArray<string> => {
  const f = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d })
  return [
    `client-go v0.37.2 typed clientset, ${f(rows[0]?.objects ?? 0)} ConfigMaps of ~1 KiB; LIST at resourceVersion=0 (${LISTS} per round), medians of ${ROUNDS} alternating rounds`,
    "",
    "| apiserver over | body | LIST p50 ms | LIST p99 ms | watch (sendInitialEvents) ms | watch events/s | informer sync, WatchList ms | informer sync, LIST ms |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.system} | ${r.content} | ${f(r.listP50Ms, 1)} | ${f(r.listP99Ms, 1)} | ${f(r.watchMs)} | ${f(r.watchEventsPerSec)} | ${f(r.informerWatchListMs)} | ${f(r.informerListMs)} |`
    )
  ]
}
