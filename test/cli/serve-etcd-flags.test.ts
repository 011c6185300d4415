/**
 * `serve` against etcd itself on etcd's own flags (issue 46): for random subsets of etcd's flags,
 * each with a value etcd takes on its own, the same command line is started with etcd 3.4 (and etcd
 * 3.6 with its flags, when benchmarks/go/build.sh has built it) and with `etcd-effect serve`: ours
 * answers /health whenever etcd does, and exits with an error whenever etcd does, the error naming
 * the flag etcd's names. The subsets mix flags that apply to one member with the inert ones (raft,
 * peers, v2) whose combinations etcd refuses (--election-timeout under 5 heartbeats, too long, an
 * experimental flag with its 3.6 name, both bootstrap flags, a feature gate against its flag).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { ETCD_BIN, skipEtcd } from "../support/etcd.js"
import { freePorts } from "../support/ports.js"
import { unstalled } from "../support/stall.js"

const CLI = path.resolve("dist/cli/main.js")

/** etcd 3.6 from the cache of benchmarks/go/build.sh, when it has been built */
const etcd36 = ((): string | undefined => {
  try {
    const out = execFileSync("bash", ["benchmarks/go/build.sh", "--cached"], { encoding: "utf8" })
    const bin = /^ETCD_36_BIN=(.*)$/m.exec(out)?.[1]
    return bin !== undefined && fs.existsSync(bin) ? bin : undefined
  } catch {
    return undefined
  }
})()

type Pool = ReadonlyArray<readonly [string, ReadonlyArray<string>]>

/** flags of both versions, each with values etcd takes on their own */
const common: Pool = [
  ["heartbeat-interval", ["50", "100", "300"]],
  ["election-timeout", ["500", "1000", "60000"]],
  ["snapshot-count", ["1000", "100000"]],
  ["max-snapshots", ["0", "5"]],
  ["max-wals", ["0", "5"]],
  ["quota-backend-bytes", ["0", "1048576000"]],
  ["max-txn-ops", ["128", "1024"]],
  ["max-request-bytes", ["1572864", "10485760"]],
  ["grpc-keepalive-min-time", ["5s", "1s"]],
  ["auto-compaction-retention", ["0", "1", "5m"]],
  ["log-level", ["debug", "info", "warn", "error"]],
  ["strict-reconfig-check", ["true", "false"]],
  ["pre-vote", ["true", "false"]],
  ["initial-election-tick-advance", ["true", "false"]],
  ["initial-cluster-token", ["etcd-cluster", "tkn-1"]],
  ["discovery-srv", ["example.invalid"]],
  ["experimental-initial-corrupt-check", ["true", "false"]],
  ["experimental-corrupt-check-time", ["0s", "1m"]],
  ["experimental-compaction-batch-limit", ["1000", "10"]],
  ["experimental-watch-progress-notify-interval", ["10m", "1s"]],
  ["experimental-warning-apply-duration", ["100ms", "1s"]],
  ["backend-batch-interval", ["10ms", "100ms"]],
  ["backend-batch-limit", ["100", "10000"]],
  ["unsafe-no-fsync", ["true", "false"]],
  ["bcrypt-cost", ["4", "10"]],
  ["auth-token-ttl", ["300", "60"]],
  ["metrics", ["basic", "extensive"]],
  ["enable-pprof", ["true", "false"]],
  ["max-concurrent-streams", ["100", "4294967295"]],
  ["cors", ["*"]],
  ["host-whitelist", ["*"]],
  ["log-outputs", ["stderr", "default"]],
  ["enable-grpc-gateway", ["true", "false"]],
  ["force-new-cluster", ["false"]],
  ["peer-client-cert-auth", ["false"]],
  ["experimental-enable-lease-checkpoint", ["true", "false"]]
]

const only34: Pool = [
  ["discovery-fallback", ["proxy", "exit"]],
  ["logger", ["zap", "capnslog"]],
  ["enable-v2", ["true", "false"]],
  ["debug", ["true", "false"]],
  ["log-package-levels", ["etcdmain=INFO"]],
  ["proxy", ["off"]],
  ["proxy-dial-timeout", ["1000"]]
]

const only36: Pool = [
  // 3.6 refuses "proxy" (the v2 proxy is gone); ours takes it as 3.4 does (docs/server.md)
  ["discovery-fallback", ["exit"]],
  ["logger", ["zap"]],
  ["log-format", ["json", "console"]],
  ["feature-gates", ["InitialCorruptCheck=true", "InitialCorruptCheck=false", "TxnModeWriteWithSharedBuffer=false"]],
  ["corrupt-check-time", ["0s", "2m"]],
  ["watch-progress-notify-interval", ["10m", "2s"]],
  ["compaction-batch-limit", ["1000"]],
  ["warning-apply-duration", ["100ms"]],
  ["max-learners", ["1", "2"]],
  ["snapshot-catchup-entries", ["5000"]],
  ["v2-deprecation", ["write-only", "not-yet"]],
  ["tls-min-version", ["TLS1.2", "TLS1.3"]],
  ["self-signed-cert-validity", ["1"]],
  ["raft-read-timeout", ["5s"]],
  ["socket-reuse-address", ["true", "false"]],
  // tracing: no RPC reaches the member here, so nothing is exported; a rate over a million is
  // refused by both only when tracing is on
  ["enable-distributed-tracing", ["true", "false"]],
  ["distributed-tracing-sampling-rate", ["0", "1000000", "1000001"]],
  ["distributed-tracing-service-name", ["etcd", "svc"]],
  ["distributed-tracing-instance-id", ["m1"]]
]

/** a random subset of the pool's flags, each with one of its values */
const subsets = (pool: Pool) =>
  fc
    .subarray(pool as Array<readonly [string, ReadonlyArray<string>]>, { minLength: 1, maxLength: 8 })
    .chain((flags) =>
      fc.tuple(...flags.map(([name, values]) => fc.constantFrom(...values).map((v) => `--${name}=${v}`)))
    )

type Outcome = { readonly started: true } | { readonly started: false; readonly error: string }

const tmp = (): string => fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "flags-"))

/** Starts `argv`: started once /health answers 200, refused when the process exits first. */
const outcome = async (argv: ReadonlyArray<string>, flags: ReadonlyArray<string>): Promise<Outcome> => {
  const dir = tmp()
  const [client, peer] = await freePorts(2)
  const url = `http://127.0.0.1:${client}`
  const peerUrl = `http://127.0.0.1:${peer}`
  const args = [
    ...argv.slice(1),
    `--data-dir=${dir}/data`,
    `--listen-client-urls=${url}`,
    `--advertise-client-urls=${url}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    ...flags
  ]
  const child: ChildProcess = spawn(argv[0]!, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH }
  })
  let out = ""
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()))
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  let done = false
  const healthy = (async () => {
    while (!done) {
      try {
        const res = await fetch(`${url}/health`)
        if (res.status === 200) return true
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    return false
  })()
  try {
    const first = await unstalled(
      `${argv.join(" ")} ${flags.join(" ")}`,
      Promise.race([healthy.then(() => "healthy" as const), exited.then(() => "exited" as const)])
    )
    done = true
    if (first === "healthy") return { started: true }
    return { started: false, error: out }
  } finally {
    done = true
    child.kill("SIGKILL")
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** the flag etcd's refusal names (its first -flag or --flag or "flag") */
const namedFlag = (error: string): string | undefined => {
  const line = error.split("\n").find((l) => /error verifying flags|failed to verify flags|invalid value/.test(l)) ?? ""
  const m = /-{1,2}([a-z][a-z0-9-]+)|"([a-z][a-z0-9-]+)"/.exec(
    line.replace(/^.*?(error verifying flags,|"error":)/, "")
  )
  return m?.[1] ?? m?.[2]
}

const counts = { started: 0, refused: 0, crashed: 0 }

const agrees = async (etcd: ReadonlyArray<string>, flags: ReadonlyArray<string>) => {
  const theirs = await outcome(etcd, flags)
  // etcd 3.4.23 panics (a nil zap logger in embed.Config.Validate) on some flags with its default
  // capnslog logger, e.g. --experimental-enable-lease-checkpoint=true: a crash is no verdict on the
  // flags, so fast-check skips that case
  if (!theirs.started && /^panic: /m.test(theirs.error)) {
    counts.crashed++
    fc.pre(false)
  }
  const ours = await outcome([process.execPath, CLI, "serve"], flags)
  const said = (o: Outcome) => (o.started ? "" : o.error.slice(-600))
  expect({ started: ours.started, flags, said: said(ours) }).toMatchObject({ started: theirs.started, flags })
  expect(ours.started, `etcd: ${said(theirs)}\nours: ${said(ours)}`).toBe(theirs.started)
  if (theirs.started) counts.started++
  else {
    counts.refused++
    const name = namedFlag(theirs.error)
    if (name !== undefined && !ours.started) expect(ours.error, `etcd: ${theirs.error}`).toContain(name)
  }
}

describe.skipIf(skipEtcd)("serve takes etcd's flags as etcd does", () => {
  it("starts and refuses with etcd 3.4, over random subsets of its flags", async () => {
    await fc.assert(
      fc.asyncProperty(subsets([...common, ...only34]), (flags) => agrees([ETCD_BIN], flags)),
      { numRuns: 12, endOnFailure: true }
    )
    console.log(`etcd 3.4: ${counts.started} started, ${counts.refused} refused, ${counts.crashed} crashed (skipped)`)
    expect(counts.started).toBeGreaterThan(0)
  }, 0)

  it.skipIf(etcd36 === undefined)(
    "starts and refuses with etcd 3.6, over random subsets of its flags",
    async () => {
      const before = { ...counts }
      await fc.assert(
        fc.asyncProperty(subsets([...common, ...only36]), (flags) => agrees([etcd36!], flags)),
        { numRuns: 10, endOnFailure: true }
      )
      console.log(`etcd 3.6: ${counts.started - before.started} started, ${counts.refused - before.refused} refused`)
    },
    0
  )

  it.skipIf(etcd36 === undefined)(
    "checks the tracing sampling rate as etcd 3.6 does: only with tracing on",
    async () => {
      for (const flags of [
        ["--enable-distributed-tracing=true", "--distributed-tracing-sampling-rate=1000001"],
        ["--distributed-tracing-sampling-rate=1000001"]
      ]) {
        const theirs = await outcome([etcd36!], flags)
        const ours = await outcome([process.execPath, CLI, "serve"], flags)
        expect({ flags, started: ours.started }).toEqual({ flags, started: theirs.started })
        if (!theirs.started && !ours.started) expect(ours.error).toContain("tracing sampling rate must be less than")
      }
    },
    0
  )

  it("refuses what etcd refuses, naming the flag", async () => {
    for (const flags of [
      ["--heartbeat-interval=300", "--election-timeout=1000"],
      ["--election-timeout=60000"],
      ["--discovery-srv=example.invalid", "--initial-cluster=default=http://localhost:2380"]
    ]) {
      const theirs = await outcome([ETCD_BIN], flags)
      const ours = await outcome([process.execPath, CLI, "serve"], flags)
      expect(theirs.started).toBe(false)
      expect(ours.started).toBe(false)
      if (!ours.started && !theirs.started) expect(ours.error).toContain(namedFlag(theirs.error))
    }
  }, 0)
})
