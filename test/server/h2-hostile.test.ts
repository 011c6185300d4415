/**
 * Hostile HTTP/2 peers against the server's gRPC transport (issue 12): each attack runs on a raw
 * connection (support/h2-attacker.ts) while a normal grpc-js client does Put + Range on another,
 * and three things are checked separately:
 *
 * - the error: the GOAWAY code (first GOAWAY) or RST_STREAM code the spec asks for
 *   (docs/hostile-peers.md, the table's "lean must" column);
 * - the end: the server closes the attacking connection (or, for a stream error, keeps it: a PING
 *   is still answered) within a generous bound;
 * - the others: the normal client is served during the attack and after it.
 *
 * Every case runs for each transport the server has (support/hostile-server.ts: grpc-js today,
 * "lean" once `grpcTransport` exists). Where node:http2 under grpc-js does not do what the spec
 * asks, the check runs as `it.fails` with the reason in its name — a finding about node, recorded
 * here so the test turns red the day node starts defending (then drop the entry).
 *
 * Bounds: CLOSE_BOUND_MS is not a speed assertion, it tells "closed" from "hanging"; it is many
 * times what the server needs on an idle machine (milliseconds) so CPU load cannot make it flake.
 */
import * as net from "node:net"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPki, type TestPki } from "../support/certs.js"
import { eventually, sleep, unaryCall } from "./support/in-process.js"
import {
  type Attacker,
  connectAttacker,
  errorName,
  Flag,
  frame,
  FrameType,
  grpcData,
  grpcHeaders,
  H2Error,
  pingFrame,
  rstStreamFrame,
  Setting,
  settingsFrame,
  windowUpdateFrame
} from "./support/h2-attacker.js"
import { grpcRequestHeaderBlock } from "./support/h2-codec.js"
import {
  handshakeTimeoutMs,
  type HostileServer,
  knows,
  normalClient,
  serveLoop,
  startHostileServer,
  type Transport,
  transports
} from "./support/hostile-server.js"

/** the server has the spec's handshake deadline, which also bounds the cmux sniff and TLS handshake */
const cmuxHasDeadline = knows("h2HandshakeTimeout")

/** "closed, not hanging": generous for a loaded 2-core machine (the server needs milliseconds) */
const CLOSE_BOUND_MS = 20_000
/**
 * For a check node is known to fail (it.fails below) there is no point waiting the full bound:
 * node never closes these connections, and 3 s shows it as well as 20 s would.
 */
const GAP_WAIT_MS = 3_000

/** Where node:http2 (the grpc-js transport) does not do what the spec asks: the reason, per check. */
interface Gaps {
  readonly error?: string
  readonly end?: string
}

/** What the spec asks of the attacking connection. */
interface Expectation {
  /** the first GOAWAY's code; "none" when the connection may just close (nothing readable to say) */
  readonly goaway?: number | "none"
  readonly debug?: string
  /** a stream error instead: RST_STREAM with this code on this stream, and the connection lives */
  readonly rst?: { readonly stream: number; readonly code: number }
  /** the server closes the connection (false: it must stay usable: a PING gets its ACK) */
  readonly closes: boolean
  /** how long the server may take before it acts (slowloris: the handshake deadline first) */
  readonly after?: number
}

interface Case {
  readonly name: string
  readonly expect: Expectation
  readonly gaps?: Partial<Record<Transport, Gaps>>
  /** attacker options (slowloris cases skip the preface or the SETTINGS ACK) */
  readonly preface?: boolean
  readonly ackSettings?: boolean
  readonly attack: (a: Attacker) => Promise<void>
}

const RANGE = "/etcdserverpb.KV/Range"
/** a RangeRequest for key "k" */
const RANGE_K = Buffer.from([0x0a, 0x01, 0x6b])

/** an HPACK literal field without indexing, new name (RFC 7541 §6.2.2), no Huffman */
const literal = (name: string, value: string): Buffer => {
  const out: Array<number> = [0x00]
  const str = (s: string) => {
    let n = s.length
    if (n < 127) out.push(n)
    else {
      out.push(127)
      n -= 127
      while (n >= 128) {
        out.push((n % 128) | 0x80)
        n = Math.floor(n / 128)
      }
      out.push(n)
    }
    for (const c of Buffer.from(s, "latin1")) out.push(c)
  }
  str(name)
  str(value)
  return Buffer.from(out)
}

/** a request header block with `n` extra fields of `valueBytes` each */
const bigBlock = (n: number, valueBytes: number): Buffer =>
  Buffer.concat([
    Buffer.from(grpcRequestHeaderBlock(RANGE, "127.0.0.1")),
    ...Array.from({ length: n }, (_, i) => literal(`x-h${String(i).padStart(4, "0")}`, "v".repeat(valueBytes)))
  ])

/** HEADERS + CONTINUATION frames of at most 16384 bytes carrying `block` on stream 1 */
const headerFrames = (block: Buffer, streamId = 1): Buffer => {
  const parts: Array<Buffer> = []
  const max = 16384
  for (let at = 0; at < block.length || at === 0; at += max) {
    const last = at + max >= block.length
    parts.push(
      frame(
        at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION,
        last ? Flag.END_HEADERS : 0,
        streamId,
        block.subarray(at, at + max)
      )
    )
  }
  return Buffer.concat(parts)
}

/**
 * Writes `make(i)` for i < max in batches, respecting the socket's buffer, until the server closes
 * the connection or `max` is reached (bounded: a defended server stops it long before).
 */
const flood = async (a: Attacker, max: number, make: (i: number) => Buffer, batch = 200): Promise<number> => {
  let i = 0
  while (i < max && !a.isClosed) {
    const bytes: Array<Buffer> = []
    for (let j = 0; j < batch && i < max; j++, i++) bytes.push(make(i))
    if (!a.write(Buffer.concat(bytes))) break
    await a.drained(256 * 1024)
    await sleep(0)
  }
  return i
}

const grpcJsKeepsConnection = "node sends the GOAWAY but never closes the socket (nor when the peer half-closes)"
const nodeInternalError = "node answers INTERNAL_ERROR (its session is destroyed with 2), not the RFC's code"

const cases: ReadonlyArray<Case> = [
  {
    name: "HPACK dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (4097 > 4096)",
    expect: { goaway: H2Error.COMPRESSION_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      // 001xxxxx with a 5-bit prefix: 31 + 98 + (31 << 7) = 4097
      const block = Buffer.concat([Buffer.from([0x3f, 0xe2, 0x1f]), Buffer.from(grpcRequestHeaderBlock(RANGE, "x"))])
      a.write(frame(FrameType.HEADERS, Flag.END_HEADERS, 1, block))
    }
  },
  {
    name: "HPACK index past the static and dynamic tables",
    expect: { goaway: H2Error.COMPRESSION_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, Buffer.from([0xff, 0x80, 0x01])))
    }
  },
  {
    name: "HPACK dynamic table size update after a field",
    expect: { goaway: H2Error.COMPRESSION_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      // RFC 7541 §4.2: a size update must come first in a block
      const block = Buffer.concat([Buffer.from(grpcRequestHeaderBlock(RANGE, "x")), Buffer.from([0x20])])
      a.write(frame(FrameType.HEADERS, Flag.END_HEADERS, 1, block))
    }
  },
  {
    name: "HPACK Huffman string holding the EOS symbol",
    expect: { goaway: H2Error.COMPRESSION_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      // a literal with a new name, Huffman-coded, of four 0xff bytes: 30 one-bits are EOS (§5.2)
      const bad = Buffer.from([0x00, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00])
      const block = Buffer.concat([Buffer.from(grpcRequestHeaderBlock(RANGE, "x")), bad])
      a.write(frame(FrameType.HEADERS, Flag.END_HEADERS, 1, block))
    }
  },
  {
    name: "header list of 200 fields (over 128)",
    expect: { rst: { stream: 1, code: H2Error.ENHANCE_YOUR_CALM }, closes: false },
    attack: async (a) => {
      a.write(headerFrames(bigBlock(200, 8)))
      a.write(grpcData(1, RANGE_K))
    }
  },
  {
    name: "header list of 100 fields of 1000 bytes (over MAX_HEADER_LIST_SIZE 65536)",
    expect: { rst: { stream: 1, code: H2Error.ENHANCE_YOUR_CALM }, closes: false },
    gaps: { "grpc-js": { error: "node accepts a 100 KB header list of up to 128 fields (the call is served)" } },
    attack: async (a) => {
      a.write(headerFrames(bigBlock(100, 1000)))
      a.write(grpcData(1, RANGE_K))
    }
  },
  {
    name: "header block of 200 KB (over the 128 KiB cap)",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(headerFrames(bigBlock(50, 4000)))
    }
  },
  {
    name: "CONTINUATION flood (header fields, never END_HEADERS)",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, closes: true },
    gaps: { "grpc-js": { error: "node (nghttp2) closes the connection without a GOAWAY" } },
    attack: async (a) => {
      a.write(frame(FrameType.HEADERS, 0, 1, Buffer.from(grpcRequestHeaderBlock(RANGE, "x"))))
      await flood(a, 100_000, (i) => frame(FrameType.CONTINUATION, 0, 1, literal(`x${i}`, "a")))
    }
  },
  {
    name: "CONTINUATION flood (empty frames, never END_HEADERS)",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, closes: true },
    gaps: { "grpc-js": { error: "node (nghttp2) closes the connection without a GOAWAY" } },
    attack: async (a) => {
      a.write(frame(FrameType.HEADERS, 0, 1, Buffer.from(grpcRequestHeaderBlock(RANGE, "x"))))
      await flood(a, 100_000, () => frame(FrameType.CONTINUATION, 0, 1))
    }
  },
  {
    name: "rapid reset (HEADERS + RST_STREAM, up to 20 000 streams)",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, closes: true },
    gaps: {
      "grpc-js": {
        error: "nghttp2's reset limit answers INTERNAL_ERROR",
        end: "node keeps the socket open after that GOAWAY"
      }
    },
    attack: async (a) => {
      const block = Buffer.from(grpcRequestHeaderBlock(RANGE, "x"))
      await flood(a, 20_000, (i) =>
        Buffer.concat([
          frame(FrameType.HEADERS, Flag.END_HEADERS, 2 * i + 1, block),
          rstStreamFrame(2 * i + 1, H2Error.CANCEL)
        ])
      )
    }
  },
  {
    name: "DATA frame over SETTINGS_MAX_FRAME_SIZE (16385)",
    expect: { goaway: H2Error.FRAME_SIZE_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(grpcHeaders(1, RANGE))
      a.write(frame(FrameType.DATA, 0, 1, Buffer.alloc(16385)))
    }
  },
  {
    name: "HEADERS frame over SETTINGS_MAX_FRAME_SIZE (20000)",
    expect: { goaway: H2Error.FRAME_SIZE_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.alloc(20000)))
    }
  },
  {
    name: "ping flood without reading the ACKs (up to 200 000 PINGs)",
    // the ACKs pile up unread: the server must drop the connection; a GOAWAY cannot be relied on
    expect: { goaway: "none", closes: true },
    attack: async (a) => {
      a.socket.pause()
      await flood(a, 200_000, (i) => pingFrame(i), 1000)
      a.socket.resume()
    }
  },
  {
    name: "pings faster than --grpc-keepalive-min-time (keepalive policy)",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, debug: "too_many_pings", closes: true },
    attack: async (a) => {
      // no call open: any ping within 2 h of the previous one is a strike; the third strike ends it
      for (let i = 0; i < 5 && !a.isClosed; i++) {
        a.write(pingFrame(i))
        await a.until(() => a.pingAcks > i || a.goaway !== undefined, CLOSE_BOUND_MS, "a PING ACK").catch(() => {})
      }
    }
  },
  {
    name: "slowloris: a partial client preface, never finished",
    preface: false,
    expect: { closes: true, goaway: "none", after: handshakeTimeoutMs },
    // the preface is read by our cmux sniff (shared by the transports): with the spec's deadline
    // there (`h2HandshakeTimeout`), grpc-js is defended too
    gaps: cmuxHasDeadline
      ? {}
      : { "grpc-js": { end: "neither our cmux sniff nor node has a deadline: the connection is held forever" } },
    attack: async (a) => {
      a.write(Buffer.from("PRI * HTTP/2.0\r\n"))
    }
  },
  {
    name: "slowloris: HEADERS without END_HEADERS, never continued",
    expect: { goaway: H2Error.ENHANCE_YOUR_CALM, closes: true, after: handshakeTimeoutMs },
    gaps: {
      "grpc-js": {
        error: "node has no deadline for an open header block",
        end: "node has no deadline for an open header block: the connection is held forever"
      }
    },
    attack: async (a) => {
      a.write(frame(FrameType.HEADERS, 0, 1, Buffer.from(grpcRequestHeaderBlock(RANGE, "x"))))
    }
  },
  {
    name: "slowloris: the server's SETTINGS never ACKed",
    ackSettings: false,
    expect: { goaway: H2Error.SETTINGS_TIMEOUT, closes: true, after: handshakeTimeoutMs },
    gaps: {
      "grpc-js": {
        error: "node never times out its SETTINGS (RFC 9113 §6.5.3 allows SETTINGS_TIMEOUT)",
        end: "node never times out its SETTINGS"
      }
    },
    attack: async () => {}
  },
  {
    name: "stream id going backwards (HEADERS on 3 after 5)",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: {
      "grpc-js": {
        error: "nghttp2 ignores HEADERS on a lower, unused stream id once the higher one is closed",
        end: "nghttp2 ignores it: the connection lives on"
      }
    },
    attack: async (a) => {
      a.write(grpcHeaders(5, RANGE))
      a.write(grpcData(5, RANGE_K))
      await a.until(() => (a.headers.get(5)?.length ?? 0) >= 2, CLOSE_BOUND_MS, "the answer on stream 5")
      a.write(grpcHeaders(3, RANGE))
      a.write(grpcData(3, RANGE_K))
    }
  },
  {
    name: "HEADERS on an even (server-initiated) stream id",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(grpcHeaders(2, RANGE, true))
    }
  },
  {
    name: "DATA on stream 0",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.DATA, 0, 0, Buffer.alloc(4)))
    }
  },
  {
    name: "SETTINGS_ENABLE_PUSH = 2",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(settingsFrame([[Setting.ENABLE_PUSH, 2]]))
    }
  },
  {
    name: "SETTINGS_INITIAL_WINDOW_SIZE = 2^31 (over 2^31-1)",
    expect: { goaway: H2Error.FLOW_CONTROL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(settingsFrame([[Setting.INITIAL_WINDOW_SIZE, 0x80000000]]))
    }
  },
  {
    name: "SETTINGS_MAX_FRAME_SIZE = 100 (under 16384)",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(settingsFrame([[Setting.MAX_FRAME_SIZE, 100]]))
    }
  },
  {
    name: "SETTINGS frame whose length is not a multiple of 6",
    expect: { goaway: H2Error.FRAME_SIZE_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)))
    }
  },
  {
    name: "SETTINGS on a stream other than 0",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(frame(FrameType.SETTINGS, 0, 1))
    }
  },
  {
    name: "SETTINGS ACK with a payload",
    expect: { goaway: H2Error.FRAME_SIZE_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(6)))
    }
  },
  {
    name: "PING of 7 bytes",
    expect: { goaway: H2Error.FRAME_SIZE_ERROR, closes: true },
    gaps: { "grpc-js": { end: grpcJsKeepsConnection } },
    attack: async (a) => {
      a.write(frame(FrameType.PING, 0, 0, Buffer.alloc(7)))
    }
  },
  {
    name: "WINDOW_UPDATE of 0 on the connection",
    expect: { goaway: H2Error.PROTOCOL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(windowUpdateFrame(0, 0))
    }
  },
  {
    name: "WINDOW_UPDATE overflowing the connection window past 2^31-1",
    expect: { goaway: H2Error.FLOW_CONTROL_ERROR, closes: true },
    gaps: { "grpc-js": { error: nodeInternalError } },
    attack: async (a) => {
      a.write(windowUpdateFrame(0, 0x7fffffff))
    }
  },
  {
    name: "WINDOW_UPDATE overflowing a stream window past 2^31-1",
    expect: { rst: { stream: 1, code: H2Error.FLOW_CONTROL_ERROR }, closes: false },
    gaps: {
      "grpc-js": {
        error: "node follows the RST_STREAM with GOAWAY INTERNAL_ERROR",
        end: "node follows the RST_STREAM with GOAWAY INTERNAL_ERROR and closes the whole connection"
      }
    },
    attack: async (a) => {
      // a Watch stream stays open, so the window update lands on a live stream
      a.write(grpcHeaders(1, "/etcdserverpb.Watch/Watch"))
      await sleep(50)
      a.write(windowUpdateFrame(1, 0x7fffffff))
    }
  }
]

interface Outcome {
  readonly attacker: Attacker
  readonly closed: boolean
  /** for `closes: false`: a PING sent after the error got its ACK */
  readonly alive: boolean
  readonly during: { readonly rounds: number; readonly failures: ReadonlyArray<string> }
  readonly after: { readonly rounds: number; readonly failures: ReadonlyArray<string> }
}

const describeError = (e: Expectation): string =>
  e.rst !== undefined
    ? `RST_STREAM ${errorName(e.rst.code)} on stream ${e.rst.stream}`
    : e.goaway === "none" || e.goaway === undefined
      ? "no GOAWAY needed"
      : `GOAWAY ${errorName(e.goaway)}${e.debug === undefined ? "" : ` "${e.debug}"`}`

const runCase = async (server: HostileServer, c: Case, pki: TestPki | undefined, gaps: Gaps): Promise<Outcome> => {
  const kv = normalClient(server, pki)
  try {
    // the normal client connects before the attack, so "during" is not just "after"
    const warm = serveLoop(kv, `normal/${c.name.length}/warm`)
    expect((await warm.stop()).failures).toEqual([])
    const a = await connectAttacker({
      port: server.port,
      tls: server.tls,
      ...(c.preface === undefined ? {} : { preface: c.preface }),
      ...(c.ackSettings === undefined ? {} : { ackSettings: c.ackSettings })
    })
    try {
      if (c.preface !== false && c.ackSettings !== false) await a.handshake(CLOSE_BOUND_MS)
      const during = serveLoop(kv, `normal/${c.name.length}/during`)
      await c.attack(a)
      const e = c.expect
      // one deadline for the whole case: the server's own deadline (slowloris) plus the bound
      const gap = gaps.end !== undefined || gaps.error !== undefined
      const deadline = Date.now() + (e.after ?? 0) + (gap ? GAP_WAIT_MS : CLOSE_BOUND_MS)
      const left = () => Math.max(1, deadline - Date.now())
      // what the server does first: the error it answers with (or closing)
      await a
        .until(
          () =>
            a.isClosed ||
            (e.rst !== undefined ? a.resets.has(e.rst.stream) : a.goaway !== undefined && e.goaway !== "none"),
          left(),
          describeError(e)
        )
        .catch(() => {})
      let alive = false
      if (e.closes) await a.closedWithin(left()).catch(() => {})
      else if (!a.isClosed) {
        const acks = a.pingAcks
        a.write(pingFrame(0xa11e))
        // its own bound: the connection must live however long the error took
        alive = await a
          .until(() => a.pingAcks > acks, CLOSE_BOUND_MS, "a PING ACK")
          .then(
            () => true,
            () => false
          )
      }
      const duringResult = await during.stop()
      const after = await serveLoop(kv, `normal/${c.name.length}/after`).stop()
      return { attacker: a, closed: a.isClosed, alive, during: duringResult, after }
    } finally {
      a.destroy()
    }
  } finally {
    kv.close()
  }
}

const suite = (transport: Transport, tls: boolean, selected: ReadonlyArray<Case>) =>
  describe(`hostile HTTP/2 peers, ${transport}${tls ? " over TLS (ALPN h2)" : ""}`, () => {
    let server: HostileServer
    let pki: TestPki | undefined
    beforeAll(async () => {
      pki = tls ? makeTestPki() : undefined
      server = await startHostileServer(transport, pki === undefined ? {} : { pki })
    })
    afterAll(async () => {
      await server?.close()
      pki?.dispose()
    })

    for (const c of selected) {
      describe(c.name, () => {
        const gaps = c.gaps?.[transport] ?? {}
        let outcome: Outcome
        beforeAll(async () => {
          outcome = await runCase(server, c, pki, gaps)
        }, 120_000)

        const errorTitle = `answers with ${describeError(c.expect)}`
        ;(gaps.error === undefined ? it : it.fails)(
          gaps.error === undefined ? errorTitle : `${errorTitle} — node does not: ${gaps.error}`,
          () => {
            const a = outcome.attacker
            const e = c.expect
            if (e.rst !== undefined) {
              expect(a.resets.get(e.rst.stream), `RST_STREAM on ${e.rst.stream}`).toBe(e.rst.code)
              expect(a.goaway, "no GOAWAY for a stream error").toBeUndefined()
            } else if (e.goaway !== undefined && e.goaway !== "none") {
              expect(a.goaway?.code, `GOAWAY (got ${JSON.stringify(a.goaways)})`).toBe(e.goaway)
              if (e.debug !== undefined) expect(a.goaway?.debug).toBe(e.debug)
            } else {
              // nothing to say before a preface, or to a peer that does not read: only the end counts
              if (a.goaway !== undefined) expect(a.goaway.code).not.toBe(H2Error.NO_ERROR)
            }
            expect(a.readError, "the server's frames parse").toBeUndefined()
          }
        )

        const endTitle = c.expect.closes
          ? `closes the connection (within ${Math.round(((c.expect.after ?? 0) + CLOSE_BOUND_MS) / 1000)} s: not hanging)`
          : "keeps the connection (a PING is answered)"
        ;(gaps.end === undefined ? it : it.fails)(
          gaps.end === undefined ? endTitle : `${endTitle} — node does not: ${gaps.end}`,
          () => {
            if (c.expect.closes) expect(outcome.closed).toBe(true)
            else expect(outcome.alive).toBe(true)
          }
        )

        it("serves a normal client during and after", () => {
          expect(outcome.during.failures).toEqual([])
          expect(outcome.during.rounds).toBeGreaterThan(0)
          expect(outcome.after.failures).toEqual([])
          expect(outcome.after.rounds).toBeGreaterThan(0)
        })
      })
    }
  })

// memory of the whole test process (server and clients share it): a forced GC first, so the
// figure is live data, not garbage waiting for collection
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void
const liveBytes = (): number => {
  gc()
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}

/**
 * Window exhaustion: attackers open Watch streams on a prefix and never read (no WINDOW_UPDATE,
 * not even the socket) while a normal client writes 32 KiB values under that prefix. If the
 * server buffered what it owes them it would hold WATCHERS × PUTS × 32 KiB; it must hold a
 * small, fixed amount per stream (flow control back-pressure, the watch server's own buffer).
 * No error is due: not reading is legal HTTP/2.
 */
const windowExhaustion = (transport: Transport) =>
  describe(`window exhaustion, ${transport}`, () => {
    const CONNECTIONS = 4
    const STREAMS = 10
    const PUTS = 200
    const VALUE = 32 * 1024
    let server: HostileServer
    beforeAll(async () => {
      server = await startHostileServer(transport)
    })
    afterAll(async () => {
      await server?.close()
    })

    it("Watch streams that never read: bounded server memory, other clients served, the streams end when they go", async () => {
      const kv = normalClient(server)
      const attackers: Array<Attacker> = []
      try {
        const warm = await serveLoop(kv, "we/warm").stop()
        expect(warm.failures).toEqual([])
        const before = liveBytes()
        // WatchRequest{create_request{key "w/", range_end "w0"}}
        const create = Buffer.from([0x0a, 0x08, 0x0a, 0x02, 0x77, 0x2f, 0x12, 0x02, 0x77, 0x30])
        for (let c = 0; c < CONNECTIONS; c++) {
          const a = await connectAttacker({ port: server.port })
          attackers.push(a)
          await a.handshake(CLOSE_BOUND_MS)
          for (let s = 0; s < STREAMS; s++) {
            a.write(grpcHeaders(2 * s + 1, "/etcdserverpb.Watch/Watch"))
            a.write(grpcData(2 * s + 1, create, false))
          }
        }
        await eventually(() => server.server.calls().streams >= CONNECTIONS * STREAMS, CLOSE_BOUND_MS, "the watches")
        for (const a of attackers) a.socket.pause()
        const during = serveLoop(kv, "we/during")
        const value = Buffer.alloc(VALUE, 0x61)
        for (let i = 0; i < PUTS; i++) {
          const put = await unaryCall(kv, "Put", { key: Buffer.from(`w/${i % 10}`), value })
          expect(put.ok).toBe(true)
        }
        const held = liveBytes() - before
        const owed = CONNECTIONS * STREAMS * PUTS * VALUE // 262 MB
        // a fixed cost per stream (measured on grpc-js: ~0.3 MB each) plus the normal client's
        // traffic; a quarter of what is owed still says "bounded", not "buffered"
        expect(held, `held ${held} bytes of ${owed} owed`).toBeLessThan(owed / 4)
        const r = await during.stop()
        expect(r.failures).toEqual([])
        expect(r.rounds).toBeGreaterThan(0)
        for (const a of attackers) a.destroy()
        // the server lets go of every stream of the gone connections
        await eventually(() => server.server.calls().streams === 0, CLOSE_BOUND_MS, "the watches to end")
        const after = await serveLoop(kv, "we/after").stop()
        expect(after.failures).toEqual([])
      } finally {
        for (const a of attackers) a.destroy()
        kv.close()
      }
    })
  })

/** Rapid reset also must not leave calls behind: every reset stream's call ends. */
const rapidResetCalls = (transport: Transport) =>
  describe(`rapid reset leaves no calls behind, ${transport}`, () => {
    let server: HostileServer
    beforeAll(async () => {
      server = await startHostileServer(transport)
    })
    afterAll(async () => {
      await server?.close()
    })
    it("after 20 000 HEADERS + RST_STREAM the server has no call in flight", async () => {
      const a = await connectAttacker({ port: server.port })
      try {
        await a.handshake(CLOSE_BOUND_MS)
        const block = Buffer.from(grpcRequestHeaderBlock("/etcdserverpb.Watch/Watch", "x"))
        await flood(a, 20_000, (i) =>
          Buffer.concat([
            frame(FrameType.HEADERS, Flag.END_HEADERS, 2 * i + 1, block),
            rstStreamFrame(2 * i + 1, H2Error.CANCEL)
          ])
        )
      } finally {
        a.destroy()
      }
      await eventually(
        () => {
          const c = server.server.calls()
          return c.unary === 0 && c.streams === 0
        },
        CLOSE_BOUND_MS,
        "the calls to end"
      )
    })
  })

/** over TLS the same defences hold, plus a TLS handshake that never starts */
const TLS_CASES = new Set([
  "HPACK index past the static and dynamic tables",
  "rapid reset (HEADERS + RST_STREAM, up to 20 000 streams)",
  "slowloris: HEADERS without END_HEADERS, never continued",
  "DATA frame over SETTINGS_MAX_FRAME_SIZE (16385)"
])

for (const transport of transports) {
  suite(transport, false, cases)
  suite(
    transport,
    true,
    cases.filter((c) => TLS_CASES.has(c.name))
  )
  windowExhaustion(transport)
  rapidResetCalls(transport)
}

describe("TLS handshake never started", () => {
  for (const transport of transports) {
    const gap =
      transport === "grpc-js" && !cmuxHasDeadline
        ? "node:tls's own handshakeTimeout is 120 s; cmux adds none"
        : undefined
    ;(gap === undefined ? it : it.fails)(
      `${transport}: a TCP connection that sends nothing is closed${gap === undefined ? "" : ` — node does not within the bound: ${gap}`}`,
      async () => {
        const pki = makeTestPki()
        const server = await startHostileServer(transport, { pki })
        const s = net.connect(server.port, "127.0.0.1")
        try {
          const closed = new Promise<boolean>((resolve) => {
            s.on("error", () => {})
            s.once("close", () => resolve(true))
            setTimeout(() => resolve(false), handshakeTimeoutMs + (gap === undefined ? CLOSE_BOUND_MS : GAP_WAIT_MS))
          })
          expect(await closed).toBe(true)
        } finally {
          s.destroy()
          await server.close()
          pki.dispose()
        }
      },
      120_000
    )
  }
})
