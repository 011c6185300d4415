/**
 * Start-up failures of the server, in-process: each is one `ServeError`/`BackendError` whose
 * message is the single line the program prints (serve-process.test.ts checks the printing).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Cause, Effect, Exit, Logger, LogLevel } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { serve, type ServerConfig } from "../../src/server/index.js"
import { tempDir } from "./support/process.js"

/** Starts a member and stops it again; returns its start-up failure (tag and message), if any. */
const attempt = async (options: Partial<ServerConfig>) => {
  const exit = await Effect.runPromiseExit(
    Effect.scoped(serve(options)).pipe(Logger.withMinimumLogLevel(LogLevel.None))
  )
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some"
    ? { tag: failure.value._tag, message: failure.value.message }
    : { tag: "Die", message: Cause.pretty(exit.cause) }
}

describe("start-up failures", () => {
  const dirs: Array<string> = []
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })
  const dir = () => {
    const d = tempDir()
    dirs.push(d)
    return d
  }

  it("a port in use", async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", () => resolve()))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      expect(await attempt({ listenClientUrls: [`http://127.0.0.1:${port}`] })).toEqual({
        tag: "ServeError",
        message: `listen tcp 127.0.0.1:${port}: bind: address already in use`
      })
    } finally {
      blocker.close()
    }
  })

  it("URLs it cannot serve", async () => {
    expect(await attempt({ listenClientUrls: ["https://127.0.0.1:0"] })).toEqual({
      tag: "ServeError",
      message:
        "TLS key/cert (--cert-file, --key-file) must be provided for client url https://127.0.0.1:0 with HTTPS scheme"
    })
    expect(await attempt({ listenClientUrls: ["unix:///tmp/etcd.sock"] })).toMatchObject({ tag: "ServeError" })
    expect(await attempt({ listenClientUrls: ["127.0.0.1:2379"] })).toMatchObject({ tag: "ServeError" })
    expect(await attempt({ listenClientUrls: [] })).toEqual({
      tag: "ServeError",
      message: "--listen-client-urls is empty"
    })
    expect(await attempt({ listenClientUrls: ["http://127.0.0.1:0"], advertiseClientUrls: ["nope"] })).toMatchObject({
      tag: "ServeError"
    })
  })

  it("a data dir held by another member, or not ours", async () => {
    const held = dir()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* serve({ dataDir: held, listenClientUrls: ["http://127.0.0.1:0"] })
          const second = yield* Effect.promise(() =>
            attempt({ dataDir: held, listenClientUrls: ["http://127.0.0.1:0"] })
          )
          expect(second?.tag).toBe("BackendError")
          expect(second?.message.split("\n")).toHaveLength(1)
        })
      ).pipe(Logger.withMinimumLogLevel(LogLevel.None))
    )
    const foreign = dir()
    fs.writeFileSync(path.join(foreign, "something-else"), "not etcd")
    const notOurs = await attempt({ dataDir: foreign, listenClientUrls: ["http://127.0.0.1:0"] })
    expect(notOurs?.tag).toBe("BackendError")
    expect(notOurs?.message.split("\n")).toHaveLength(1)
  })
})
