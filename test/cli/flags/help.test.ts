/**
 * Help as etcdctl's compact form (src/cli/flags/help.ts), for the program and every command:
 * plain text, lines of 100 characters at most, the program's name in the usage line, one line per
 * flag with its default and a description, and the environment variables named. The built bin
 * prints the same text when its output is a pipe.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import type { CommandSpec } from "../../../src/cli/flags/command.js"
import { helpText } from "../../../src/cli/flags/help.js"
import { flagsOf } from "../../../src/cli/flags/parse.js"
import { PROGRAM_VERSION, root } from "../../../src/cli/flags/table.js"
import { BENCH_SCENARIOS } from "../../../src/cli/flags/bench-flags.js"
import { scenarioNames } from "../../../src/bench/options.js"
import { runCommand } from "../../support/etcd.js"
import { ensureBuilt, mainJs, repoRoot } from "../../server/support/process.js"

const all = (c: CommandSpec): Array<CommandSpec> => [c, ...(c.subcommands ?? []).flatMap(all)]

describe("help", () => {
  it("is plain text of short lines, one per flag, for the program and every command", () => {
    for (const c of all(root)) {
      const text = helpText(c)
      const where = c.path === "" ? "etcd-effect --help" : `etcd-effect ${c.path} --help`
      expect(text, where).not.toMatch(/\x1b/)
      for (const line of text.split("\n")) expect(line.length, `${where}: ${line}`).toBeLessThanOrEqual(100)
      expect(text, where).toMatch(new RegExp(`USAGE:\\n  etcd-effect${c.path === "" ? "" : ` ${c.path}`}`))
      if (c === root || c.subcommands !== undefined) continue
      for (const [name, flag] of Object.entries(flagsOf(c))) {
        if (flag.hidden === true) continue
        const lines = text.split("\n").filter((l) => new RegExp(`^  (-\\w, |    )--${name}[=\\[]`).test(l))
        expect(lines, `${where}: --${name}`).toHaveLength(1)
        expect(lines[0]).toContain(flag.defaultText)
        expect(flag.description.length, `${where}: --${name}`).toBeGreaterThan(8)
      }
    }
  })

  it("names the environment variables and each flag once", () => {
    const serve = helpText(root.subcommands!.find((c) => c.path === "serve")!)
    expect(serve).toContain("$ETCD_NAME")
    expect(serve.match(/--log-level/g)).toHaveLength(1)
    expect(helpText(root)).toContain("$ETCDCTL_DIAL_TIMEOUT")
    expect(helpText(root.subcommands!.find((c) => c.path === "apiserver")!).match(/--log-level/g)).toHaveLength(1)
  })

  it("the table's version and scenarios are the package's", () => {
    expect(PROGRAM_VERSION).toBe(JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, "utf8")).version)
    expect([...BENCH_SCENARIOS]).toEqual([...scenarioNames])
  })

  it("the bin prints it through a pipe as the table renders it, and `version` as etcdctl's", async () => {
    await ensureBuilt()
    const [top, get, version] = await Promise.all([
      runCommand("node", [mainJs, "--help"]),
      runCommand("node", [mainJs, "get", "--help"]),
      runCommand("node", [mainJs, "version"])
    ])
    expect(top).toEqual({ code: 0, stdout: helpText(root), stderr: "" })
    expect(get.stdout).toBe(helpText(root.subcommands!.find((c) => c.path === "get")!))
    expect(version.stdout).toBe(`etcd-effect version: ${PROGRAM_VERSION}\nAPI version: 3.5\n`)
  }, 60_000)
})
