/**
 * `snapshot save <filename>`, as etcdctl's (clientv3/snapshot SaveWithVersion): one endpoint only;
 * the stream goes to `<filename>.part`, which must end with a SHA-256 (a size 32 past a multiple of
 * 512), is synced and then renamed over `<filename>`; the .part file never stays behind. Failures
 * print `Error: …` and exit 5 (etcdctl's ExitInterrupted); bad arguments exit 128.
 */
import * as fs from "node:fs"
import { Cause, Console, Effect, Layer, Stream } from "effect"
import type { ParsedRun } from "../flags/parse.js"
import { clientSettings } from "./client-settings.js"
import { clientOptions, usage } from "./global.js"
import { write } from "./output.js"
import { UsageError } from "./usage.js"
import { hasChecksum } from "../../server/snapshot/snapshot-file.js"

const EXIT_INTERRUPTED = 5

const goErrno = (e: unknown): string => {
  const err = e as { code?: string; syscall?: string; path?: string; message?: string }
  const text: Record<string, string> = {
    ENOENT: "no such file or directory",
    EACCES: "permission denied",
    EISDIR: "is a directory",
    ENOTDIR: "not a directory",
    ENOSPC: "no space left on device"
  }
  const why = err.code === undefined ? undefined : text[err.code]
  return why === undefined ? String(err.message ?? e) : `${err.syscall ?? "open"} ${err.path ?? ""}: ${why}`
}

export const runSnapshotSave = (p: ParsedRun): Effect.Effect<void> => {
  if (p.args.length !== 1) return usage(new UsageError("snapshot save expects one argument"))
  const s = clientSettings(p)
  if (s instanceof UsageError) return usage(s)
  const file = p.args[0]!
  const part = `${file}.part`
  if (s.endpoints.length !== 1) {
    return fail(`snapshot must be requested to one selected node, not multiple [${s.endpoints.join(" ")}]`)
  }
  const save = Effect.gen(function* () {
    const { EtcdClient } = yield* Effect.promise(() => import("../../client/index.js"))
    const fd = yield* Effect.try({
      try: () => fs.openSync(part, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600),
      catch: (e) => new Error(`could not open ${part} (${goErrno(e)})`)
    })
    let size = 0
    let version = ""
    const body = Effect.flatMap(EtcdClient, (client) =>
      Stream.runForEach(client.maintenance.snapshot(), (piece) =>
        Effect.try({
          try: () => {
            fs.writeSync(fd, piece.blob)
            size += piece.blob.byteLength
            if (piece.version !== "") version = piece.version
          },
          catch: (e) => new Error(`could not write snapshot: ${goErrno(e)}`)
        })
      )
    ).pipe(
      Effect.provide(
        Effect.map(Effect.try({ try: () => clientOptions(s, true), catch: (e) => e as Error }), (options) =>
          EtcdClient.layer(options)
        ).pipe(Layer.unwrapEffect)
      )
    )
    yield* Effect.ensuring(
      Effect.gen(function* () {
        yield* body
        if (!hasChecksum(size)) return yield* Effect.fail(new Error(`sha256 checksum not found [bytes: ${size}]`))
        yield* Effect.try({
          try: () => fs.fsyncSync(fd),
          catch: (e) => new Error(`could not fsync snapshot: ${goErrno(e)}`)
        })
      }),
      Effect.sync(() => fs.closeSync(fd))
    )
    yield* Effect.try({
      try: () => fs.renameSync(part, file),
      catch: (e) => new Error(`could not rename ${part} to ${file} (${goErrno(e)})`)
    })
    write(`Snapshot saved at ${file}\n`)
    if (version !== "") write(`Server version ${version}\n`)
  })
  return save.pipe(
    Effect.ensuring(Effect.sync(() => fs.rmSync(part, { force: true }))),
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      const e = Cause.squash(cause)
      return fail(typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e))
    })
  )
}

const fail = (message: string): Effect.Effect<void> =>
  Console.error(`Error: ${message}`).pipe(
    Effect.zipRight(
      Effect.sync(() => {
        process.exitCode = EXIT_INTERRUPTED
      })
    )
  )
