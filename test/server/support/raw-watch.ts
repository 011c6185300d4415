/** A raw Watch stream (grpc-js, no client library): write requests, read every response as sent. */
import * as grpc from "@grpc/grpc-js"
import { serviceDefinition } from "../../../src/proto/load.js"
import { rawClient, sleep } from "./in-process.js"

const watchDef = serviceDefinition("Watch")["Watch"]!
/** A Watch client that hands over each response's bytes as received. */
const BytesWatchClient = grpc.makeGenericClientConstructor(
  { Watch: { ...watchDef, responseDeserialize: (b: Buffer) => b } },
  "Watch"
)

export class RawWatch {
  readonly responses: Array<any> = []
  /** the encoded size of each response, when opened with `bytes: true` */
  readonly sizes: Array<number> = []
  error: grpc.ServiceError | undefined
  ended = false
  private readonly client: grpc.Client & Record<string, any>
  readonly call: grpc.ClientDuplexStream<any, any>

  constructor(endpoint: string, options: { readonly bytes?: boolean } = {}) {
    this.client =
      options.bytes === true
        ? (new BytesWatchClient(endpoint, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>)
        : rawClient("Watch", endpoint)
    this.call = this.client.Watch()
    this.call.on("data", (r: any) => {
      if (Buffer.isBuffer(r)) {
        this.sizes.push(r.length)
        this.responses.push(watchDef.responseDeserialize(r))
      } else {
        this.responses.push(r)
      }
    })
    this.call.on("error", (e: grpc.ServiceError) => {
      this.error = e
    })
    this.call.on("end", () => {
      this.ended = true
    })
  }

  create(req: Record<string, unknown>): void {
    this.call.write({ create_request: req })
  }
  cancel(id: number | string): void {
    this.call.write({ cancel_request: { watch_id: id } })
  }
  progress(): void {
    this.call.write({ progress_request: {} })
  }

  /** Waits until at least `n` responses arrived; returns them all. */
  async waitFor(n: number, timeoutMs = 5000): Promise<Array<any>> {
    const deadline = Date.now() + timeoutMs
    while (this.responses.length < n) {
      if (Date.now() > deadline) {
        throw new Error(
          `expected ${n} watch responses, got ${this.responses.length}: ${JSON.stringify(this.responses)}`
        )
      }
      if (this.error !== undefined) throw new Error(`watch stream failed: ${this.error.message}`)
      await sleep(5)
    }
    return this.responses
  }

  /** Waits until the stream's events cover `count` events in total. */
  async waitForEvents(count: number, timeoutMs = 5000): Promise<Array<any>> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const evs = this.responses.flatMap((r) => r.events)
      if (evs.length >= count) return evs
      if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${evs.length}`)
      await sleep(5)
    }
  }

  close(): void {
    this.call.cancel()
    this.client.close()
  }
}

export const text = (b: Buffer | Uint8Array | null | undefined): string =>
  b === null || b === undefined ? "" : Buffer.from(b).toString()
