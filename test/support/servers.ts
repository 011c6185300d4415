/**
 * The servers the client suites run against. Each suite does
 *   describe.each(serverTargets)("... ($name)", (target) => { ... target.start() ... })
 * Targets: real etcd 3.4 (a child process) and our own server (in-process, LMDB in a temp dir,
 * a fixed random loopback port so a restart comes back at the same address). Another server is
 * one more `ServerTarget` here.
 */
import { Context, type Duration, Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { layerMember, parseGoDuration } from "../../src/server/index.js"
import { WatchableStore } from "../../src/watch/watchable-store.js"
import { EtcdProcess, type EtcdOptions, etcdAvailable, requireEtcd } from "./etcd.js"
import { freePort } from "./ports.js"

export interface TestServer {
  readonly name: string
  /** "127.0.0.1:port" of the gRPC listener */
  readonly endpoint: string
  /** crash-stop (SIGKILL), keeping data and ports */
  stop(): Promise<void>
  /** start again after `stop`, same data and ports; resolves when serving */
  start(): Promise<void>
  /** stop + start, with `downMs` of downtime in between */
  restart(downMs?: number): Promise<void>
  /** number of server-side watchers (etcd: etcd_debugging_mvcc_watcher_total), when observable */
  watcherCount(): Promise<number | undefined>
  /** number of server-side watch streams, when observable */
  watchStreamCount(): Promise<number | undefined>
  dispose(): Promise<void>
}

export interface ServerOptions {
  /** periodic progress notification interval, a Go duration like "300ms" (etcd: --experimental-watch-progress-notify-interval) */
  readonly progressNotifyInterval?: string
  /** --max-request-bytes (the watch fragment threshold is this + 512 KiB) */
  readonly maxRequestBytes?: number
}

export interface ServerTarget {
  readonly name: string
  /** false: the suite skips (unless the target is required, then it runs and fails) */
  readonly enabled: boolean
  start(options?: ServerOptions): Promise<TestServer>
}

/**
 * A TestServer from how to start and stop one member that keeps its data in `dataDir` (removed on
 * dispose); restart is stop, `downMs` of downtime, start.
 */
export const restartableServer = (server: {
  readonly endpoint: string
  readonly dataDir: string
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
  readonly watcherCount?: () => Promise<number | undefined>
  readonly watchStreamCount?: () => Promise<number | undefined>
}): TestServer => ({
  name: "etcd-effect",
  endpoint: server.endpoint,
  stop: server.stop,
  start: server.start,
  restart: async (downMs = 0) => {
    await server.stop()
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs))
    await server.start()
  },
  watcherCount: server.watcherCount ?? (async () => undefined),
  watchStreamCount: server.watchStreamCount ?? (async () => undefined),
  dispose: async () => {
    await server.stop()
    fs.rmSync(server.dataDir, { recursive: true, force: true })
  }
})

const etcdServer = (etcd: EtcdProcess): TestServer => ({
  name: "etcd",
  endpoint: etcd.endpoint,
  stop: () => etcd.stop(),
  start: () => etcd.startProcess(),
  restart: (downMs) => etcd.restart(downMs),
  watcherCount: () => etcd.metric("etcd_debugging_mvcc_watcher_total"),
  watchStreamCount: () => etcd.metric("etcd_debugging_mvcc_watch_stream_total"),
  dispose: () => etcd.dispose()
})

export const etcdTarget: ServerTarget = {
  name: "etcd 3.4",
  enabled: etcdAvailable || requireEtcd,
  start: async (options = {}) => {
    const etcdOptions: EtcdOptions = {
      ...(options.progressNotifyInterval === undefined
        ? {}
        : { progressNotifyInterval: options.progressNotifyInterval }),
      ...(options.maxRequestBytes === undefined
        ? {}
        : { extraArgs: ["--max-request-bytes", String(options.maxRequestBytes)] })
    }
    return etcdServer(await EtcdProcess.start(etcdOptions))
  }
}

const goDuration = (text: string): Duration.Duration => {
  const d = parseGoDuration(text)
  if (d === undefined) throw new Error(`bad duration ${text}`)
  return d
}

/**
 * Our server (src/server), in this process; `stop` closes its scope (a graceful shutdown: watch
 * streams end with Unavailable "etcdserver: server stopped"). Its WatchableStore's gauges give
 * the watcher and stream counts. (test/server/support/etcd-effect-target.ts is the same server as
 * a child process killed with SIGKILL, without those counts.)
 */
export const ourTarget: ServerTarget = {
  name: "etcd-effect",
  enabled: true,
  start: async (options = {}) => {
    const root = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir()
    const dataDir = fs.mkdtempSync(path.join(root, "etcd-effect-server-test-"))
    const port = await freePort()
    const layer = layerMember({
      dataDir,
      listenClientUrls: [`http://127.0.0.1:${port}`],
      ...(options.progressNotifyInterval === undefined
        ? {}
        : { progressNotifyInterval: goDuration(options.progressNotifyInterval) }),
      ...(options.maxRequestBytes === undefined ? {} : { maxRequestBytes: options.maxRequestBytes })
    })
    let running: { scope: Scope.CloseableScope; watchable: Context.Tag.Service<WatchableStore> } | undefined
    const start = async () => {
      if (running !== undefined) return
      const scope = await Effect.runPromise(Scope.make())
      const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
      running = { scope, watchable: Context.get(ctx, WatchableStore) }
    }
    const stop = async () => {
      const r = running
      running = undefined
      if (r !== undefined) await Effect.runPromise(Scope.close(r.scope, Exit.void))
    }
    await start()
    return restartableServer({
      endpoint: `127.0.0.1:${port}`,
      dataDir,
      start,
      stop,
      watcherCount: async () => running?.watchable.watcherCount(),
      watchStreamCount: async () => running?.watchable.streamCount()
    })
  }
}

/** Every server the client must work against. */
export const serverTargets: ReadonlyArray<ServerTarget> = [etcdTarget, ourTarget]
