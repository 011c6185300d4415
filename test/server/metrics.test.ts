/**
 * The metrics listener (--listen-metrics-urls): /metrics in Prometheus' text format 0.0.4, read by
 * a strict parser written here; the watch gauges and gRPC counters following real calls; /health,
 * /livez and /readyz healthy and failing; start-up errors in-process and from the program; and the
 * families and /health shape side by side with a real etcd 3.4.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, Logger, LogLevel, Cause } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as http2 from "node:http2"
import * as net from "node:net"
import * as zlib from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serviceDefinition, serviceNames } from "../../src/proto/load.js"
import { serve, type ServerConfig } from "../../src/server/index.js"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { freePort } from "../support/ports.js"
import { call, eventually, rawClient, sleep, startInProcess, unaryCall } from "./support/in-process.js"
import { beyondInfo, ensureBuilt, ServeProcess, tempDir } from "./support/process.js"
import { startGatedServer } from "./support/gated-server.js"
import { RawWatch } from "./support/raw-watch.js"

const b = (s: string) => Buffer.from(s)

// ---------------------------------------------------------------------------------------------
// a strict parser of the text format 0.0.4

interface ParsedSample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

interface ParsedFamily {
  readonly name: string
  type: string | undefined
  help: string | undefined
  readonly samples: Array<ParsedSample>
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/
const TYPES = new Set(["counter", "gauge", "summary", "histogram", "untyped"])

const parseFloatStrict = (s: string): number => {
  if (!FLOAT.test(s)) throw new Error(`not a number: ${JSON.stringify(s)}`)
  return s.endsWith("Inf") ? (s.startsWith("-") ? -Infinity : Infinity) : s === "NaN" ? NaN : Number(s)
}

/** `{a="x",b="y"}` starting at `line[pos]`; the labels and the position after `}`. */
const parseLabels = (line: string, start: number): { labels: Record<string, string>; end: number } => {
  const labels: Record<string, string> = {}
  let pos = start + 1
  if (line[pos] === "}") return { labels, end: pos + 1 }
  for (;;) {
    const name = LABEL_NAME.exec(line.slice(pos))?.[0]
    if (name === undefined) throw new Error(`bad label name at ${pos}`)
    if (name.startsWith("__")) throw new Error(`reserved label name ${name}`)
    if (name in labels) throw new Error(`label ${name} twice`)
    pos += name.length
    if (line.slice(pos, pos + 2) !== '="') throw new Error(`expected =" after ${name}`)
    pos += 2
    let value = ""
    for (;;) {
      const c = line[pos]
      if (c === undefined) throw new Error("unterminated label value")
      if (c === '"') break
      if (c === "\\") {
        const e = line[pos + 1]
        if (e === "\\") value += "\\"
        else if (e === '"') value += '"'
        else if (e === "n") value += "\n"
        else throw new Error(`bad escape \\${e}`)
        pos += 2
      } else {
        value += c
        pos++
      }
    }
    labels[name] = value
    pos++
    if (line[pos] === "}") return { labels, end: pos + 1 }
    if (line[pos] !== ",") throw new Error(`expected , or } at ${pos}`)
    pos++
  }
}

/**
 * Every line is a HELP, a TYPE or a sample; a family's HELP/TYPE come before its samples, which
 * are contiguous; every sample belongs to a family with a TYPE (suffixes by type); label syntax
 * and escapes, values as Go parses them; no series twice; histogram buckets cumulative and ending
 * at +Inf = _count.
 */
const parseExposition = (text: string): Map<string, ParsedFamily> => {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline")
  const families = new Map<string, ParsedFamily>()
  const series = new Set<string>()
  let current: ParsedFamily | undefined
  const lines = text.slice(0, -1).split("\n")
  lines.forEach((line, i) => {
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1}: ${why}: ${line}`)
    }
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([^ ]+) (.*)$/.exec(line)
      if (m === null) return fail("a comment that is neither HELP nor TYPE")
      const [, kind, name, rest] = m as unknown as [string, string, string, string]
      if (METRIC_NAME.exec(name)?.[0] !== name) fail("bad metric name")
      let family = families.get(name)
      if (family === undefined) {
        family = { name, type: undefined, help: undefined, samples: [] }
        families.set(name, family)
      } else if (current !== family) fail("family not contiguous")
      if (family.samples.length > 0) fail(`${kind} after samples`)
      if (kind === "HELP") {
        if (family.help !== undefined) fail("HELP twice")
        if (!/^(?:[^\\]|\\[\\n])*$/.test(rest)) fail("bad escape in HELP")
        family.help = rest
      } else {
        if (family.type !== undefined) fail("TYPE twice")
        if (!TYPES.has(rest)) fail("unknown type")
        family.type = rest
      }
      current = family
      return
    }
    const name = METRIC_NAME.exec(line)?.[0] ?? fail("bad sample name")
    let pos = name.length
    let labels: Record<string, string> = {}
    if (line[pos] === "{") {
      try {
        ;({ labels, end: pos } = parseLabels(line, pos))
      } catch (e) {
        fail(String(e))
      }
    }
    if (line[pos] !== " ") fail("expected a space before the value")
    const [valueText, timestamp, ...more] = line.slice(pos + 1).split(" ")
    if (more.length > 0 || valueText === undefined) fail("extra fields")
    if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) fail("bad timestamp")
    let value = 0
    try {
      value = parseFloatStrict(valueText!)
    } catch (e) {
      fail(String(e))
    }
    const family = current ?? fail("sample before any TYPE")
    if (family.type === undefined) fail("sample of a family without TYPE")
    const suffix = name.slice(family.name.length)
    if (!name.startsWith(family.name)) fail(`sample outside its family ${family.name}`)
    const allowed =
      family.type === "histogram"
        ? ["_bucket", "_sum", "_count"]
        : family.type === "summary"
          ? ["", "_sum", "_count"]
          : [""]
    if (!allowed.includes(suffix)) fail(`sample outside its family ${family.name}`)
    if (family.type === "histogram" && suffix === "_bucket") parseFloatStrict(labels["le"] ?? fail("bucket without le"))
    if (family.type === "summary" && suffix === "") parseFloatStrict(labels["quantile"] ?? fail("quantile missing"))
    const key = `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`
    if (series.has(key)) fail("duplicate series")
    series.add(key)
    family.samples.push({ name, labels, value })
  })
  for (const f of families.values()) {
    if (f.type === undefined) throw new Error(`family ${f.name} has no TYPE`)
    if (f.type !== "histogram") continue
    const groups = new Map<string, Array<ParsedSample>>()
    for (const s of f.samples) {
      const { le: _le, ...rest } = s.labels
      const k = JSON.stringify(Object.entries(rest).sort())
      groups.set(k, [...(groups.get(k) ?? []), s])
    }
    for (const samples of groups.values()) {
      const buckets = samples.filter((s) => s.name.endsWith("_bucket"))
      buckets.forEach((s, i) => {
        if (i > 0 && s.value < buckets[i - 1]!.value) throw new Error(`${f.name}: buckets not cumulative`)
      })
      const inf = buckets.find((s) => s.labels["le"] === "+Inf")
      const count = samples.find((s) => s.name.endsWith("_count"))
      if (inf === undefined || count === undefined || inf.value !== count.value) {
        throw new Error(`${f.name}: +Inf bucket and _count disagree`)
      }
    }
  }
  return families
}

describe("the strict exposition parser", () => {
  const ok = '# HELP a_total An a.\n# TYPE a_total counter\na_total{x="1"} 2\na_total{x="2"} 3e+21\n'

  it("accepts a well-formed exposition", () => {
    const fams = parseExposition(ok)
    expect(fams.get("a_total")?.samples.map((s) => s.value)).toEqual([2, 3e21])
    const histogram = '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 3\nh_count 2\n'
    expect(parseExposition(histogram).size).toBe(1)
    expect(parseExposition('# TYPE g gauge\ng{v="a\\\\b\\"c\\nd"} NaN\n').get("g")?.samples[0]?.labels["v"]).toBe(
      'a\\b"c\nd'
    )
  })

  it.each([
    ["no final newline", ok.slice(0, -1)],
    ["a sample without TYPE", "a 1\n"],
    ["a sample of another family", "# TYPE a counter\nb 1\n"],
    ["a family split in two", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# HELP a again\n"],
    ["TYPE after samples", "# HELP a x\na 1\n# TYPE a gauge\n"],
    ["a bad escape", '# TYPE a gauge\na{x="\\t"} 1\n'],
    ["an unquoted label value", "# TYPE a gauge\na{x=1} 1\n"],
    ["a bad label name", '# TYPE a gauge\na{1x="1"} 1\n'],
    ["a value that is no number", "# TYPE a gauge\na one\n"],
    ["a duplicate series", '# TYPE a gauge\na{x="1",y="2"} 1\na{y="2",x="1"} 1\n'],
    ["a bucket without le", "# TYPE h histogram\nh_bucket 1\nh_sum 1\nh_count 1\n"],
    ["buckets not cumulative", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ["a blank line", "# TYPE a gauge\n\na 1\n"],
    ["an unknown type", "# TYPE a meter\na 1\n"]
  ])("rejects %s", (_, text) => {
    expect(() => parseExposition(text)).toThrow()
  })
})

// ---------------------------------------------------------------------------------------------
// helpers

const get = async (url: string, init: RequestInit = {}) => {
  const r = await fetch(url, init)
  return { status: r.status, type: r.headers.get("content-type"), headers: r.headers, body: await r.text() }
}

const scrape = async (metricsUrl: string): Promise<Map<string, ParsedFamily>> => {
  const r = await get(`${metricsUrl}/metrics`)
  expect(r.status).toBe(200)
  expect(r.type).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parseExposition(r.body)
}

/** The value of the one sample of `family` whose labels include `labels`. */
const valueOf = (families: Map<string, ParsedFamily>, family: string, labels: Record<string, string> = {}): number => {
  const f = families.get(family)
  if (f === undefined) throw new Error(`no family ${family}`)
  const hits = f.samples.filter((s) => s.name === family && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (hits.length !== 1) throw new Error(`${hits.length} samples of ${family} match ${JSON.stringify(labels)}`)
  return hits[0]!.value
}

const kv = (method: string, code: string) => ({
  grpc_method: method,
  grpc_service: "etcdserverpb.KV",
  grpc_type: "unary",
  grpc_code: code
})

const withMetrics: Partial<ServerConfig> = { listenMetricsUrls: ["http://127.0.0.1:0"] }

// ---------------------------------------------------------------------------------------------

describe("/metrics", () => {
  let server: Awaited<ReturnType<typeof startInProcess>>
  let metricsUrl: string
  beforeAll(async () => {
    server = await startInProcess(withMetrics)
    metricsUrl = server.server.metricsUrls[0]!
  })
  afterAll(() => server.close())

  it("listens on a port of its own, reported in metricsUrls", () => {
    expect(server.server.metricsUrls).toHaveLength(1)
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(Number(new URL(metricsUrl).port)).toBeGreaterThan(0)
    expect(new URL(metricsUrl).port).not.toBe(String(server.server.port))
  })

  it("scrapes cleanly: every family declared, typed and named as etcd and Prometheus' clients do", async () => {
    const families = await scrape(metricsUrl)
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]))
    expect(types).toMatchObject({
      etcd_debugging_mvcc_watch_stream_total: "gauge",
      etcd_debugging_mvcc_watcher_total: "gauge",
      etcd_debugging_mvcc_slow_watcher_total: "gauge",
      etcd_debugging_mvcc_pending_events_total: "gauge",
      etcd_debugging_mvcc_events_total: "counter",
      etcd_debugging_mvcc_current_revision: "gauge",
      etcd_debugging_mvcc_compact_revision: "gauge",
      etcd_mvcc_db_total_size_in_bytes: "gauge",
      etcd_mvcc_db_total_size_in_use_in_bytes: "gauge",
      etcd_server_has_leader: "gauge",
      etcd_server_is_leader: "gauge",
      etcd_server_version: "gauge",
      grpc_server_started_total: "counter",
      grpc_server_handled_total: "counter",
      process_cpu_user_seconds_total: "counter",
      process_cpu_system_seconds_total: "counter",
      process_cpu_seconds_total: "counter",
      process_start_time_seconds: "gauge",
      process_resident_memory_bytes: "gauge",
      process_virtual_memory_bytes: "gauge",
      process_heap_bytes: "gauge",
      process_open_fds: "gauge",
      process_max_fds: "gauge",
      nodejs_heap_size_total_bytes: "gauge",
      nodejs_heap_size_used_bytes: "gauge",
      nodejs_external_memory_bytes: "gauge",
      nodejs_eventloop_lag_seconds: "gauge",
      nodejs_eventloop_lag_p50_seconds: "gauge",
      nodejs_eventloop_lag_p99_seconds: "gauge",
      nodejs_eventloop_lag_max_seconds: "gauge",
      nodejs_gc_duration_seconds: "histogram",
      nodejs_version_info: "gauge"
    })
    for (const f of families.values()) expect(f.help, f.name).toMatch(/\S/)
  })

  it("reports the process, the runtime and the member as they are", async () => {
    const m = rawClient("Maintenance", server.endpoint)
    const kvc = rawClient("KV", server.endpoint)
    try {
      await call(kvc, "Put", { key: b("rev"), value: b("1") })
      // the put is acknowledged from the WAL; LMDB takes it within 100 ms and its file may grow
      // then: read the status and the metrics until that commit is behind both
      let status = await call(m, "Status", {})
      let f = await scrape(metricsUrl)
      while (valueOf(f, "etcd_mvcc_db_total_size_in_bytes") !== Number(status.dbSize)) {
        await sleep(20)
        status = await call(m, "Status", {})
        f = await scrape(metricsUrl)
      }
      expect(valueOf(f, "process_resident_memory_bytes")).toBeGreaterThan(0)
      const rss = valueOf(f, "process_resident_memory_bytes")
      expect(valueOf(f, "process_virtual_memory_bytes")).toBeGreaterThanOrEqual(rss)
      expect(valueOf(f, "process_open_fds")).toBeGreaterThan(0)
      expect(valueOf(f, "process_open_fds")).toBeLessThanOrEqual(valueOf(f, "process_max_fds"))
      expect(valueOf(f, "process_cpu_seconds_total")).toBeCloseTo(
        valueOf(f, "process_cpu_user_seconds_total") + valueOf(f, "process_cpu_system_seconds_total"),
        6
      )
      const start = valueOf(f, "process_start_time_seconds")
      expect(start).toBeLessThanOrEqual(Date.now() / 1000)
      expect(start).toBeGreaterThan(Date.now() / 1000 - process.uptime() - 5)
      expect(valueOf(f, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
      expect(valueOf(f, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0)
      expect(valueOf(f, "nodejs_version_info", { version: process.version })).toBe(1)
      // the version Maintenance.Status reports; this member leads itself
      expect(valueOf(f, "etcd_server_version", { server_version: status.version })).toBe(1)
      expect(valueOf(f, "etcd_server_has_leader")).toBe(1)
      expect(valueOf(f, "etcd_server_is_leader")).toBe(1)
      expect(valueOf(f, "etcd_server_id", { server_id: BigInt(status.header.member_id).toString(16) })).toBe(1)
      expect(valueOf(f, "etcd_debugging_mvcc_current_revision")).toBe(Number(status.header.revision))
      expect(valueOf(f, "etcd_debugging_mvcc_compact_revision")).toBe(-1)
      expect(valueOf(f, "etcd_mvcc_db_total_size_in_bytes")).toBe(Number(status.dbSize))
    } finally {
      m.close()
      kvc.close()
    }
  })

  it("gzips when asked, as promhttp does", async () => {
    const fetchRaw = (headers: Record<string, string>) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(`${metricsUrl}/metrics`, { headers }, (res) => {
            const chunks: Array<Buffer> = []
            res.on("data", (c: Buffer) => chunks.push(c))
            res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
          })
          .on("error", reject)
      })
    const zipped = await fetchRaw({ "accept-encoding": "gzip" })
    const plain = await fetchRaw({})
    expect(zipped.headers["content-encoding"]).toBe("gzip")
    expect(plain.headers["content-encoding"]).toBeUndefined()
    const unzipped = zlib.gunzipSync(zipped.body).toString()
    expect(zipped.body.length).toBeLessThan(unzipped.length / 4)
    // the same families either way (values such as CPU time move between two scrapes)
    expect([...parseExposition(unzipped).keys()]).toEqual([...parseExposition(plain.body.toString()).keys()])
  })

  it("watch gauges follow watches created and cancelled, streams opened and closed", async () => {
    const gauges = async () => {
      const f = await scrape(metricsUrl)
      return {
        streams: valueOf(f, "etcd_debugging_mvcc_watch_stream_total"),
        watchers: valueOf(f, "etcd_debugging_mvcc_watcher_total"),
        events: valueOf(f, "etcd_debugging_mvcc_events_total")
      }
    }
    const until = (want: (g: Awaited<ReturnType<typeof gauges>>) => boolean, what: string) =>
      eventually(async () => want(await gauges()), 5000, what)
    const base = await gauges()
    const w1 = new RawWatch(server.endpoint)
    const w2 = new RawWatch(server.endpoint)
    try {
      w1.create({ key: b("w/a") })
      w1.create({ key: b("w/"), range_end: b("w0") })
      w2.create({ key: b("w/a") })
      await w1.waitFor(2)
      await w2.waitFor(1)
      await until((g) => g.streams === base.streams + 2 && g.watchers === base.watchers + 3, "3 watchers on 2 streams")

      const kvc = rawClient("KV", server.endpoint)
      await call(kvc, "Put", { key: b("w/a"), value: b("x") })
      kvc.close()
      // one event, to each of the three watchers
      await until((g) => g.events === base.events + 3, "3 events sent")

      w1.cancel(w1.responses[0].watch_id)
      await until((g) => g.watchers === base.watchers + 2 && g.streams === base.streams + 2, "a watcher cancelled")
      w2.close()
      await until((g) => g.watchers === base.watchers + 1 && g.streams === base.streams + 1, "a stream closed")
    } finally {
      w1.close()
      w2.close()
    }
    await until((g) => g.watchers === base.watchers && g.streams === base.streams, "every stream closed")
  })
})

describe("grpc_server_started_total / grpc_server_handled_total", () => {
  let server: Awaited<ReturnType<typeof startInProcess>>
  let other: Awaited<ReturnType<typeof startInProcess>>
  beforeAll(async () => {
    ;[server, other] = await Promise.all([startInProcess(withMetrics), startInProcess(withMetrics)])
  })
  afterAll(() => Promise.all([server.close(), other.close()]))

  it("count every call by type, service, method and Go's code name, per server", async () => {
    const kvc = rawClient("KV", server.endpoint)
    const cluster = rawClient("Cluster", server.endpoint)
    const maintenance = rawClient("Maintenance", server.endpoint)
    try {
      for (let i = 0; i < 3; i++) await call(kvc, "Put", { key: b("k"), value: b(`${i}`) })
      expect(await unaryCall(kvc, "Put", { key: b(""), value: b("x") })).toMatchObject({ ok: false, code: 3 })
      await call(kvc, "Range", { key: b("k") })
      expect(await unaryCall(kvc, "Range", { key: b("k"), revision: 1000 })).toMatchObject({ ok: false, code: 11 })
      expect(await unaryCall(cluster, "MemberAdd", { peerURLs: ["http://127.0.0.1:1"] })).toMatchObject({
        ok: false,
        code: 12
      })
      await new Promise<void>((resolve, reject) => {
        const s = maintenance.Snapshot({})
        s.on("data", () => {})
        s.on("end", () => resolve())
        s.on("error", reject)
      })
      // a Watch the client cancels
      const w = new RawWatch(server.endpoint)
      w.create({ key: b("k") })
      await w.waitFor(1)
      w.close()
    } finally {
      kvc.close()
      cluster.close()
      maintenance.close()
    }

    const watch = {
      grpc_method: "Watch",
      grpc_service: "etcdserverpb.Watch",
      grpc_type: "bidi_stream"
    }
    const url = server.server.metricsUrls[0]!
    await eventually(
      async () => valueOf(await scrape(url), "grpc_server_handled_total", { ...watch, grpc_code: "Canceled" }) === 1,
      5000,
      "the cancelled Watch counted"
    )
    const f = await scrape(url)
    const started = (labels: Record<string, string>) => valueOf(f, "grpc_server_started_total", labels)
    const handled = (labels: Record<string, string>) => valueOf(f, "grpc_server_handled_total", labels)
    expect(handled(kv("Put", "OK"))).toBe(3)
    expect(handled(kv("Put", "InvalidArgument"))).toBe(1)
    expect(started({ grpc_method: "Put", grpc_service: "etcdserverpb.KV", grpc_type: "unary" })).toBe(4)
    expect(handled(kv("Range", "OK"))).toBe(1)
    expect(handled(kv("Range", "OutOfRange"))).toBe(1)
    expect(started({ grpc_method: "Range", grpc_service: "etcdserverpb.KV", grpc_type: "unary" })).toBe(2)
    const memberAdd = { grpc_method: "MemberAdd", grpc_service: "etcdserverpb.Cluster", grpc_type: "unary" }
    expect(handled({ ...memberAdd, grpc_code: "Unimplemented" })).toBe(1)
    const snapshot = { grpc_method: "Snapshot", grpc_service: "etcdserverpb.Maintenance", grpc_type: "server_stream" }
    expect(handled({ ...snapshot, grpc_code: "OK" })).toBe(1)
    expect(started(watch)).toBe(1)

    // every method of every service, with every code: started = the sum of its handled
    const handledSamples = f.get("grpc_server_handled_total")!.samples
    const startedSamples = f.get("grpc_server_started_total")!.samples
    const methods = serviceNames.flatMap((s) => Object.keys(serviceDefinition(s)).map((m) => `etcdserverpb.${s}/${m}`))
    const startedMethods = startedSamples.map((s) => `${s.labels["grpc_service"]}/${s.labels["grpc_method"]}`)
    expect(startedMethods.sort()).toEqual(methods.sort())
    expect(handledSamples).toHaveLength(methods.length * 17)
    expect(new Set(handledSamples.map((s) => s.labels["grpc_code"]))).toEqual(
      new Set([
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated"
      ])
    )
    for (const s of startedSamples) {
      const sum = handledSamples
        .filter((h) => h.labels["grpc_method"] === s.labels["grpc_method"])
        .reduce((a, h) => a + h.value, 0)
      expect(sum, s.labels["grpc_method"]).toBe(s.value)
    }

    // the other server saw none of it
    const o = await scrape(other.server.metricsUrls[0]!)
    expect(valueOf(o, "grpc_server_handled_total", kv("Put", "OK"))).toBe(0)
    expect(valueOf(o, "grpc_server_started_total", watch)).toBe(0)
  })
})

describe("/health, /livez, /readyz", () => {
  let server: Awaited<ReturnType<typeof startInProcess>>
  let url: string
  beforeAll(async () => {
    server = await startInProcess(withMetrics)
    url = server.server.metricsUrls[0]!
  })
  afterAll(() => server.close())

  it("/health: etcd 3.5's JSON, serializable or not, alarms excluded or not; counted", async () => {
    const queries = ["", "?serializable=true", "?exclude=NOSPACE", "?serializable=false&exclude=NOSPACE&exclude=X"]
    for (const query of queries) {
      expect(await get(`${url}/health${query}`)).toMatchObject({
        status: 200,
        type: "text/plain; charset=utf-8",
        body: '{"health":"true","reason":""}'
      })
    }
    const f = await scrape(url)
    expect(valueOf(f, "etcd_server_health_success")).toBe(4)
    expect(valueOf(f, "etcd_server_health_failures")).toBe(0)
  })

  it("/livez and /readyz: ok, the checks with ?verbose, one check by its path, exclusions", async () => {
    expect(await get(`${url}/livez`)).toMatchObject({ status: 200, type: "text/plain; charset=utf-8", body: "ok\n" })
    expect(await get(`${url}/readyz`)).toMatchObject({ status: 200, body: "ok\n" })
    expect((await get(`${url}/livez?verbose`)).body).toBe("[+]serializable_read ok\nok\n")
    expect((await get(`${url}/readyz?verbose`)).body).toBe(
      "[+]data_corruption ok\n[+]serializable_read ok\n[+]linearizable_read ok\n[+]non_learner ok\nok\n"
    )
    expect((await get(`${url}/readyz?verbose&exclude=linearizable_read&exclude=nonexistent`)).body).toBe(
      "[+]data_corruption ok\n[+]serializable_read ok\n[+]non_learner ok\nok\n"
    )
    expect(await get(`${url}/readyz/linearizable_read?verbose`)).toMatchObject({
      status: 200,
      body: "[+]linearizable_read ok\nok\n"
    })
  })

  it("other paths 404, other methods 405, as Go's mux and etcd's handlers answer", async () => {
    for (const path of ["/", "/nope", "/livez/nope", "/metrics/x", "/healthz"]) {
      expect(await get(`${url}${path}`), path).toMatchObject({ status: 404, body: "404 page not found\n" })
    }
    for (const path of ["/health", "/livez", "/readyz"]) {
      const r = await get(`${url}${path}`, { method: "POST" })
      expect(r, path).toMatchObject({ status: 405, body: "Method Not Allowed\n" })
      expect(r.headers.get("allow")).toBe("GET")
    }
  })
})

/**
 * A unary Put{key: "k", value: "v"} with `grpc-timeout` and no client-side deadline: the server's
 * deadline alone decides. Resolves to the grpc-status the server ends it with.
 */
const putWithTimeout = (endpoint: string, timeout: string) =>
  new Promise<number>((resolve, reject) => {
    const session = http2.connect(`http://${endpoint}`)
    session.on("error", reject)
    const stream = session.request({
      ":method": "POST",
      ":path": "/etcdserverpb.KV/Put",
      "content-type": "application/grpc",
      "grpc-timeout": timeout,
      te: "trailers"
    })
    stream.on("error", reject)
    let status: number | undefined
    const readStatus = (headers: http2.IncomingHttpHeaders) => {
      const s = headers["grpc-status"]
      if (s !== undefined) status = Number(s)
    }
    stream.on("response", readStatus) // a trailers-only answer
    stream.on("trailers", readStatus)
    stream.on("data", () => {})
    stream.on("close", () => {
      session.close()
      if (status === undefined) reject(new Error("the call ended without a grpc-status"))
      else resolve(status)
    })
    const body = Buffer.from([0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76])
    const frame = Buffer.alloc(5 + body.length)
    frame.writeUInt32BE(body.length, 1)
    body.copy(frame, 5)
    stream.end(frame)
  })

describe("a member that cannot serve", () => {
  it("is unhealthy with etcd's reasons; a call past its deadline counts as DeadlineExceeded", async () => {
    const { gate, server, close } = await startGatedServer({ listenMetricsUrls: ["http://127.0.0.1:0"] })
    const url = server.metricsUrls[0]!
    const kvc = rawClient("KV", server.endpoints[0]!)
    try {
      // A Put whose write never becomes durable in time. Sent by hand: a grpc-js client would reset
      // the stream at its own deadline, and if that reaches the server before the server's deadline
      // (which starts when the headers arrive) the call counts as Canceled, as in Go.
      const late = await putWithTimeout(server.endpoints[0]!, "300m")
      expect(late).toBe(grpc.status.DEADLINE_EXCEEDED)
      // released until counted: under load the Put may reach the store only after a first release
      await eventually(
        async () => {
          await Effect.runPromise(gate.release())
          return valueOf(await scrape(url), "grpc_server_handled_total", kv("Put", "DeadlineExceeded")) === 1
        },
        5000,
        "the late Put counted"
      )

      // a failed write stops the store: every read fails from then on
      await Effect.runPromise(gate.fail())
      expect(await unaryCall(kvc, "Put", { key: b("k"), value: b("w") })).toMatchObject({ ok: false, code: 14 })
      const unhealthy = '{"health":"false","reason":"RANGE ERROR:etcdserver: server stopped"}\n'
      expect(await get(`${url}/health`)).toMatchObject({
        status: 503,
        type: "text/plain; charset=utf-8",
        body: unhealthy
      })
      expect(await get(`${url}/health?serializable=true`)).toMatchObject({ status: 503, body: unhealthy })
      expect(await get(`${url}/livez`)).toMatchObject({
        status: 503,
        body: "[-]serializable_read failed: etcdserver: server stopped\n\n"
      })
      expect(await get(`${url}/readyz?exclude=serializable_read&exclude=linearizable_read`)).toMatchObject({
        status: 200,
        body: "ok\n"
      })
      expect((await get(`${url}/readyz`)).body).toBe(
        "[+]data_corruption ok\n[-]serializable_read failed: etcdserver: server stopped\n" +
          "[-]linearizable_read failed: etcdserver: server stopped\n[+]non_learner ok\n\n"
      )
      const f = await scrape(url)
      expect(valueOf(f, "etcd_server_health_failures")).toBe(2)
      expect(valueOf(f, "grpc_server_handled_total", kv("Put", "Unavailable"))).toBe(1)
    } finally {
      kvc.close()
      await close()
    }
  })
})

describe("the listener's lifetime", () => {
  it("serves on every URL given, in order, IPv6 included", async () => {
    const server = await startInProcess({ listenMetricsUrls: ["http://127.0.0.1:0", "http://[::1]:0"] })
    try {
      const [v4, v6] = server.server.metricsUrls
      expect(v4).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(v6).toMatch(/^http:\/\/\[::1\]:\d+$/)
      for (const url of [v4!, v6!]) expect(await get(`${url}/livez`)).toMatchObject({ status: 200, body: "ok\n" })
    } finally {
      await server.close()
    }
  })

  it("closes with the server, keep-alive connections and all", async () => {
    const server = await startInProcess(withMetrics)
    const url = server.server.metricsUrls[0]!
    // an agent that keeps its connection open after the response
    const agent = new http.Agent({ keepAlive: true })
    const status = await new Promise<number>((resolve, reject) =>
      http
        .get(`${url}/livez`, { agent }, (res) => {
          res.resume()
          res.on("end", () => resolve(res.statusCode ?? 0))
        })
        .on("error", reject)
    )
    expect(status).toBe(200)
    await server.close()
    await expect(fetch(`${url}/livez`)).rejects.toThrow()
    agent.destroy()
  })

  it("start-up: a metrics port in use or a bad URL fails with one line, leaving nothing listening", async () => {
    const attempt = async (options: Partial<ServerConfig>) => {
      const exit = await Effect.runPromiseExit(
        Effect.scoped(serve(options)).pipe(Logger.withMinimumLogLevel(LogLevel.None))
      )
      if (Exit.isSuccess(exit)) return undefined
      const failure = Cause.failureOption(exit.cause)
      return failure._tag === "Some" ? { tag: failure.value._tag, message: failure.value.message } : { tag: "Die" }
    }
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()))
    const busy = (blocker.address() as net.AddressInfo).port
    const clientPort = await freePort()
    const client = [`http://127.0.0.1:${clientPort}`]
    try {
      expect(await attempt({ listenClientUrls: client, listenMetricsUrls: [`http://127.0.0.1:${busy}`] })).toEqual({
        tag: "ServeError",
        message: `listen tcp 127.0.0.1:${busy}: bind: address already in use`
      })
      expect(await attempt({ listenClientUrls: client, listenMetricsUrls: ["https://127.0.0.1:0"] })).toEqual({
        tag: "ServeError",
        message:
          "TLS key/cert (--cert-file, --key-file) must be provided for metrics url https://127.0.0.1:0 with HTTPS scheme"
      })
      expect(await attempt({ listenClientUrls: client, listenMetricsUrls: ["http://127.0.0.1:0/metrics"] })).toEqual({
        tag: "ServeError",
        message: "metrics URL http://127.0.0.1:0/metrics: expected no path"
      })
      expect(await attempt({ listenClientUrls: client, listenMetricsUrls: ["127.0.0.1:2381"] })).toMatchObject({
        tag: "ServeError"
      })
      // the failed starts released the client port: a member starts on it now
      const ok = await startInProcess({ listenClientUrls: client, ...withMetrics })
      expect(ok.server.port).toBe(clientPort)
      await ok.close()
    } finally {
      blocker.close()
    }
  })
})

describe("etcd-effect serve --listen-metrics-urls (process)", () => {
  const dirs: Array<string> = []
  const procs: Array<ServeProcess> = []
  beforeAll(async () => {
    await ensureBuilt()
  }, 300_000)
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL")))
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })
  const dir = () => {
    const d = tempDir()
    dirs.push(d)
    return d
  }

  it("a metrics port in use: one line on stderr, exit code 1", async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()))
    const busy = (blocker.address() as net.AddressInfo).port
    try {
      const args = ["--listen-metrics-urls", `http://127.0.0.1:${busy}`]
      const p = ServeProcess.spawn({ dataDir: dir(), args }, await freePort())
      procs.push(p)
      const code = await Promise.race([p.exited, sleep(30_000).then(() => "timeout" as const)])
      expect(code).toBe(1)
      expect(p.stderr).toBe(`etcd-effect: listen tcp 127.0.0.1:${busy}: bind: address already in use\n`)
    } finally {
      blocker.close()
    }
  })

  it("ETCD_LISTEN_METRICS_URLS: serves /health and /metrics, and SIGTERM still exits 0 with no warning", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const p = await ServeProcess.start({ dataDir: dir(), env: { ETCD_LISTEN_METRICS_URLS: url } })
    procs.push(p)
    // gRPC answers first: the metrics listener starts once the member serves clients
    await eventually(
      () =>
        get(`${url}/livez`).then(
          (r) => r.status === 200,
          () => false
        ),
      10_000,
      "metrics"
    )
    expect(await get(`${url}/health`)).toMatchObject({ status: 200, body: '{"health":"true","reason":""}' })
    const f = await scrape(url)
    // the Status call ServeProcess.start made to see it ready
    expect(
      valueOf(f, "grpc_server_handled_total", {
        grpc_method: "Status",
        grpc_service: "etcdserverpb.Maintenance",
        grpc_code: "OK"
      })
    ).toBeGreaterThanOrEqual(1)
    expect(await p.kill("SIGTERM")).toBe(0)
    expect(beyondInfo(p.stderr)).toEqual([])
  })
})

describe.skipIf(skipEtcd)("side by side with etcd 3.4.23", () => {
  let etcd: EtcdProcess
  let ours: Awaited<ReturnType<typeof startInProcess>>
  beforeAll(async () => {
    ;[etcd, ours] = await Promise.all([EtcdProcess.start(), startInProcess(withMetrics)])
  })
  afterAll(async () => {
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  /**
   * etcd 3.4 families we do not serve: per-operation and compaction statistics of its mvcc
   * package, and the per-message stream counters (see grpc-metrics.ts).
   */
  const NOT_SERVED = [
    "etcd_debugging_mvcc_db_compaction_keys_total",
    "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds",
    "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds",
    "etcd_debugging_mvcc_delete_total",
    "etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds",
    "etcd_debugging_mvcc_keys_total",
    "etcd_debugging_mvcc_put_total",
    "etcd_debugging_mvcc_range_total",
    "etcd_debugging_mvcc_total_put_size_in_bytes",
    "etcd_debugging_mvcc_txn_total",
    "grpc_server_msg_received_total",
    "grpc_server_msg_sent_total"
  ]

  it("etcd_debugging_mvcc_* and grpc_server_* families: ours are etcd's, with its types and labels", async () => {
    const [theirs, mine] = await Promise.all([scrape(etcd.metricsUrl), scrape(ours.server.metricsUrls[0]!)])
    const pick = (f: Map<string, ParsedFamily>) =>
      [...f.keys()].filter((n) => n.startsWith("etcd_debugging_mvcc_") || n.startsWith("grpc_server_")).sort()
    const theirNames = pick(theirs)
    const myNames = pick(mine)
    expect(myNames.filter((n) => !theirNames.includes(n))).toEqual([])
    expect(theirNames.filter((n) => !myNames.includes(n))).toEqual(NOT_SERVED)

    // every family both serve under etcd's names has the same type
    const shared = [...mine.keys()].filter((n) => theirs.has(n))
    expect(shared).toEqual(
      expect.arrayContaining([
        "etcd_mvcc_db_total_size_in_bytes",
        "etcd_mvcc_db_total_size_in_use_in_bytes",
        "etcd_server_has_leader",
        "etcd_server_is_leader",
        "etcd_server_version",
        "process_resident_memory_bytes",
        "process_open_fds"
      ])
    )
    for (const n of shared) expect(mine.get(n)!.type, n).toBe(theirs.get(n)!.type)

    // grpc series: the same label names, code names, and (service, method, type) for etcd's services
    const labelNames = (f: Map<string, ParsedFamily>, n: string) =>
      new Set(f.get(n)!.samples.flatMap((s) => Object.keys(s.labels)))
    const codes = (f: Map<string, ParsedFamily>) =>
      new Set(f.get("grpc_server_handled_total")!.samples.map((s) => s.labels["grpc_code"]))
    for (const n of ["grpc_server_started_total", "grpc_server_handled_total"]) {
      expect(labelNames(mine, n)).toEqual(labelNames(theirs, n))
    }
    expect(codes(mine)).toEqual(codes(theirs))
    const methods = (f: Map<string, ParsedFamily>) =>
      f
        .get("grpc_server_started_total")!
        .samples.filter((s) => s.labels["grpc_service"]!.startsWith("etcdserverpb."))
        .map((s) => `${s.labels["grpc_service"]}/${s.labels["grpc_method"]} ${s.labels["grpc_type"]}`)
    const mineMethods = methods(mine)
    // etcd 3.4's API is ours minus what 3.5 added (Auth.AuthStatus, Maintenance.Downgrade)
    expect(methods(theirs).filter((m) => !mineMethods.includes(m))).toEqual([])
    expect(mineMethods.filter((m) => !methods(theirs).includes(m)).sort()).toEqual([
      "etcdserverpb.Auth/AuthStatus unary",
      "etcdserverpb.Maintenance/Downgrade unary"
    ])

    expect(labelNames(mine, "etcd_server_version")).toEqual(labelNames(theirs, "etcd_server_version"))
  })

  it('/health: etcd 3.4\'s {"health":"true"}; ours adds 3.5\'s reason; errors worded alike', async () => {
    const theirs = await get(`${etcd.metricsUrl}/health`)
    const mine = await get(`${ours.server.metricsUrls[0]!}/health`)
    // etcd 3.4 has no "reason" field; 3.5 and later always write it
    expect(theirs).toMatchObject({ status: 200, type: "text/plain; charset=utf-8", body: '{"health":"true"}' })
    expect(mine).toMatchObject({ status: theirs.status, type: theirs.type })
    expect(JSON.parse(mine.body)).toEqual({ ...JSON.parse(theirs.body), reason: "" })

    for (const [path, init] of [
      ["/nope", {}],
      ["/health", { method: "POST" }]
    ] as const) {
      const t = await get(`${etcd.metricsUrl}${path}`, init)
      const m = await get(`${ours.server.metricsUrls[0]!}${path}`, init)
      const shape = (r: typeof t) => ({ status: r.status, body: r.body, type: r.type })
      expect(shape(m), path).toEqual(shape(t))
    }
  })
})
