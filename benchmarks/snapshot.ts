/**
 * bench:snapshot — what Maintenance.Snapshot (etcd's format, src/server/snapshot/) costs on a store
 * of 100k keys: the time from the request to the stream's last byte, and the member's peak RSS
 * while it builds and sends the snapshot, over its RSS just before. A member (LMDB data dir) runs in
 * a fresh child process per round, whose peak (Linux's VmHWM) is reset once the member is up, so
 * each peak is that snapshot's alone; the parent reads the stream with a raw grpc-js client and
 * throws the bytes away.
 *
 *   npm run build && npm run bench:snapshot [-- --keys 100000 --value-bytes 1024 --rounds 3]
 *   … --against <another build's dist/benchmarks/snapshot.js>   (alternates the two builds' members,
 *     same data dir: before/after in one run)
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as grpc from "@grpc/grpc-js"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { MvccStore, type RequestOp } from "../src/mvcc/kv.js"
import { etcdserverpb } from "../src/proto/load.js"
import { EtcdServer, layerMember } from "../src/server/index.js"

const TXN_OPS = 100

const quiet = <A, E>(e: Effect.Effect<A, E>) => e.pipe(Logger.withMinimumLogLevel(LogLevel.Error))

/** child "fill": `keys` keys of `valueBytes` each, in txns of 100 puts */
const fill = (dataDir: string, keys: number, valueBytes: number) =>
  Effect.runPromise(
    quiet(
      Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Layer.build(layerMember({ dataDir, listenClientUrls: ["http://127.0.0.1:0"] }))
          const kv = Context.get(ctx, MvccStore)
          const value = Buffer.alloc(valueBytes, 0x76)
          yield* Effect.forEach(
            Array.from({ length: Math.ceil(keys / TXN_OPS) }, (_, t) => t),
            (t) => {
              const success: Array<RequestOp> = []
              for (let i = t * TXN_OPS; i < Math.min(keys, (t + 1) * TXN_OPS); i++) {
                success.push({ _tag: "Put", request: { key: Buffer.from(`key/${String(i).padStart(7, "0")}`), value } })
              }
              return kv.txn({ compare: [], success, failure: [] })
            },
            { concurrency: 8, discard: true }
          )
        })
      )
    )
  )

/** a line of /proc/self/status in bytes (VmRSS: the RSS now; VmHWM: its peak) */
const status = (field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync("/proc/self/status", "utf8"))![1]) * 1024

/** child "serve": a member on the data dir; prints "ready <endpoint> <rss>", then on stdin "report" its peak RSS */
const serveChild = (dataDir: string) =>
  Effect.runPromise(
    quiet(
      Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Layer.build(layerMember({ dataDir, listenClientUrls: ["http://127.0.0.1:0"] }))
          const server = Context.get(ctx, EtcdServer)
          ;(globalThis as { gc?: () => void }).gc?.()
          // Linux: the peak (VmHWM) starts again from the RSS now, so start-up's own peak is not counted
          fs.writeFileSync("/proc/self/clear_refs", "5")
          process.stdout.write(`ready ${server.endpoints[0]} ${status("VmRSS")}\n`)
          // the member wrote nothing: exit without closing it, once the peak is reported
          process.stdin.on("data", () => {
            process.stdout.write(`peak ${status("VmHWM")}\n`, () => process.exit(0))
          })
          yield* Effect.never
        })
      )
    )
  )

const lines = (child: ChildProcess) => {
  let buf = ""
  const waiting: Array<(line: string) => void> = []
  const ready: Array<string> = []
  child.stdout!.on("data", (d) => {
    buf += d
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      const w = waiting.shift()
      if (w) w(line)
      else ready.push(line)
    }
  })
  return (): Promise<string> =>
    new Promise((resolve, reject) => {
      const l = ready.shift()
      if (l !== undefined) return resolve(l)
      child.once("exit", (code) => reject(new Error(`child exited (${code})`)))
      waiting.push(resolve)
    })
}

/** one Snapshot call to the end of its stream: ms and bytes */
const snapshot = (endpoint: string): Promise<{ ms: number; bytes: number }> =>
  new Promise((resolve, reject) => {
    const client = new etcdserverpb.Maintenance(endpoint, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": -1
    }) as grpc.Client & Record<string, any>
    const t0 = performance.now()
    let bytes = 0
    const stream = client["snapshot"]({}) as grpc.ClientReadableStream<{ blob: Uint8Array }>
    stream.on("data", (m) => (bytes += m.blob.length))
    stream.on("error", reject)
    stream.on("end", () => {
      client.close()
      resolve({ ms: performance.now() - t0, bytes })
    })
  })

const round = async (program: string, dataDir: string) => {
  const child = spawn(process.execPath, ["--expose-gc", program, "serve", dataDir], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const next = lines(child)
  const [, endpoint, rss] = (await next()).split(" ")
  const { ms, bytes } = await snapshot(endpoint!)
  child.stdin!.write("report\n")
  const peak = Number((await next()).split(" ")[1])
  await new Promise((r) => child.once("exit", r))
  return { ms, bytes, rss: Number(rss), peak }
}

const run = (program: string, args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [program, ...args], { stdio: "inherit" })
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}`))))
  })

const MiB = (n: number) => (n / 1048576).toFixed(0)

const main = async () => {
  const { values } = parseArgs({
    options: {
      keys: { type: "string", default: "100000" },
      "value-bytes": { type: "string", default: "1024" },
      rounds: { type: "string", default: "3" },
      against: { type: "string" }
    }
  })
  const self = process.argv[1]!
  const programs = [{ name: "this build", program: self }]
  if (values.against !== undefined) programs.unshift({ name: values.against, program: path.resolve(values.against) })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-snapshot-"))
  try {
    const t0 = performance.now()
    await run(self, ["fill", dir, values.keys, values["value-bytes"]])
    console.log(
      `filled ${values.keys} keys of ${values["value-bytes"]} bytes in ${((performance.now() - t0) / 1000).toFixed(1)} s; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`
    )
    console.log(
      "\n| build | round | snapshot bytes | ms to last byte | RSS before, MiB | peak RSS, MiB | peak − before, MiB |"
    )
    console.log("|---|---:|---:|---:|---:|---:|---:|")
    for (let r = 1; r <= Number(values.rounds); r++) {
      for (const p of programs) {
        const m = await round(p.program, dir)
        console.log(
          `| ${p.name} | ${r} | ${m.bytes} | ${m.ms.toFixed(0)} | ${MiB(m.rss)} | ${MiB(m.peak)} | ${MiB(m.peak - m.rss)} |`
        )
      }
    }
    console.log(
      `\nload average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`
    )
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === "fill") await fill(rest[0]!, Number(rest[1]), Number(rest[2]))
else if (mode === "serve") await serveChild(rest[0]!)
else await main()
