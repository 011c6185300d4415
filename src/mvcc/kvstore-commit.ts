/**
 * Commits: a staged revision becomes visible (`rev()` advances) and the commit listeners see its
 * events once its backend batch is durable, always in revision order — batches become durable in
 * staging order, so durability of revision r implies every earlier one. The wait is the backend
 * ticket's callback (`afterDurable`), not a fiber; its outcome is an Exit, or a PendingWrite
 * completed by that callback after the commit.
 */
import { Exit } from "effect"
import type { WriteTicket } from "../backend/backend.js"
import type { EtcdError } from "../errors.js"
import type { KvStore } from "./kvstore-state.js"
import { PendingWrite, type WriteResult } from "./pending-write.js"
import { TRACE_PUT_EVENT, traceStamp } from "../debug/put-event-trace.js"

/** Commits every staged revision up to r (all durable), in order, telling the listeners. */
const commitThrough = (s: KvStore, r: number): void => {
  const pending = s.pending
  let errors: Array<unknown> | undefined
  while (pending.length > 0 && pending[0]!.rev <= r) {
    const p = pending.shift()!
    s.committedRev = p.rev
    if (TRACE_PUT_EVENT) traceStamp("committed", p.rev)
    for (const listener of s.listeners) {
      try {
        listener(p.rev, p.events)
      } catch (e) {
        ;(errors ??= []).push(e)
      }
    }
  }
  if (errors !== undefined) throw new AggregateError(errors, "commit listener failed")
}

/** commitThrough(rev); a throwing listener stops the store (logged), its error is returned. */
const commitNow = (s: KvStore, rev: number): { readonly defect: unknown } | undefined => {
  try {
    commitThrough(s, rev)
    return undefined
  } catch (e) {
    // a watcher may have missed this acknowledged revision: serving on would break the watch
    // guarantee, so the store stops and the failure is a defect, not a log line
    s.fail()
    s.logError("mvcc: commit listener threw; store stopped", e)
    return { defect: e }
  }
}

/**
 * The outcome of `result` once the staged batch's ticket settles: committed through `rev` (0:
 * nothing new) on success, the store stopped on failure. Runs in the backend's settle callback,
 * which comes in staging order: commits, and so watchers, stay in revision order.
 */
export const afterDurable = <A>(s: KvStore, ticket: WriteTicket, rev: number, result: A): WriteResult<A, EtcdError> => {
  let sync: Exit.Exit<A, EtcdError> | undefined
  let pending: PendingWrite<A, EtcdError> | undefined
  ticket.onDone((error) => {
    let exit: Exit.Exit<A, EtcdError>
    if (error !== undefined) {
      s.logError("mvcc: backend write failed; store stopped", error)
      exit = Exit.fail(s.backendFailed(error))
    } else {
      const e = rev > 0 ? commitNow(s, rev) : undefined
      exit = e === undefined ? Exit.succeed(result) : Exit.die(e.defect)
    }
    if (pending === undefined) sync = exit
    else pending.complete(exit)
  })
  if (sync !== undefined) return sync
  pending = new PendingWrite<A, EtcdError>()
  return pending
}
