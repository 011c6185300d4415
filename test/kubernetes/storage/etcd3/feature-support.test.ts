/** The feature support checker's RequestWatchProgress: safe from etcd 3.4.31 and 3.5.13 on (etcd-io/etcd#15220). */
import { describe, expect, it } from "vitest"
import { progressRequestSafe } from "../../../../src/kubernetes/storage/etcd3/feature-support.js"

describe("RequestWatchProgress support by etcd version", () => {
  it("needs the fix of 3.4.31 / 3.5.13; 3.6 and later have it; an unreadable version has not", () => {
    const cases: Array<[string, boolean]> = [
      ["3.4.23", false], // Debian's etcd, this suite's oracle
      ["3.4.30", false],
      ["3.4.31", true],
      ["3.5.12", false],
      ["3.5.13", true],
      ["3.5.24", true], // what our server reports
      ["3.6.0", true],
      ["3.3.27", false],
      ["4.0.0", true],
      ["", false],
      ["not-a-version", false]
    ]
    for (const [version, safe] of cases) expect([version, progressRequestSafe(version)]).toEqual([version, safe])
  })
})
