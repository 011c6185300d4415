/**
 * Malformed messages on the client streams (Watch, LeaseKeepAlive), differential against etcd 3.4:
 * grpc-go's Recv fails on a message it cannot decode, and the stream ends with INTERNAL "grpc:
 * failed to unmarshal the received message …" (a unary call's words differ). Ours ends the stream with the same code and text, after
 * answering every message before it; a message etcd decodes is answered by both. LeaseKeepAlive
 * gets random and mutated bodies (its outcome is deterministic: the client half-closes); Watch
 * gets the hand-written kinds of refusal, also after a valid request.
 */
import * as grpc from "@grpc/grpc-js"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EtcdProcess, skipEtcd } from "../support/etcd.js"
import { type InProcessServer, startInProcess } from "./support/in-process.js"

const identity = (b: Buffer) => b

interface Outcome {
  /** how many responses came before the end */
  readonly responses: number
  /** the status the stream ended with */
  readonly code: number
  readonly details: string
}

/**
 * Writes `bodies` on a new bidi stream, then (for LeaseKeepAlive) half-closes; resolves with the
 * end status, or for Watch as soon as `enough` responses came without an error (then cancels).
 */
const exchange = (
  client: grpc.Client,
  path: string,
  bodies: ReadonlyArray<Buffer>,
  enough?: number
): Promise<Outcome> =>
  new Promise((resolve) => {
    const call = client.makeBidiStreamRequest(path, identity, identity)
    let responses = 0
    let done = false
    const finish = (o: Outcome) => {
      if (done) return
      done = true
      resolve(o)
    }
    call.on("data", () => {
      responses++
      if (enough !== undefined && responses >= enough) {
        finish({ responses, code: 0, details: "" })
        call.cancel()
      }
    })
    call.on("error", (e: grpc.ServiceError) => finish({ responses, code: e.code, details: e.details }))
    // an OK end's message is "OK" from grpc-js and empty from grpc-go: not a difference a client sees
    call.on("status", (s: grpc.StatusObject) =>
      finish({ responses, code: s.code, details: s.code === grpc.status.OK ? "" : s.details })
    )
    for (const b of bodies) call.write(b)
    if (enough === undefined) call.end()
  })

const KEEPALIVE = "/etcdserverpb.Lease/LeaseKeepAlive"
const WATCH = "/etcdserverpb.Watch/Watch"
/** LeaseKeepAliveRequest{ID: 7}: answered with TTL 0 (no such lease) by both */
const keepAlive7 = Buffer.from([0x08, 0x07])
/** WatchRequest{create_request{key: "a"}} */
const createA = Buffer.from([0x0a, 0x03, 0x0a, 0x01, 0x61])

describe.skipIf(skipEtcd)("malformed messages on client streams, differential against etcd 3.4", () => {
  let etcd: EtcdProcess
  let ours: InProcessServer
  let clients: Array<grpc.Client>

  beforeAll(async () => {
    ;[etcd, ours] = await Promise.all([EtcdProcess.start(), startInProcess()])
    clients = [etcd.endpoint, ours.endpoint].map((e) => new grpc.Client(e, grpc.credentials.createInsecure()))
  }, 60_000)
  afterAll(async () => {
    for (const c of clients ?? []) c.close()
    await Promise.all([etcd?.dispose(), ours?.close()])
  })

  const both = async (path: string, bodies: ReadonlyArray<Buffer>, enough?: number) => {
    const [theirs, mine] = await Promise.all(clients.map((c) => exchange(c, path, bodies, enough)))
    return { theirs: theirs!, mine: mine! }
  }

  it("LeaseKeepAlive: random and mutated bodies, then a valid one — the same responses and end status as etcd", async () => {
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 12 }),
      fc
        .tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 10 }))
        .map(([tag, rest]) => Uint8Array.from([tag, ...rest])),
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((id) => {
        const out = [0x08]
        let v = id
        do {
          out.push(Number(v & 0x7fn) | (v > 0x7fn ? 0x80 : 0))
          v >>= 7n
        } while (v > 0n)
        return Uint8Array.from(out)
      })
    )
    let refused = 0
    await fc.assert(
      fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 3 }), async (bodies) => {
        const { mine, theirs } = await both(KEEPALIVE, [...bodies.map((b) => Buffer.from(b)), keepAlive7])
        if (theirs.code === grpc.status.INTERNAL) refused++
        expect(mine, JSON.stringify({ mine, theirs })).toEqual(theirs)
      }),
      { numRuns: 300 }
    )
    // the bodies include enough refusals for the comparison to mean something
    expect(refused).toBeGreaterThan(30)
  })

  it("Watch: field 0, a wrong wire type, a truncated field, a bad nested message — refused as etcd does, also after a valid request", async () => {
    const cases: Array<Buffer> = [
      Buffer.from([0x00, 0x00]), // field number 0
      Buffer.from([0x08, 0x01]), // create_request (a message) with wire type varint
      Buffer.from([0x0a, 0x05, 0x0a]), // a length past the end
      Buffer.from([0x0a, 0x02, 0x00, 0x00]), // create_request holding field 0
      Buffer.from([0x0a, 0x03, 0x10, 0x80, 0x80]) // create_request.range_end? no: a varint cut short
    ]
    for (const bad of cases) {
      const alone = await both(WATCH, [bad], 1)
      expect(alone.theirs.code, `etcd on ${bad.toString("hex")}`).toBe(grpc.status.INTERNAL)
      expect(alone.mine).toEqual(alone.theirs)
      // after a valid create: its created response first, then the end. etcd's sendLoop writes
      // the created response while recvLoop's error ends the call, so etcd sometimes ends it first
      // (0 responses): the end status must match, and ours always sends the created response.
      const after = await both(WATCH, [createA, bad], 2)
      expect(after.theirs.code).toBe(grpc.status.INTERNAL)
      expect(after.theirs.responses).toBeLessThanOrEqual(1)
      expect(after.mine).toEqual({ ...after.theirs, responses: 1 })
    }
  })
})
