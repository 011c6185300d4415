/**
 * Reading etcd's tools/benchmark report (bench:compare's second instrument): every phase's summary
 * by its title, rates, percentiles, the p99 when the tool left its line out, and error counts. The
 * reports below are the tool's own output (v3.6.8, --precise), shortened to the lines read.
 */
import { describe, expect, it } from "vitest"
import { p50Ms, p99Ms, parseToolReport } from "../../benchmarks/etcd-tool.js"

const watchLatency = `
Put summary:

Summary:
  Total:\t0.282216411 secs.
  Slowest:\t0.049513261 secs.
  Fastest:\t0.000714233 secs.
  Average:\t0.00563251466 secs.
  Stddev:\t0.01030346552602793 secs.
  Requests/sec:\t177.16900240787203

Response time histogram:
  0.000714233 [1]\t|∎
  0.049513261 [2]\t|∎∎

Latency distribution:
  10% in 0.000960172 secs.
  50% in 0.001942386 secs.
  95% in 0.04939537 secs.

Watch events summary:

Summary:
  Total:\t0.282346054 secs.
  Slowest:\t0.001863069 secs.
  Fastest:\t0 secs.
  Average:\t0.00012382255 secs.
  Stddev:\t0.00029128030757584266 secs.
  Requests/sec:\t708.3506114804777

Response time histogram:
  0 [140]\t|∎∎∎∎
  0.001863069 [2]\t|

Latency distribution:
  75% in 5.8409e-05 secs.
  90% in 0.000504983 secs.
  99% in 0.001856977 secs.
`

const putWithErrors = `
Summary:
  Total:\t2.5754 secs.
  Slowest:\t0.0513 secs.
  Fastest:\t0.0004 secs.
  Average:\t0.0082 secs.
  Stddev:\t0.0050 secs.
  Requests/sec:\t3882.8655

Latency distribution:
  10% in 0.0031 secs.
  50% in 0.0072 secs.
  99% in 0.0270 secs.

Error distribution:
  [3]\trpc error: code = Unavailable desc = etcdserver: leader changed
  [1]\tcontext deadline exceeded
`

describe("etcd's benchmark report", () => {
  it("names each phase's summary and reads its rate, total and percentiles", () => {
    const [put, events] = parseToolReport(watchLatency)
    expect(put!.title).toBe("Put summary")
    expect(put!.rps).toBeCloseTo(177.169, 3)
    expect(put!.totalS).toBeCloseTo(0.2822, 4)
    expect(events!.title).toBe("Watch events summary")
    expect(events!.percentiles["99"]).toBeCloseTo(0.001856977, 9)
    expect(events!.percentiles["75"]).toBeCloseTo(5.8409e-5, 10)
    expect(p99Ms(events!)).toBeCloseTo(1.856977, 6)
    expect(events!.errors).toBe(0)
  })

  it("a missing 99% line means a run too small to have one: its slowest call; no line at all means 0", () => {
    const [put] = parseToolReport(watchLatency)
    expect(put!.percentiles["99"]).toBeUndefined()
    expect(p99Ms(put!)).toBeCloseTo(49.513261, 6)
    expect(p50Ms(put!)).toBeCloseTo(1.942386, 6)
    const zero = parseToolReport("Summary:\n  Requests/sec:\t10\n\nLatency distribution:\n")[0]!
    expect(p99Ms(zero)).toBe(0)
    expect(p50Ms(zero)).toBeUndefined()
  })

  it("an untitled summary (put, range, txn-put) is 'Summary'; errors are counted with the first message", () => {
    const [s] = parseToolReport(putWithErrors)
    expect(s!.title).toBe("Summary")
    expect(s!.rps).toBeCloseTo(3882.8655, 4)
    expect(s!.errors).toBe(4)
    expect(s!.firstError).toBe("rpc error: code = Unavailable desc = etcdserver: leader changed")
    expect(p99Ms(s!)).toBeCloseTo(27, 6)
  })

  it("ignores anything before the first summary and tolerates CRLF", () => {
    expect(parseToolReport("warning: grpc limits 100 streams\n")).toEqual([])
    const [s] = parseToolReport(putWithErrors.replace(/\n/g, "\r\n"))
    expect(s!.rps).toBeCloseTo(3882.8655, 4)
  })
})
