/**
 * The command line as etcdctl (cobra + pflag) and etcd (Go's flag) read it
 * (src/cli/flags/parse.ts): each case is what etcdctl 3.4.23 / etcd 3.4.23 answered for the same
 * words (run by hand; the property test test/cli/etcdctl-args.test.ts runs etcdctl itself).
 */
import { describe, expect, it } from "@effect/vitest"
import { parseCommandLine, type ParsedRun } from "../../../src/cli/flags/parse.js"

const run = (args: Array<string>, env: NodeJS.ProcessEnv = {}): ParsedRun => {
  const p = parseCommandLine(args, env)
  if (p._tag !== "run") throw new Error(`${args.join(" ")}: ${JSON.stringify(p)}`)
  return p
}
const error = (args: Array<string>, env: NodeJS.ProcessEnv = {}) => {
  const p = parseCommandLine(args, env)
  return p._tag === "error" ? p.lines.join("\n") : p._tag
}

describe("reading a command line as etcdctl does", () => {
  it("takes every form of a flag, anywhere", () => {
    expect(run(["get", "foo", "-w=json"]).values["write-out"]).toBe("json")
    expect(run(["get", "foo", "-wjson"]).values["write-out"]).toBe("json")
    expect(run(["get", "-w", "json", "foo"]).values["write-out"]).toBe("json")
    expect(run(["--endpoints=10.0.0.1:1", "get", "foo"]).values["endpoints"]).toEqual(["10.0.0.1:1"])
    expect(run(["--endpoints", "10.0.0.1:1", "get", "foo"]).values["endpoints"]).toEqual(["10.0.0.1:1"])
    expect(run(["lease", "--endpoints", "e:1", "grant", "10"])).toMatchObject({
      command: { path: "lease grant" },
      args: ["10"]
    })
    expect(run(["get", "foo", "--prefix=false"]).values["prefix"]).toBe(false)
    expect(run(["get", "foo", "--prefix=T"]).values["prefix"]).toBe(true)
    // a boolean never takes the next word: "true" is range_end, as etcdctl reads it
    expect(run(["get", "foo", "--keys-only", "true"])).toMatchObject({
      args: ["foo", "true"],
      values: { "keys-only": true }
    })
    expect(run(["get", "--", "-foo"]).args).toEqual(["-foo"])
    expect(run(["get", "foo", "--", "--prefix"])).toMatchObject({ args: ["foo", "--prefix"], dashAt: 1 })
    expect(run(["get", "foo", "-"]).args).toEqual(["foo", "-"])
    expect(run(["get", "foo", "--endpoints="]).values["endpoints"]).toEqual([])
    expect(run(["get", "foo", "--endpoints", "a", "--endpoints", "b,c"]).values["endpoints"]).toEqual(["a", "b", "c"])
    expect(run(["get", "foo", "--rev", "1", "--rev", "2"]).values["rev"]).toBe(2n)
    expect(run(["get", "foo", "--limit=0x10"]).values["limit"]).toBe(16n)
    expect(run(["get", "foo", "--dial-timeout=1h2m"]).values["dial-timeout"]).toBe(3_720_000)
    expect(run(["get", "--help=false", "foo"]).values["help"]).toBe(false)
    // cobra's search for the command: `--endpoints get get foo` runs get with endpoints "get"
    expect(run(["--endpoints", "get", "get", "foo"])).toMatchObject({ command: { path: "get" }, args: ["foo"] })
  })

  it("refuses with etcdctl's lines", () => {
    expect(error(["del", "--prefx", "foo"])).toBe("Error: unknown flag: --prefx")
    expect(error(["get", "foo", "--Prefix"])).toBe("Error: unknown flag: --Prefix")
    expect(error(["get", "foo", "-x"])).toBe("Error: unknown shorthand flag: 'x' in -x")
    expect(error(["get", "foo", "-hx"])).toBe("Error: unknown shorthand flag: 'x' in -x")
    expect(error(["compaction", "-5"])).toBe("Error: unknown shorthand flag: '5' in -5")
    expect(error(["get", "foo", "--limit"])).toBe("Error: flag needs an argument: --limit")
    expect(error(["get", "foo", "-w"])).toBe("Error: flag needs an argument: 'w' in -w")
    expect(error(["get", "foo", "--=x"])).toBe("Error: bad flag syntax: --=x")
    expect(error(["get", "foo", "---x"])).toBe("Error: bad flag syntax: ---x")
    expect(error(["get", "foo", "--limit", "abc"])).toBe(
      'Error: invalid argument "abc" for "--limit" flag: strconv.ParseInt: parsing "abc": invalid syntax'
    )
    expect(error(["get", "foo", "--prefix=maybe"])).toBe(
      'Error: invalid argument "maybe" for "--prefix" flag: strconv.ParseBool: parsing "maybe": invalid syntax'
    )
    expect(error(["get", "foo", "--help=maybe"])).toBe(
      'Error: invalid argument "maybe" for "-h, --help" flag: strconv.ParseBool: parsing "maybe": invalid syntax'
    )
    expect(error(["get", "foo", "--dial-timeout", "3"])).toBe(
      'Error: invalid argument "3" for "--dial-timeout" flag: time: missing unit in duration "3"'
    )
    expect(error(["get", "foo", "--limit", "99999999999999999999"])).toBe(
      'Error: invalid argument "99999999999999999999" for "--limit" flag: strconv.ParseInt: parsing "99999999999999999999": value out of range'
    )
    expect(error(["foo"])).toBe('Error: unknown command "foo" for "etcd-effect"\nRun \'etcd-effect --help\' for usage.')
    // cobra: an unknown flag before the command takes the next word as its value
    expect(error(["--bogus", "get", "foo"])).toBe(
      'Error: unknown command "foo" for "etcd-effect"\nRun \'etcd-effect --help\' for usage.'
    )
    expect(error(["--version"])).toBe("Error: unknown flag: --version")
    expect(error(["serve", "--endpoints", "x"])).toBe("Error: unknown flag: --endpoints")
  })

  it("answers help where cobra does", () => {
    for (const args of [
      [],
      ["--help"],
      ["-h"],
      ["--", "get", "foo"],
      ["--endpoints", "x"],
      ["help"],
      ["lease"],
      ["lease", "bogus"]
    ]) {
      expect(parseCommandLine(args, {})._tag, args.join(" ")).toBe("help")
    }
    expect(parseCommandLine(["get", "foo", "--help"], {})).toMatchObject({ _tag: "help", command: { path: "get" } })
    expect(parseCommandLine(["help", "lease", "grant"], {})).toMatchObject({
      _tag: "help",
      command: { path: "lease grant" }
    })
    expect(parseCommandLine(["help", "nope"], {})).toMatchObject({ _tag: "help", note: "Unknown help topic [`nope`]" })
  })

  it("reads serve's flags as etcd (Go's flag package) does", () => {
    expect(run(["serve", "-name", "x", "--max-txn-ops=0x10"]).values).toMatchObject({ name: "x", "max-txn-ops": 16 })
    expect(error(["serve", "--quota-backend-bytes", "abc"])).toBe(
      'Error: invalid value "abc" for flag --quota-backend-bytes: parse error'
    )
    expect(error(["serve", "--max-txn-ops", "-1"])).toBe(
      'Error: invalid value "-1" for flag --max-txn-ops: parse error'
    )
    expect(error(["serve", "--max-request-bytes", "99999999999999999999"])).toBe(
      'Error: invalid value "99999999999999999999" for flag --max-request-bytes: value out of range'
    )
    expect(error(["serve", "--client-cert-auth=maybe"])).toBe(
      'Error: invalid boolean value "maybe" for --client-cert-auth: parse error'
    )
    expect(error(["serve", "--grpc-keepalive-min-time", "x"])).toBe(
      'Error: invalid value "x" for flag --grpc-keepalive-min-time: parse error'
    )
    expect(error(["serve", "--auto-compaction-mode", "weird"])).toBe('Error: unknown auto-compaction-mode "weird"')
    expect(error(["serve", "--name"])).toBe("Error: flag needs an argument: --name")
    expect(error(["serve", "--bogus"])).toBe("Error: unknown flag: --bogus")
    expect(error(["serve", "-bogus"])).toBe("Error: unknown flag: --bogus")
  })

  it("reads the environment as etcd's pkg/flags does", () => {
    expect(run(["get", "k"], { ETCDCTL_ENDPOINTS: "a:1,b:2", ETCDCTL_DIAL_TIMEOUT: "3s" }).values).toMatchObject({
      endpoints: ["a:1", "b:2"],
      "dial-timeout": 3000
    })
    expect(run(["get", "k"], { ETCDCTL_LIMIT: "1" })).toMatchObject({
      values: { limit: 0n },
      warnings: ["unrecognized environment variable ETCDCTL_LIMIT=1"]
    })
    expect(run(["get", "k"], { ETCDCTL_API: "3" }).warnings).toEqual([])
    expect(error(["get", "k", "--endpoints", "a:1"], { ETCDCTL_ENDPOINTS: "a:1" })).toBe(
      'Error: conflicting environment variable "ETCDCTL_ENDPOINTS" is shadowed by corresponding command-line flag (either unset environment variable or disable flag)'
    )
    expect(error(["get", "k"], { ETCDCTL_DIAL_TIMEOUT: "abc" })).toBe(
      'Error: invalid value "abc" for ETCDCTL_DIAL_TIMEOUT: time: invalid duration "abc"'
    )
    expect(run(["serve"], { ETCD_NAME: "n", ETCD_GRPC_TRANSPORT: "grpc-js" }).values).toMatchObject({
      name: "n",
      "grpc-transport": "grpc-js"
    })
    expect(run(["serve"], { ETCDCTL_ENDPOINTS: "x" }).warnings).toEqual([])
  })
})
