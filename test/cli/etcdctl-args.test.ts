/**
 * Random command lines, read by etcdctl 3.4 and by us: the same verdict for each — refused by the
 * command line (the same first error line: unknown flag, bad value, missing argument, unknown
 * command), refused by the command's own checks (the same line and exit code), help, or run. A
 * mistyped flag must never become a key (issue 25: `del --prefx foo` deleted every key from
 * "--prefx" on).
 *
 * etcdctl runs against a real etcd 3.4 (a scratch member of this file's own), so a command line it
 * accepts gets past its parser and runs. Ours is read in-process by the table's parser and the
 * commands' checks (src/cli/flags/, src/cli/commands/usage.ts) — 300 runs — and, for 30 more, by
 * the built program itself, which must give the same verdict.
 *
 * The vocabulary is etcdctl's flags that this program serves (docs/decisions.md lists the ones it
 * refuses on purpose), in every form pflag takes, with good and bad values, unknown and misspelled
 * flags, words that start with "-", and `--`. `--endpoints` always names the scratch member.
 * `watch` and `lease keep-alive` are left out: they run until interrupted.
 */
import { spawn } from "node:child_process"
import { FastCheck } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clientSettings } from "../../src/cli/commands/client-settings.js"
import {
  compactionArgs,
  delArgs,
  getArgs,
  leaseIdArg,
  leaseTtl,
  putArgs,
  TIMETOLIVE_ARGS,
  timetoliveArgs,
  UsageError
} from "../../src/cli/commands/usage.js"
import { parseCommandLine, type ParsedRun } from "../../src/cli/flags/parse.js"
import { ETCDCTL_BIN, EtcdProcess, skipEtcd } from "../support/etcd.js"
import { ensureBuilt, mainJs } from "../server/support/process.js"

/** What a program made of a command line. */
type Verdict =
  | { readonly kind: "flag-error"; readonly line: string }
  | { readonly kind: "usage"; readonly line: string; readonly code: number }
  | { readonly kind: "help" }
  | { readonly kind: "ran" }

const FLAG_ERROR =
  /^Error: (unknown flag|unknown shorthand flag|flag needs an argument|invalid argument|bad flag syntax|unknown command)/

/** The verdict of a finished etcdctl (or etcd-effect) process. */
const verdictOf = (code: number, stdout: string, stderr: string): Verdict => {
  // cobra names the program in "unknown command": etcdctl's is ours here
  const first = (stderr.split("\n").find((l) => l.startsWith("Error: ")) ?? "").replace(
    'for "etcdctl"',
    'for "etcd-effect"'
  )
  if (FLAG_ERROR.test(first)) return { kind: "flag-error", line: first }
  if (code === 128 || code === 4 || first.startsWith("Error: strconv.")) return { kind: "usage", line: first, code }
  if (code === 0 && stdout.startsWith("NAME:")) return { kind: "help" }
  return { kind: "ran" }
}

const CHECKS: Record<string, (p: ParsedRun) => unknown> = {
  get: getArgs,
  put: (p) => putArgs(p, () => ""),
  del: delArgs,
  compaction: compactionArgs,
  "lease grant": leaseTtl,
  "lease revoke": (p) => leaseIdArg(p, "lease revoke command needs 1 argument"),
  "lease timetolive": timetoliveArgs,
  "endpoint status": () => undefined,
  version: () => undefined
}

/** Our verdict, in-process: the table's reading, then the command's checks and the global flags'. */
const ours = (args: ReadonlyArray<string>): Verdict => {
  const p = parseCommandLine(args, {})
  if (p._tag === "error") return { kind: "flag-error", line: p.lines[0]! }
  if (p._tag === "help") return { kind: "help" }
  const own = CHECKS[p.command.path]!(p)
  if (own instanceof UsageError) return { kind: "usage", line: `Error: ${own.message}`, code: own.exitCode }
  if (p.command.path === "version") return { kind: "ran" }
  const settings = clientSettings(p)
  if (settings instanceof UsageError)
    return { kind: "usage", line: `Error: ${settings.message}`, code: settings.exitCode }
  // checked after the client is made, as etcdctl does
  const late = p.command.path === "lease timetolive" ? leaseIdArg(p, TIMETOLIVE_ARGS) : undefined
  if (late instanceof UsageError) return { kind: "usage", line: `Error: ${late.message}`, code: late.exitCode }
  if (
    p.command.path === "get" &&
    (own as { printValueOnly: boolean }).printValueOnly &&
    settings.writeOut !== "simple"
  ) {
    return { kind: "usage", line: "Error: print-value-only is only for `--write-out=simple`", code: 128 }
  }
  return { kind: "ran" }
}

const run = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

// ---------------------------------------------------------------- the vocabulary

const bool = (name: string) =>
  FastCheck.constantFrom(`--${name}`, `--${name}=true`, `--${name}=false`, `--${name}=maybe`)
const valued = (name: string, values: ReadonlyArray<string>) =>
  FastCheck.tuple(FastCheck.constantFrom(...values), FastCheck.boolean()).map(([v, joined]) =>
    joined ? [`--${name}=${v}`] : [`--${name}`, v]
  )
const one = (a: FastCheck.Arbitrary<string>) => a.map((s) => [s])

const INTS = ["1", "0", "-1", "abc", "0x10", "010", "1_0", "99999999999999999999", ""]
const DURATIONS = ["2s", "3", "abc", "1.5s", "500ms", "1h"]
const globalTokens = FastCheck.oneof(
  valued("write-out", ["json", "simple", "yaml", ""]),
  FastCheck.constantFrom(["-w", "json"], ["-wjson"], ["-w=json"], ["-w"], ["-w", "simple"]),
  valued("dial-timeout", DURATIONS),
  valued("command-timeout", DURATIONS),
  valued("keepalive-time", DURATIONS),
  one(bool("hex")),
  one(FastCheck.constantFrom("--insecure-transport", "--insecure-transport=true", "--insecure-skip-tls-verify=false"))
)

const commandTokens: Record<string, FastCheck.Arbitrary<Array<string>>> = {
  get: FastCheck.oneof(
    one(bool("prefix")),
    one(bool("from-key")),
    one(bool("keys-only")),
    one(bool("print-value-only")),
    valued("limit", INTS),
    valued("rev", INTS),
    valued("consistency", ["l", "s", "x"]),
    valued("order", ["ASCEND", "descend", "up", ""]),
    valued("sort-by", ["KEY", "value", "create", "x"])
  ),
  put: FastCheck.oneof(
    one(bool("prev-kv")),
    one(bool("ignore-value")),
    one(bool("ignore-lease")),
    valued("lease", ["0", "ff", "zz", "-1", "ffffffffffffffffff"])
  ),
  del: FastCheck.oneof(one(bool("prefix")), one(bool("from-key")), one(bool("prev-kv"))),
  compaction: one(bool("physical")),
  "lease grant": FastCheck.constant([]),
  "lease revoke": FastCheck.constant([]),
  "lease timetolive": one(bool("keys")),
  "endpoint status": FastCheck.constant([]),
  version: FastCheck.constant([])
}

const wordTokens = one(
  FastCheck.constantFrom("/k/a", "/k/b", "k", "10", "ff", "zz", "true", "", "-", "-k", "--", "json", "-x", "-hx")
)
const wrongTokens = one(
  FastCheck.constantFrom(
    "--prefx",
    "--bogus",
    "--Prefix",
    "--prefix-",
    "---x",
    "--=x",
    "--help",
    "-h",
    "--help=maybe",
    "--limit"
  )
)

/** A command line: global tokens, the command's words (the endpoint flag among them), then tokens. */
const commandLine = (endpoint: string) =>
  FastCheck.constantFrom(...Object.keys(commandTokens), "gett", "lease bogus")
    .chain((command) =>
      FastCheck.tuple(
        FastCheck.constant(command),
        FastCheck.array(globalTokens, { maxLength: 2 }),
        FastCheck.array(
          FastCheck.oneof(
            { weight: 3, arbitrary: commandTokens[command] ?? FastCheck.constant([]) },
            { weight: 3, arbitrary: wordTokens },
            { weight: 2, arbitrary: globalTokens },
            { weight: 1, arbitrary: wrongTokens }
          ),
          { maxLength: 6 }
        ),
        FastCheck.boolean()
      )
    )
    .map(([command, before, after, endpointFirst]) => {
      const words = command.split(" ")
      const at = `--endpoints=${endpoint}`
      return [
        ...(endpointFirst ? [at] : []),
        ...before.flat(),
        words[0]!,
        ...(endpointFirst ? [] : [at]),
        ...words.slice(1),
        ...after.flat()
      ]
    })

describe.skipIf(skipEtcd)("random command lines: etcd-effect and etcdctl 3.4 agree", () => {
  let etcd: EtcdProcess

  beforeAll(async () => {
    await ensureBuilt()
    etcd = await EtcdProcess.start()
    expect((await etcd.etcdctl(["put", "/k/a", "1"])).code).toBe(0)
  }, 120_000)
  afterAll(async () => {
    await etcd?.dispose()
  })

  const ETCDCTL_ENV = { ETCDCTL_API: "3" }

  it("the parser and the commands' checks give etcdctl's verdict (300 runs)", async () => {
    const seen = new Map<string, number>()
    await FastCheck.assert(
      FastCheck.asyncProperty(commandLine(etcd.endpoint), async (args) => {
        const r = await run(ETCDCTL_BIN, args, ETCDCTL_ENV)
        const theirs = verdictOf(r.code, r.stdout, r.stderr)
        expect(ours(args), `etcdctl ${args.join(" ")}\n${r.stderr}`).toEqual(theirs)
        seen.set(theirs.kind, (seen.get(theirs.kind) ?? 0) + 1)
      }),
      { numRuns: 300, seed: 250_25 }
    )
    // the generator reaches every verdict, each often enough to mean something
    for (const kind of ["flag-error", "usage", "help", "ran"]) {
      expect(seen.get(kind) ?? 0, `${kind}: ${JSON.stringify([...seen])}`).toBeGreaterThanOrEqual(15)
    }
  }, 240_000)

  it("the built program gives the same verdict as etcdctl (30 runs)", async () => {
    await FastCheck.assert(
      FastCheck.asyncProperty(commandLine(etcd.endpoint), async (args) => {
        const [a, b] = await Promise.all([run("node", [mainJs, ...args], {}), run(ETCDCTL_BIN, args, ETCDCTL_ENV)])
        expect(verdictOf(a.code, a.stdout, a.stderr), `etcd-effect ${args.join(" ")}\n${a.stderr}`).toEqual(
          verdictOf(b.code, b.stdout, b.stderr)
        )
      }),
      { numRuns: 30, seed: 250_26 }
    )
  }, 240_000)

  it("a mistyped flag deletes nothing", async () => {
    for (const k of ["--prefx", "--prefx/a", "--prefx/b", "foo"]) await etcd.etcdctl(["put", "--", k, "v"])
    const r = await run("node", [mainJs, "del", "--endpoints", etcd.endpoint, "--prefx", "foo"], {})
    expect(r).toEqual({ code: 1, stdout: "", stderr: "Error: unknown flag: --prefx\n" })
    const left = await etcd.etcdctl(["get", "--prefix", "--keys-only", "--", "--prefx"])
    expect(left.stdout.split("\n").filter((l) => l !== "")).toEqual(["--prefx", "--prefx/a", "--prefx/b"])
  })
})
