/**
 * Which command lines the bin's lean path takes (src/cli/lean/argv.ts): the plain forms of get,
 * put, del and watch, and nothing whose reading by @effect/cli it does not reproduce.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { leanCommand } from "../../src/cli/lean/argv.js"

const served = (...args: Array<string>) => leanCommand(args, {})

describe("lean command lines", () => {
  it("reads get, put, del and watch with their flags and the plain global ones", () => {
    expect(served("get", "/a", "--prefix", "--endpoints", "127.0.0.1:2379", "-w", "json")).toMatchObject({
      _tag: "get",
      key: "/a",
      prefix: true,
      global: { endpoint: { host: "127.0.0.1", port: 2379, tls: false }, writeOut: "json" }
    })
    expect(served("get", "/a", "/c", "--rev=3", "--limit", "2", "--keys-only")).toMatchObject({
      rangeEnd: "/c",
      revision: 3n,
      limit: 2n,
      keysOnly: true
    })
    expect(served("put", "k", "v", "--lease", "ff", "--prev-kv")).toMatchObject({
      _tag: "put",
      value: "v",
      lease: 255n,
      prevKv: true
    })
    expect(served("del", "k", "--from-key", "--dial-timeout", "500ms", "--command-timeout", "1m")).toMatchObject({
      _tag: "del",
      fromKey: true,
      global: { dialTimeoutMs: 500, commandTimeoutMs: 60_000 }
    })
    expect(served("watch", "/w/", "--prefix", "--rev", "7", "--prev-kv")).toMatchObject({
      _tag: "watch",
      revision: 7n,
      withoutRev: ["watch", "/w/", "--prefix", "--prev-kv"]
    })
    // an unparsable duration falls back to the default, as global.ts does
    expect(served("get", "k", "--dial-timeout", "soon")).toMatchObject({ global: { dialTimeoutMs: 2000 } })
    expect(leanCommand(["get", "k"], { ETCDCTL_ENDPOINTS: "10.0.0.1:1234" })).toMatchObject({
      global: { endpoint: { host: "10.0.0.1", port: 1234 } }
    })
  })

  it("leaves TLS, auth, several endpoints, usage errors and subtle forms to the full program", () => {
    const full: Array<Array<string>> = [
      ["get", "k", "--cacert", "ca.pem"],
      ["get", "k", "--insecure-skip-tls-verify"],
      ["get", "k", "--user", "root:pw"],
      ["get", "k", "--endpoints", "https://127.0.0.1:2379"],
      ["get", "k", "--endpoints", "127.0.0.1:2379,127.0.0.1:2380"],
      ["get", "k", "--endpoints", "127.0.0.1:99999"],
      ["get", "k", "--prefix", "--from-key"],
      ["get", "k", "e", "--prefix"],
      ["get", "k", "--prefix", "true"], // @effect/cli takes "true" as the flag's value
      ["get", "k", "--prefix=yes"],
      ["get", "k", "--rev", "-1"],
      ["get", "k", "--rev", "x"],
      ["get", "k", "--rev", "1", "--rev", "2"],
      ["get", "k", "-w", "table"],
      ["get", "k", "--help"],
      ["get"],
      ["get", "a", "b", "c"],
      ["put", "k"],
      ["put", "k", "v", "--lease", "xyz"],
      ["del", "k", "--limit", "1"],
      ["watch", "k", "--from-key"],
      ["watch", "k", "e", "--prefix"],
      ["lease", "list"],
      ["--help"],
      ["get", "k", "--", "x"],
      ["get", "-k"]
    ]
    for (const args of full) expect(served(...args), args.join(" ")).toBeUndefined()
    expect(leanCommand(["get", "k"], { ETCDCTL_USER: "root" })).toBeUndefined()
  })

  it.prop(
    "any command line is read or left, never thrown on",
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
      const command = leanCommand([name, ...rest], {})
      if (command !== undefined) expect(command._tag).toBe(name)
    }
  )
})
