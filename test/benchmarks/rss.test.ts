/** VmRSS as bench:compare reads it from /proc/<pid>/status. */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { parseVmRss, readRss } from "../../benchmarks/compare-servers.js"

describe.skipIf(!fs.existsSync("/proc/self/status"))("VmRSS", () => {
  it("parses /proc/self/status: the kB figure × 1024, close to process.memoryUsage().rss", () => {
    const text = fs.readFileSync("/proc/self/status", "utf8")
    const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(text)![1])
    expect(parseVmRss(text)).toBe(kb * 1024)
    // Node's figure read just before and just after ours: the process's memory can change between
    // two reads (a collection, a buffer of an earlier test released), so ours must lie between them
    const before = process.memoryUsage().rss
    const rss = readRss("self")
    const after = process.memoryUsage().rss
    expect(rss).toBeGreaterThanOrEqual(Math.min(before, after) * 0.8)
    expect(rss).toBeLessThanOrEqual(Math.max(before, after) * 1.2)
    expect(readRss(process.pid)).toBeGreaterThan(10 * 1024 * 1024)
  })
  it("sees memory grow when this process touches 64 MiB", () => {
    const before = readRss("self")
    const block = Buffer.alloc(64 * 1024 * 1024, 1)
    const after = readRss("self")
    expect(after - before).toBeGreaterThan(48 * 1024 * 1024)
    expect(block[block.length - 1]).toBe(1)
  })
  it("is undefined without a VmRSS line (a kernel thread's status)", () => {
    expect(parseVmRss("Name:\tkthreadd\nState:\tS (sleeping)\n")).toBeUndefined()
    expect(parseVmRss("VmHWM:\t 100 kB\nVmRSS:\t     2048 kB\n")).toBe(2048 * 1024)
  })
})
