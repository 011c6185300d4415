/**
 * A batch of the LMDB backend from staging to durability: its place in the staging order, its WAL
 * record (the one copy of its ops) and its waiters. It is its own WriteTicket (`writeNow`), and
 * `awaitBatch` is the same wait as an Effect (`write`). A batch settles once: done when its WAL
 * group is fdatasync'ed, failed when the backend fails first (lmdb-core.ts's fail-stop).
 */
import { Effect } from "effect"
import type { BackendError, WriteOp, WriteTicket } from "./backend.js"

export class StagedBatch implements WriteTicket {
  state: "pending" | "done" | "failed" = "pending"
  error: BackendError | undefined = undefined
  waiters: Array<(error: BackendError | undefined) => void> | undefined = undefined
  constructor(
    /** staging order, over every batch (flush markers too) */
    readonly seq: number,
    /** WAL sequence number; 0 for an empty batch (a flush marker), which is not logged */
    readonly walSeq: number,
    /** the batch's ops, keys and values being views into `record` */
    readonly ops: ReadonlyArray<WriteOp>,
    readonly record: Buffer | undefined
  ) {}

  onDone(f: (error: BackendError | undefined) => void): void {
    if (this.state === "pending") (this.waiters ??= []).push(f)
    else f(this.error)
  }

  /** Done (`undefined`) or failed, once; the waiters run in registration order. */
  settle(error: BackendError | undefined): void {
    if (this.state !== "pending") return
    this.state = error === undefined ? "done" : "failed"
    this.error = error
    const ws = this.waiters
    this.waiters = undefined
    if (ws !== undefined) for (const w of ws) w(error)
  }
}

/** The batch's durability as an Effect; an interrupted wait leaves the batch's other waiters be. */
export const awaitBatch = (b: StagedBatch): Effect.Effect<void, BackendError> =>
  Effect.suspend(() => {
    if (b.state === "done") return Effect.void
    if (b.state === "failed") return Effect.fail(b.error!)
    return Effect.async<void, BackendError>((resume) => {
      const w = (error: BackendError | undefined) => resume(error === undefined ? Effect.void : Effect.fail(error))
      ;(b.waiters ??= []).push(w)
      return Effect.sync(() => {
        const ws = b.waiters
        if (ws !== undefined) {
          const i = ws.indexOf(w)
          if (i >= 0) ws.splice(i, 1)
        }
      })
    })
  })
