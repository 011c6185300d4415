/**
 * go-grpc-prometheus' server counters, as etcd registers them: grpc_server_started_total and
 * grpc_server_handled_total by grpc_type, grpc_service, grpc_method (and grpc_code), every method
 * of every etcdserverpb service present from the start with 0 (etcd pre-registers them all, so a
 * rate() works from the first call).
 *
 * Hot path: the bridge resolves a method's `MethodCounters` once, when it makes the handler; per
 * call it does `started++` and `handled[code]++` on that plain object. Not Effect's `Metric`:
 * its `unsafeUpdate` with tags builds a tagged MetricKey and looks it up in a process-wide
 * registry on every call (allocation and hashing per rpc), and that registry would merge the
 * counts of two servers in one process.
 *
 * grpc_server_msg_received_total / msg_sent_total are not served: counting stream messages would
 * mean work per message in the stream read/write path.
 */
import type * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { GrpcCode } from "../../errors.js"
import { serviceDefinition, serviceNames } from "../../proto/load.js"
import type { CallMetrics, MethodMetrics } from "../grpc-bridge.js"
import type { Collector, MetricFamily, Sample } from "./prometheus.js"

/** Go's names of the gRPC codes (codes.Code.String()), indexed by code. */
export const GRPC_CODE_NAMES: ReadonlyArray<string> = Object.entries(GrpcCode)
  .sort(([, a], [, b]) => a - b)
  .map(([name]) => name)

export type GrpcType = "unary" | "client_stream" | "server_stream" | "bidi_stream"

/** go-grpc-prometheus' typeFromMethodInfo. */
const grpcType = (def: { readonly requestStream: boolean; readonly responseStream: boolean }): GrpcType =>
  def.requestStream
    ? def.responseStream
      ? "bidi_stream"
      : "client_stream"
    : def.responseStream
      ? "server_stream"
      : "unary"

/** One method's counters; the bridge calls onStart/onEnd once per call. */
export class MethodCounters implements MethodMetrics {
  started = 0
  readonly handled: Array<number> = GRPC_CODE_NAMES.map(() => 0)

  constructor(
    readonly service: string,
    readonly method: string,
    readonly type: GrpcType
  ) {}

  onStart(): void {
    this.started++
  }

  onEnd(code: number): void {
    // a code outside the table (never from grpc-js or our errors) counts as Unknown
    if (code >= 0 && code < this.handled.length) this.handled[code]!++
    else this.handled[GrpcCode.Unknown]!++
  }
}

export class GrpcServerMetrics implements CallMetrics {
  /** in proto order: service by service, method by method */
  private readonly methods: Array<MethodCounters> = []
  private readonly byName = new Map<string, MethodCounters>()

  constructor() {
    for (const name of serviceNames) {
      for (const [method, def] of Object.entries(serviceDefinition(name))) {
        // the bridge names calls by method alone, which is unique across etcd's services
        if (this.byName.has(method)) throw new Error(`grpc metrics: method ${method} in two services`)
        const counters = new MethodCounters(`etcdserverpb.${name}`, method, grpcType(def))
        this.methods.push(counters)
        this.byName.set(method, counters)
      }
    }
  }

  /** The counters of an rpc by its method name ("Range", "Watch", ...). */
  readonly method = (name: string): MethodCounters => {
    const m = this.byName.get(name)
    if (m === undefined) throw new Error(`grpc metrics: no etcdserverpb method ${name}`)
    return m
  }

  /**
   * The handlers that answer Unimplemented without going through the bridge, counted as go-grpc-
   * prometheus counts any call its interceptor sees: started, then handled Unimplemented.
   */
  countUnimplemented(handlers: grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation {
    const out: grpc.UntypedServiceImplementation = {}
    for (const [method, handler] of Object.entries(handlers)) {
      const m = this.method(method)
      const h = handler as (...args: Array<unknown>) => void
      out[method] = ((...args: Array<unknown>) => {
        m.onStart()
        m.onEnd(GrpcCode.Unimplemented)
        h(...args)
      }) as grpc.UntypedHandleCall
    }
    return out
  }

  readonly collect: Collector = Effect.sync((): ReadonlyArray<MetricFamily> => {
    const started: Array<Sample> = []
    const handled: Array<Sample> = []
    for (const m of this.methods) {
      // labels in the order the Go client prints them (sorted by name)
      const labels = { grpc_method: m.method, grpc_service: m.service, grpc_type: m.type }
      started.push({ labels, value: m.started })
      for (let code = 0; code < GRPC_CODE_NAMES.length; code++) {
        handled.push({ labels: { grpc_code: GRPC_CODE_NAMES[code]!, ...labels }, value: m.handled[code]! })
      }
    }
    return [
      {
        name: "grpc_server_started_total",
        help: "Total number of RPCs started on the server.",
        type: "counter",
        samples: started
      },
      {
        name: "grpc_server_handled_total",
        help: "Total number of RPCs completed on the server, regardless of success or failure.",
        type: "counter",
        samples: handled
      }
    ]
  })
}
