/**
 * `npm run bench:checksum` (issue 41: the stored values' CRC-32C on the hot path): bench:compare's
 * put and range rows on builds of etcd-effect before the checksums came in (8821e87, the parent of
 * 41ae060), with them (41ae060) and this tree, beside etcd 3.6 in the same run, alternating rounds
 * (benchmarks/variants.ts). The old trees are built once by benchmarks/build-at.sh (cached).
 *
 *   npm run bench:checksum [-- --rounds N] [--only put,range] [--before 8821e87] [--after 41ae060]
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { benchArgs, positiveInt } from "./bench-args.js"
import { cleanup, etcdVersion, ourMain, projectRoot, startEtcdServer, startOurs } from "./compare-servers.js"
import { goInstruments } from "./etcd-tool.js"
import { openValue, sealValue } from "../src/backend/value-checksum.js"
import { runVariants } from "./variants.js"

process.on("exit", () => cleanup.now())
process.on("SIGINT", () => process.exit(130))
process.on("SIGTERM", () => process.exit(130))

const usage = `usage: npm run bench:checksum [-- options]
  --rounds N        alternating rounds (default 3)
  --only a,b        bench:compare scenarios (default put,range)
  --before C, --after C   the commits built before/after (default 8821e87, 41ae060)`
const values = benchArgs("bench:checksum", usage, () =>
  parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      rounds: { type: "string", default: "3" },
      only: { type: "string", default: "put,range" },
      before: { type: "string", default: "8821e87" },
      after: { type: "string", default: "41ae060" }
    }
  })
)
const rounds = positiveInt("bench:checksum", "--rounds", values.rounds)
const root = projectRoot()
const etcd36 = goInstruments(root).bins["ETCD_36_BIN"]
if (etcd36 === undefined) {
  process.stderr.write("bench:checksum: etcd 3.6 is not built: run `bash benchmarks/go/build.sh` first\n")
  process.exit(1)
}
const buildAt = (commit: string): string => {
  process.stderr.write(`bench:checksum: building ${commit} (benchmarks/build-at.sh, cached)\n`)
  const dir = execFileSync("bash", [path.join(root, "benchmarks/build-at.sh"), commit], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  }).trim()
  return path.join(dir, "dist/cli/main.js")
}
const head = execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
const beforeMain = buildAt(values.before)
const afterMain = buildAt(values.after)

/**
 * The checksum functions alone, on a put's record as bench:compare's put writes it: a 17-byte
 * revision key and its mvccpb.KeyValue (an 8-byte key, a 256-byte value, revisions: ~290 bytes).
 * CPU ns per call (this process's user + system time: the machine's load does not count), the
 * median of 5 runs of 200,000 calls each, after one unmeasured.
 */
const micro = (): { seal: number; open: number } => {
  const key = Buffer.alloc(17, 7)
  const value = Buffer.alloc(290, 0x61)
  const sealed = sealValue(key, value)
  const time = (f: () => unknown): number => {
    const runs: Array<number> = []
    let sink = 0
    for (let r = 0; r < 6; r++) {
      const t0 = process.cpuUsage()
      for (let i = 0; i < 200_000; i++) sink ^= (f() as Uint8Array).length
      const used = process.cpuUsage(t0)
      if (r > 0) runs.push(((used.user + used.system) * 1000) / 200_000)
    }
    if (sink === -1) process.stderr.write("")
    return runs.sort((a, b) => a - b)[2]!
  }
  return { seal: time(() => sealValue(key, value)), open: time(() => openValue("key", key, sealed)) }
}
const m = micro()

const result = await runVariants(
  `bench:checksum — etcd 3.6 (${etcdVersion(etcd36)}), etcd-effect before the checksums (${values.before}), with them (${values.after}), this tree (${head})`,
  [
    { name: "etcd 3.6", start: (r) => startEtcdServer(r, { system: "etcd-3.6", bin: etcd36 }) },
    { name: `before (${values.before})`, start: (r) => startOurs({ root: r, main: beforeMain }) },
    { name: `after (${values.after})`, start: (r) => startOurs({ root: r, main: afterMain }) },
    { name: `this tree (${head})`, start: (r) => startOurs({ root: r, main: ourMain() }) }
  ],
  values.only,
  rounds
)
console.log(`\n${result.header}\n\n${result.table}\n`)
console.log(
  `the checksum functions alone (a 17-byte key, a 290-byte record): sealValue ${m.seal.toFixed(0)} ns, openValue ${m.open.toFixed(0)} ns of CPU per call`
)
cleanup.now()
process.exit(0)
