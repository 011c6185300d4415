/**
 * etcd's eventBatch and watcherBatch (watcher_group.go): the events one watcher gets in one response.
 * A batch holds whole revisions, at most `maxRevs` distinct ones (watchBatchMaxRevs = 1000);
 * `moreRev` is the first revision left out, where the watcher resumes.
 */
import type { Event } from "../mvcc/key-value.js"
import type { WatcherGroup } from "./watcher-group.js"
import type { Watcher } from "./watcher.js"

/** Distinct revisions per catch-up response (etcd's watchBatchMaxRevs). */
export const WATCH_BATCH_MAX_REVS = 1000

export class EventBatch {
  readonly evs: Array<Event> = []
  /** distinct revisions in `evs` */
  revs = 0
  /** first revision not added because the batch was full; 0 while it is not */
  moreRev = 0

  constructor(readonly maxRevs: number = WATCH_BATCH_MAX_REVS) {}

  /** A batch of one revision's events (a synced watcher's undelivered response). */
  static of(evs: ReadonlyArray<Event>): EventBatch {
    const eb = new EventBatch()
    for (const ev of evs) eb.evs.push(ev)
    eb.revs = 1
    return eb
  }

  /** Events must come in (revision, sub) order. A revision is never split. */
  add(ev: Event): void {
    if (this.revs > this.maxRevs) return
    const n = this.evs.length
    if (n === 0) {
      this.revs = 1
      this.evs.push(ev)
      return
    }
    const evRev = ev.kv.modRevision
    if (evRev > this.evs[n - 1]!.kv.modRevision) {
      this.revs++
      if (this.revs > this.maxRevs) {
        this.moreRev = evRev
        return
      }
    }
    this.evs.push(ev)
  }

  get full(): boolean {
    return this.moreRev !== 0
  }
}

/** Batches per watcher, for one revision (notify) or one catch-up read. */
export type WatcherBatch = Map<Watcher, EventBatch>

/**
 * newWatcherBatch: events → the watchers of `group` they match, skipping events older than a
 * watcher's minRev. `keyOf` gives an event's key as the latin1 string the group is keyed by.
 */
export const newWatcherBatch = (
  group: WatcherGroup,
  events: ReadonlyArray<Event>,
  keyOf: (ev: Event) => string,
  maxRevs: number = WATCH_BATCH_MAX_REVS,
  into: WatcherBatch = new Map()
): WatcherBatch => {
  if (group.size === 0) return into
  for (const ev of events) {
    const rev = ev.kv.modRevision
    group.forEachMatch(keyOf(ev), (w) => {
      if (rev < w.minRev) return
      let eb = into.get(w)
      if (eb === undefined) {
        eb = new EventBatch(maxRevs)
        into.set(w, eb)
      }
      eb.add(ev)
    })
  }
  return into
}
