/**
 * Server CPU per unary call on each gRPC transport (issue 12, lever 1):
 *
 *   npm run build && node dist/benchmarks/grpc-transport.js [--rounds 3] [--total 20000]
 *
 * Each round starts `serve` once per transport (lean, grpc-js; the order alternates by round),
 * runs the load generator's put and range scenarios (`bench put|range`, its own HTTP/2 client: it
 * costs little next to a server) and reads the server process' CPU time (user + system, from
 * /proc/<pid>/stat) before and after each: CPU time, not wall time, is what means something on a
 * shared machine. Prints µs of server CPU per call, per transport and scenario, and the medians.
 * It also prints the load generator's CPU per call (the lean client's, as it reports it for its
 * timed part: `clientCpuMs`), the figure that says what a change to src/h2's client costs. `--transports lean` runs one transport.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const rounds = arg("rounds", 3)
const transportsArg = process.argv.indexOf("--transports")
const transports = transportsArg >= 0 ? process.argv[transportsArg + 1]!.split(",") : ["lean", "grpc-js"]
const total = arg("total", 20000)
const main = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../src/cli/main.js")
const TICK_US = 1e6 / Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim())

const cpuUs = (pid: number): number => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * TICK_US
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

const waitListening = async (port: number): Promise<void> => {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, "127.0.0.1", () => {
        c.destroy()
        resolve(true)
      })
      c.once("error", () => resolve(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("server did not start")
}

const startServer = async (transport: string): Promise<{ child: ChildProcess; port: number; dir: string }> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "grpc-transport-"))
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [
      main,
      "serve",
      "--data-dir",
      dir,
      "--listen-client-urls",
      `http://127.0.0.1:${port}`,
      "--grpc-transport",
      transport
    ],
    { stdio: "ignore" }
  )
  await waitListening(port)
  return { child, port, dir }
}

/** Runs the load generator; returns the CPU it reports for its timed part, in µs (`clientCpuMs`). */
const load = (port: number, scenario: string): number => {
  const args = [
    "bench",
    scenario,
    "--endpoints",
    `127.0.0.1:${port}`,
    "--total",
    String(total),
    "--conns",
    "1",
    "--clients",
    "16",
    "-w",
    "json"
  ]
  const report = JSON.parse(execFileSync(process.execPath, [main, ...args]).toString()) as { clientCpuMs?: number }
  return (report.clientCpuMs ?? Number.NaN) * 1000
}

const results: Record<string, Array<number>> = {}
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? transports : [...transports].reverse()
  for (const transport of order) {
    const { child, port, dir } = await startServer(transport)
    try {
      for (const scenario of ["put", "range"]) {
        const before = cpuUs(child.pid!)
        const clientUs = load(port, scenario)
        const perCall = (cpuUs(child.pid!) - before) / total
        ;(results[`${transport} ${scenario}`] ??= []).push(perCall)
        ;(results[`${transport} ${scenario} (load generator)`] ??= []).push(clientUs / total)
        console.log(
          `round ${round + 1} ${transport} ${scenario}: ${perCall.toFixed(1)} µs server CPU per call, ` +
            `${(clientUs / total).toFixed(1)} µs load generator CPU per call`
        )
      }
    } finally {
      child.kill()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(
  `\nmedians over ${rounds} rounds, ${total} calls each, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}:`
)
for (const [k, xs] of Object.entries(results)) console.log(`  ${k}: ${median(xs).toFixed(1)} µs`)
