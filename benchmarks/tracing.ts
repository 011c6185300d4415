/**
 * `npm run bench:tracing` (issue 42 item 3: tracing costs nothing when off): bench:compare's put
 * and range rows on `etcd-effect serve` with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT: the RPC
 * handlers are not wrapped, src/server/rpc-span.ts) and on (OTEL_EXPORTER_OTLP_ENDPOINT set to a
 * receiver in this process that answers every export with 200 and discards it), beside etcd 3.6
 * (tracing off) in the same run, alternating rounds (benchmarks/variants.ts).
 *
 *   npm run bench:tracing [-- --rounds N] [--only put,range]
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"
import { benchArgs, positiveInt } from "./bench-args.js"
import { cleanup, etcdVersion, startEtcdServer, startOurs } from "./compare-servers.js"
import { goInstruments } from "./etcd-tool.js"
import { projectRoot } from "./compare-servers.js"
import { runVariants } from "./variants.js"

process.on("exit", () => cleanup.now())
process.on("SIGINT", () => process.exit(130))
process.on("SIGTERM", () => process.exit(130))

const usage = `usage: npm run bench:tracing [-- options]
  --rounds N        alternating rounds (default 3)
  --only a,b        bench:compare scenarios (default put,range)`
const values = benchArgs("bench:tracing", usage, () =>
  parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      rounds: { type: "string", default: "3" },
      only: { type: "string", default: "put,range" }
    }
  })
)
const rounds = positiveInt("bench:tracing", "--rounds", values.rounds)
const etcd36 = goInstruments(projectRoot()).bins["ETCD_36_BIN"]
if (etcd36 === undefined) {
  process.stderr.write("bench:tracing: etcd 3.6 is not built: run `bash benchmarks/go/build.sh` first\n")
  process.exit(1)
}

/** An OTLP/HTTP receiver that reads each export and throws it away; counts what it got. */
const received = { requests: 0, bytes: 0 }
const receiver = http.createServer((req, res) => {
  req.on("data", (d: Buffer) => (received.bytes += d.length))
  req.on("end", () => {
    received.requests++
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
const otlp = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
// ours off must not inherit an endpoint from the caller's environment
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT

const result = await runVariants(
  `bench:tracing — etcd 3.6 (${etcdVersion(etcd36)}), etcd-effect tracing off, etcd-effect tracing on (OTLP to a discarding receiver)`,
  [
    { name: "etcd 3.6", start: (root) => startEtcdServer(root, { system: "etcd-3.6", bin: etcd36 }) },
    { name: "etcd-effect, tracing off", start: (root) => startOurs({ root }) },
    {
      name: "etcd-effect, tracing on",
      start: (root) => startOurs({ root, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp } })
    }
  ],
  values.only,
  rounds
)
receiver.close()
console.log(`\n${result.header}\n\n${result.table}\n`)
console.log(
  `the receiver got ${received.requests} exports, ${(received.bytes / 1e6).toFixed(1)} MB of spans (tracing on only)`
)
cleanup.now()
process.exit(0)
