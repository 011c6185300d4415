/**
 * etcd 3.6's experimental flags beside --feature-gates: either one names the feature, never both
 * (embed.SetFeatureGatesFromExperimentalFlags). The texts were checked by hand against etcd 3.6.16;
 * the process-level comparison over random flag sets is test/cli/serve-etcd-flags.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { parseCommandLine, type ParsedRun } from "../../src/cli/flags/parse.js"
import { checkRenamedFlags } from "../../src/cli/serve-etcd-checks.js"

const check = (...args: Array<string>) => {
  const p = parseCommandLine(["serve", ...args], {})
  expect(p._tag, JSON.stringify(p)).toBe("run")
  const run = p as ParsedRun
  return checkRenamedFlags(run.values, run.set)
}

describe("serve: etcd 3.6's experimental flags and their feature gates", () => {
  it("refuses both, even when they agree (as etcd 3.6.16)", () => {
    expect(check("--experimental-initial-corrupt-check=false", "--feature-gates=InitialCorruptCheck=false")).toBe(
      "cannot specify both flags: --experimental-initial-corrupt-check=false and --feature-gates=InitialCorruptCheck=false at the same time, please just use --feature-gates=InitialCorruptCheck=false"
    )
    expect(check("--experimental-initial-corrupt-check=true", "--feature-gates=InitialCorruptCheck=false")).toMatch(
      /^cannot specify both flags: --experimental-initial-corrupt-check=true and --feature-gates=InitialCorruptCheck=false/
    )
  })

  it("matches the gates' text as etcd does, by substring", () => {
    // LeaseCheckpointPersist holds LeaseCheckpoint; the value shown is the gate's effective one
    expect(check("--experimental-enable-lease-checkpoint", "--feature-gates=LeaseCheckpointPersist=true")).toBe(
      "cannot specify both flags: --experimental-enable-lease-checkpoint=true and --feature-gates=LeaseCheckpoint=false at the same time, please just use --feature-gates=LeaseCheckpoint=false"
    )
  })

  it("takes either one alone, the gate winning over the old default", () => {
    const gateOnly = check("--feature-gates=InitialCorruptCheck=true")
    expect(typeof gateOnly === "string" ? gateOnly : gateOnly.initialCorruptCheck).toBe(true)
    const flagOnly = check("--experimental-initial-corrupt-check=true", "--feature-gates=CompactHashCheck=true")
    expect(typeof flagOnly === "string" ? flagOnly : flagOnly.initialCorruptCheck).toBe(true)
    const neither = check()
    expect(typeof neither === "string" ? neither : neither.initialCorruptCheck).toBe(false)
  })
})
