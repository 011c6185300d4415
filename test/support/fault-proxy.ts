/**
 * A TCP proxy that breaks connections on purpose: the client talks to the proxy, the proxy to the
 * server. `cutAll` destroys every open connection pair (both sockets, no FIN handshake: the peers see
 * a reset), `cutAfterBytes` arms a cut once that many more bytes went server → client (so a cut lands
 * in the middle of a response stream), `refuse` makes new connections fail, and `chaos` cuts at random
 * moments from a seeded generator until stopped.
 */
import * as net from "node:net"

export interface ProxyStats {
  readonly connections: number
  readonly cuts: number
  readonly bytesDown: number
  readonly bytesUp: number
}

interface Pair {
  readonly client: net.Socket
  readonly upstream: net.Socket
  /** bytes server → client still allowed before this connection is cut */
  budget: number | undefined
}

/** mulberry32: small, seedable, good enough to pick cut moments reproducibly. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export class FaultProxy {
  private readonly pairs = new Set<Pair>()
  private refusing = false
  /** budget for connections yet to come (cutAfterBytes with no open connection) */
  private nextBudget: number | undefined
  /** draws a budget for every new connection (cutEachConnection) */
  private budgetFor: (() => number) | undefined
  private stats_ = { connections: 0, cuts: 0, bytesDown: 0, bytesUp: 0 }

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
    private target: { host: string; port: number }
  ) {}

  static start(targetHost: string, targetPort: number): Promise<FaultProxy> {
    return new Promise((resolve, reject) => {
      const server = net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        const proxy = new FaultProxy(server, port, { host: targetHost, port: targetPort })
        server.on("connection", (socket) => proxy.accept(socket))
        resolve(proxy)
      })
    })
  }

  /** "127.0.0.1:port" */
  get endpoint(): string {
    return `127.0.0.1:${this.port}`
  }

  get stats(): ProxyStats {
    return { ...this.stats_ }
  }

  get openConnections(): number {
    return this.pairs.size
  }

  retarget(host: string, port: number): void {
    this.target = { host, port }
  }

  private accept(client: net.Socket): void {
    if (this.refusing) {
      client.resetAndDestroy()
      return
    }
    this.stats_.connections++
    client.setNoDelay(true)
    const upstream = net.connect({ host: this.target.host, port: this.target.port })
    upstream.setNoDelay(true)
    const budget = this.nextBudget ?? this.budgetFor?.()
    this.nextBudget = undefined
    const pair: Pair = { client, upstream, budget }
    this.pairs.add(pair)
    const drop = () => {
      if (!this.pairs.delete(pair)) return
      client.destroy()
      upstream.destroy()
    }
    client.on("error", drop)
    upstream.on("error", drop)
    client.on("close", drop)
    upstream.on("close", drop)
    client.on("data", (chunk: Buffer) => {
      this.stats_.bytesUp += chunk.length
      if (!upstream.write(chunk)) {
        client.pause()
        upstream.once("drain", () => client.resume())
      }
    })
    upstream.on("data", (chunk: Buffer) => {
      if (pair.budget !== undefined) {
        if (chunk.length >= pair.budget) {
          // Forward only part of the chunk, then cut: the client sees a frame torn in half.
          const part = chunk.subarray(0, pair.budget)
          pair.budget = undefined
          this.stats_.bytesDown += part.length
          upstream.pause() // nothing more goes through before the cut
          // Cut once the partial chunk is flushed, or soon anyway (a dead socket never calls back).
          const cut = setTimeout(() => this.cutPair(pair), 20)
          client.write(part, () => {
            clearTimeout(cut)
            this.cutPair(pair)
          })
          return
        }
        pair.budget -= chunk.length
      }
      this.stats_.bytesDown += chunk.length
      if (!client.write(chunk)) {
        upstream.pause()
        client.once("drain", () => upstream.resume())
      }
    })
  }

  private cutPair(pair: Pair): void {
    if (!this.pairs.delete(pair)) return
    pair.client.resetAndDestroy()
    pair.upstream.resetAndDestroy()
    this.stats_.cuts++
  }

  /** Destroys every open connection pair; returns how many were cut. */
  cutAll(): number {
    const n = this.pairs.size
    for (const pair of [...this.pairs]) {
      this.pairs.delete(pair)
      pair.client.resetAndDestroy()
      pair.upstream.resetAndDestroy()
    }
    if (n > 0) this.stats_.cuts++
    return n
  }

  /** Cuts each open connection (or else the next one) once `bytes` more bytes went server → client. */
  cutAfterBytes(bytes: number): void {
    const budget = Math.max(1, Math.floor(bytes))
    if (this.pairs.size === 0) this.nextBudget = budget
    for (const pair of this.pairs) pair.budget = budget
  }

  /**
   * Every new connection is cut after a random number of bytes server → client, drawn uniformly
   * from [minBytes, maxBytes] with a seeded generator. Returns a function that stops it.
   */
  cutEachConnection(options: {
    readonly seed: number
    readonly minBytes: number
    readonly maxBytes: number
  }): () => void {
    const random = seededRandom(options.seed)
    const draw = () => Math.floor(options.minBytes + random() * (options.maxBytes - options.minBytes))
    this.budgetFor = draw
    for (const pair of this.pairs) if (pair.budget === undefined) pair.budget = draw()
    return () => {
      if (this.budgetFor === draw) this.budgetFor = undefined
    }
  }

  /** While refusing, new connections are reset at once (a server that is down). */
  refuse(on: boolean): void {
    this.refusing = on
  }

  /**
   * Cuts at random moments: every `minMs..maxMs` either cuts now or arms a cut after a random number
   * of bytes (up to `maxBytes`). Returns a function that stops the chaos.
   *
   * `progress` (a count the client's deliveries raise) makes it a fair adversary on any machine: a
   * moment comes only once the count moved since the last cut, so each connection delivers
   * something before it is cut. Without it, a machine slow enough that reconnecting takes longer
   * than `maxMs` has every connection cut before its first response (nothing is ever delivered,
   * which proves nothing about resuming).
   */
  chaos(options: {
    readonly seed: number
    readonly minMs: number
    readonly maxMs: number
    readonly maxBytes?: number
    readonly progress?: () => number
  }): () => void {
    const random = seededRandom(options.seed)
    let timer: NodeJS.Timeout | undefined
    let stopped = false
    let atLastCut: number | undefined
    const schedule = () => {
      if (stopped) return
      const delay = options.minMs + random() * (options.maxMs - options.minMs)
      timer = setTimeout(() => {
        const now = options.progress?.()
        if (now === undefined || now !== atLastCut) {
          atLastCut = now
          if (options.maxBytes !== undefined && random() < 0.5) this.cutAfterBytes(1 + random() * options.maxBytes)
          else this.cutAll()
        }
        schedule()
      }, delay)
    }
    schedule()
    return () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      this.nextBudget = undefined
      for (const pair of this.pairs) pair.budget = undefined
    }
  }

  async close(): Promise<void> {
    this.cutAll()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
