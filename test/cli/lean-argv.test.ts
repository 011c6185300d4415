/**
 * Which command lines the bin's lean path takes (src/cli/lean/argv.ts): get, put, del and watch on
 * one plain-text endpoint, read by the table (flags/parse.ts) and checked by the full program's
 * code, so a usage error is the same from both; TLS, auth and several endpoints go to the full
 * program.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { UsageError } from "../../src/cli/commands/usage.js"
import { leanCommand, withoutRev } from "../../src/cli/lean/argv.js"
import { parseCommandLine } from "../../src/cli/flags/parse.js"

const read = (args: Array<string>, env: NodeJS.ProcessEnv = {}, stdin = "") => {
  const p = parseCommandLine(args, env)
  if (p._tag !== "run") throw new Error(`not a command: ${JSON.stringify(p)}`)
  return leanCommand(p, args, () => stdin)
}

describe("lean command lines", () => {
  it("reads get, put, del and watch with their flags and the global ones", () => {
    expect(read(["get", "/a", "--prefix", "--endpoints", "127.0.0.1:2379", "-w", "json"])).toMatchObject({
      _tag: "get",
      args: { key: "/a", prefix: true },
      global: { endpoint: { host: "127.0.0.1", port: 2379, tls: false }, settings: { writeOut: "json" } }
    })
    expect(
      read(["--endpoints=127.0.0.1:2379", "get", "/a", "/c", "--rev=3", "--limit", "2", "--keys-only"])
    ).toMatchObject({
      args: { rangeEnd: "/c", revision: 3n, limit: 2n, keysOnly: true }
    })
    expect(read(["get", "/a", "--sort-by=modify", "--order", "descend", "--consistency=s", "--hex"])).toMatchObject({
      args: { sort: { target: "MOD", order: "DESCEND" }, serializable: true },
      global: { settings: { hex: true } }
    })
    expect(read(["put", "k", "v", "--lease", "ff", "--prev-kv"])).toMatchObject({
      _tag: "put",
      args: { value: "v", lease: 255n, prevKv: true }
    })
    expect(read(["put", "k"], {}, "from stdin\n")).toMatchObject({ args: { value: "from stdin\n" } })
    expect(read(["put", "--", "-k", "-v"])).toMatchObject({ args: { key: "-k", value: "-v" } })
    expect(read(["del", "k", "--from-key", "--dial-timeout", "500ms", "--command-timeout", "1m"])).toMatchObject({
      _tag: "del",
      args: { fromKey: true },
      global: { settings: { dialTimeoutMs: 500, commandTimeoutMs: 60_000 } }
    })
    expect(read(["watch", "/w/", "--prefix", "--rev", "7", "--prev-kv"])).toMatchObject({
      _tag: "watch",
      args: { revision: 7n },
      withoutRev: ["watch", "/w/", "--prefix", "--prev-kv"]
    })
    expect(read(["get", "k"], { ETCDCTL_ENDPOINTS: "10.0.0.1:1234" })).toMatchObject({
      global: { endpoint: { host: "10.0.0.1", port: 1234 } }
    })
  })

  it("refuses what etcdctl refuses, as the full program does", () => {
    const refused: Array<[Array<string>, string, number]> = [
      [["get"], "get command needs one argument as key and an optional argument as range_end", 128],
      [
        ["get", "k", "--prefix", "--from-key"],
        "`--prefix` and `--from-key` cannot be set at the same time, choose one",
        128
      ],
      [
        ["get", "k", "e", "--prefix"],
        "too many arguments, only accept one argument when `--prefix` or `--from-key` is set",
        128
      ],
      [["get", "k", "--consistency", "x"], 'unknown consistency flag "x"', 4],
      [["get", "k", "--order", "up"], "bad sort order up", 4],
      [["get", "k", "-w", "table"], "table not supported as output format", 4],
      [["get", "k", "-w", "yaml"], "unsupported output format", 4],
      [["put", "k"], "put command needs 1 argument and input from stdin or 2 arguments", 128],
      [["put", "k", "v", "--ignore-value"], "put command needs only 1 argument when 'ignore-value' is set", 128],
      [
        ["put", "k", "v", "--lease", "xyz"],
        'bad lease ID (strconv.ParseInt: parsing "xyz": invalid syntax), expecting ID in Hex',
        128
      ],
      [["del", "a", "b", "c"], "del command needs one argument as key and an optional argument as range_end", 128],
      [["watch"], "bad number of arguments", 128]
    ]
    for (const [args, message, exitCode] of refused) {
      expect(read(args), args.join(" ")).toEqual(new UsageError(message, exitCode))
    }
  })

  it("leaves TLS, auth and several endpoints to the full program", () => {
    const full: Array<Array<string>> = [
      ["get", "k", "--cacert", "ca.pem"],
      ["get", "k", "--insecure-skip-tls-verify"],
      ["get", "k", "--insecure-transport=false"],
      ["get", "k", "--user", "root:pw"],
      ["get", "k", "--endpoints", "https://127.0.0.1:2379"],
      ["get", "k", "--endpoints", "127.0.0.1:2379,127.0.0.1:2380"],
      ["get", "k", "--endpoints", "127.0.0.1:99999"]
    ]
    for (const args of full) expect(read(args), args.join(" ")).toBeUndefined()
    expect(read(["get", "k"], { ETCDCTL_USER: "root" })).toBeUndefined()
  })

  it("a watch handed over keeps every word but --rev", () => {
    expect(withoutRev(["--rev=3", "watch", "k", "--rev", "4", "--prefix", "--", "--rev"])).toEqual([
      "watch",
      "k",
      "--prefix",
      "--",
      "--rev"
    ])
  })

  it.prop(
    "any command line is read or refused, never thrown on",
    [
      FastCheck.constantFrom("get", "put", "del", "watch", "lease"),
      FastCheck.array(
        FastCheck.oneof(
          FastCheck.string({ maxLength: 6 }),
          FastCheck.constantFrom("--prefix", "--rev", "-w", "json", "--endpoints", "true", "--lease", "=", "--")
        ),
        { maxLength: 8 }
      )
    ],
    ([name, rest]) => {
      const p = parseCommandLine([name, ...rest], {})
      if (p._tag !== "run") return
      const command = leanCommand(p, [name, ...rest], () => "")
      if (command !== undefined && !(command instanceof UsageError)) expect(command._tag).toBe(name)
    }
  )
})
