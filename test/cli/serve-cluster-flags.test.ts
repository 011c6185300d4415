/**
 * etcd's cluster flags on `serve` (one member): etcd's single-member command lines are taken as
 * they are, and what would need peers is refused with one line before anything starts (the texts
 * etcd 3.4 prints where it has one; checked by hand against etcd 3.4.23). The process-level half
 * (the member starts, MemberList shows the peer URL) is in test/server/serve-process.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { parseCommandLine, type ParsedRun } from "../../src/cli/flags/parse.js"
import type { serveFlags } from "../../src/cli/flags/serve-flags.js"
import type { ValuesOf } from "../../src/cli/flags/flag.js"
import { checkClusterFlags } from "../../src/cli/serve.js"

const check = (...args: Array<string>) => {
  const p = parseCommandLine(["serve", ...args], {})
  expect(p._tag, JSON.stringify(p)).toBe("run")
  return checkClusterFlags((p as ParsedRun).values as ValuesOf<typeof serveFlags>)
}

describe("serve: etcd's cluster flags on one member", () => {
  it("takes etcd's single-member command lines", () => {
    expect(check()).toBeUndefined()
    expect(check("--name", "s1")).toBeUndefined()
    expect(
      check(
        "--name=s1",
        "--listen-peer-urls=http://127.0.0.1:2380",
        "--initial-advertise-peer-urls=http://127.0.0.1:2380,http://10.0.0.1:2380",
        "--initial-cluster=s1=http://10.0.0.1:2380,s1=http://127.0.0.1:2380",
        "--initial-cluster-token=tkn",
        "--initial-cluster-state=existing"
      )
    ).toBeUndefined()
    // etcd's default --initial-cluster follows --name and the advertised peer URLs
    expect(check("--name", "s2", "--initial-advertise-peer-urls", "http://127.0.0.1:12380")).toBeUndefined()
    // and ETCD_* as etcd reads them
    const p = parseCommandLine(["serve"], { ETCD_INITIAL_CLUSTER: "default=http://localhost:2380" }) as ParsedRun
    expect(checkClusterFlags(p.values as ValuesOf<typeof serveFlags>)).toBeUndefined()
  })

  it("refuses what needs peers or does not parse, in one line", () => {
    expect(check("--name", "a", "--initial-cluster", "b=http://localhost:2380")).toBe(
      `couldn't find local name "a" in the initial cluster configuration`
    )
    expect(check("--initial-cluster", "default=http://localhost:23801")).toBe(
      '--initial-cluster has default=http://localhost:23801 but missing from --initial-advertise-peer-urls=http://localhost:2380 (resolved urls: "http://localhost:2380" != "http://localhost:23801")'
    )
    expect(check("--initial-cluster", "default=http://localhost:2380,b=http://h2:2380,c=http://h3:2380")).toBe(
      "--initial-cluster names b, c besides default: etcd-effect serve is one member; run etcd for a cluster of several"
    )
    expect(check("--initial-cluster", "bogus")).toBe('--initial-cluster: "bogus" is not name=URL')
    expect(parseCommandLine(["serve", "--listen-peer-urls", "foo"], {})).toEqual({
      _tag: "error",
      lines: [
        'Error: invalid value "foo" for flag --listen-peer-urls: URL scheme must be http, https, unix, or unixs: foo'
      ],
      exitCode: 1
    })
    expect(parseCommandLine(["serve", "--initial-cluster-state", "weird"], {})).toMatchObject({ _tag: "error" })
  })
})
