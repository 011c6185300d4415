/**
 * kvstore_txn.go: read and write transactions over the index and the backend "key" bucket.
 *
 * Semantics are etcd 3.4/3.5's: a write txn updates the index as it goes, so later ops of the same
 * txn see earlier ones (etcd 3.6 defers index updates to End; we follow the released 3.4/3.5
 * behaviour). Unlike etcd, a write txn can be abandoned half-way (`abort`): its index changes are
 * undone from an undo log and nothing reaches the backend, so a request that fails mid-way leaves no
 * trace. Everything here is plain synchronous code; errors are thrown as EtcdError and caught at
 * the store's Effect boundary.
 */
import type { BackendShape, WriteOp } from "../backend/backend.js"
import { Errors } from "../errors.js"
import type { KeyIndex } from "./key-index.js"
import { type Event, EventType, type KeyValue, tombstoneKv } from "./key-value.js"
import type { LeaseAttachments } from "./kv.js"
import { copyBytes, decodeKeyValue, encodeKeyValue, encodeTombstone, revToBytes } from "./kv-codec.js"
import { keyString } from "./key-string.js"
import type { Revision } from "./revision.js"
import type { TreeIndex } from "./tree-index.js"

/** etcd's mkGteRange plus nil/empty: undefined = single key, "" = every key >= key, else [key, end). */
export const rangeEndOf = (rangeEnd: Uint8Array | undefined): string | undefined => {
  if (rangeEnd === undefined || rangeEnd.length === 0) return undefined
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return ""
  return keyString(rangeEnd)
}

const EMPTY = new Uint8Array(0)

/** The store state the txns work on (kvstore.go's store fields). */
export interface StoreCore {
  readonly backend: BackendShape
  readonly index: TreeIndex
  /** the newest staged revision (writes go to headRev + 1) */
  headRev: number
  /** the newest durable, visible revision */
  committedRev: number
  /** the compaction watermark */
  compactMainRev: number
  /** lease of every live key (at head) that has one */
  readonly leases: Map<string, bigint>
  lessor: LeaseAttachments | undefined
}

export interface RangeOptions {
  readonly limit: number
  readonly rev: number
  readonly count: boolean
}

export interface RangeResult {
  readonly kvs: Array<KeyValue>
  readonly count: number
  readonly rev: number
}

const NO_OPTIONS: RangeOptions = { limit: 0, rev: 0, count: false }

/** Thrown when the backend lacks a revision the index points at: the store is corrupt. */
export class StoreCorruptError extends Error {}

/** A read view at a fixed revision (storeTxnRead). */
export class TxnRead {
  constructor(
    readonly core: StoreCore,
    private readonly readRev: number,
    private readonly firstRevision: number
  ) {}

  /** the revision this view reads at (also a no-write txn's header revision) */
  rev(): number {
    return this.readRev
  }
  /** the compaction watermark when the view opened */
  firstRev(): number {
    return this.firstRevision
  }

  range(key: string, end: string | undefined, ro: RangeOptions = NO_OPTIONS): RangeResult {
    return this.rangeKeys(key, end, this.readRev, ro)
  }

  protected rangeKeys(key: string, end: string | undefined, curRev: number, ro: RangeOptions): RangeResult {
    let rev = ro.rev
    if (rev > curRev) throw Errors.futureRev()
    if (rev <= 0) rev = curRev
    if (rev < this.core.compactMainRev) throw Errors.compacted()
    const index = this.core.index
    if (ro.count) return { kvs: [], count: index.countRevisions(key, end, rev), rev: curRev }
    const { revs, total } = index.revisions(key, end, rev, ro.limit)
    const kvs = new Array<KeyValue>(revs.length)
    for (let i = 0; i < revs.length; i++) kvs[i] = this.readKv(revs[i]!)
    return { kvs, count: total, rev: curRev }
  }

  /** The KeyValue stored at a (live) revision. */
  readKv(r: Revision): KeyValue {
    const v = this.core.backend.get("key", revToBytes(r.main, r.sub))
    if (v === undefined) throw new StoreCorruptError(`range failed to find revision pair ${r.main}.${r.sub}`)
    return decodeKeyValue(v)
  }

  put(_key: Uint8Array, _k: string, _value: Uint8Array, _lease: bigint): number {
    throw new Error("put in a read-only txn")
  }
  deleteRange(_key: string, _end: string | undefined): [number, number] {
    throw new Error("delete in a read-only txn")
  }
  changeCount(): number {
    return 0
  }
}

interface Change {
  readonly kv: KeyValue
  readonly deleted: boolean
}

type Undo =
  | { readonly kind: "put"; readonly ki: KeyIndex; readonly prev: Revision; readonly created: boolean }
  | { readonly kind: "tombstone"; readonly ki: KeyIndex; readonly prev: Revision }
  | { readonly kind: "lease"; readonly k: string; readonly prev: bigint | undefined }

type LessorOp = { readonly attach: boolean; readonly id: bigint; readonly key: Uint8Array }

/** A write txn (storeTxnWrite): every change lands at revision beginRev + 1, sub = change index. */
export class TxnWrite extends TxnRead {
  readonly beginRev: number
  private readonly changes: Array<Change> = []
  /** the backend batch */
  readonly ops: Array<WriteOp> = []
  private readonly undo: Array<Undo> = []
  private readonly lessorOps: Array<LessorOp> = []

  constructor(core: StoreCore) {
    super(core, core.headRev, core.compactMainRev)
    this.beginRev = core.headRev
  }

  override rev(): number {
    return this.beginRev
  }

  override changeCount(): number {
    return this.changes.length
  }

  override range(key: string, end: string | undefined, ro: RangeOptions = NO_OPTIONS): RangeResult {
    return this.rangeKeys(key, end, this.changes.length > 0 ? this.beginRev + 1 : this.beginRev, ro)
  }

  override readKv(r: Revision): KeyValue {
    if (r.main === this.beginRev + 1) {
      const c = this.changes[r.sub]
      if (c !== undefined) return c.kv
    }
    return super.readKv(r)
  }

  /** Puts key=value with lease; returns the revision it lands at. */
  override put(key: Uint8Array, k: string, value: Uint8Array, lease: bigint): number {
    const core = this.core
    const rev = this.beginRev + 1
    const sub = this.changes.length
    const existing = core.index.keyIndex(k)
    const g = existing === undefined ? undefined : existing.get(rev)
    let createRevision = rev
    let oldLease = 0n
    if (g !== undefined) {
      createRevision = g.created.main
      oldLease = core.leases.get(k) ?? 0n
    }
    const kv: KeyValue = {
      key: existing !== undefined ? existing.key : copyBytes(key),
      createRevision,
      modRevision: rev,
      version: (g === undefined ? 0 : g.ver) + 1,
      value: value.length === 0 ? EMPTY : copyBytes(value),
      lease
    }
    this.ops.push({ bucket: "key", key: revToBytes(rev, sub), value: encodeKeyValue(kv) })
    const prev = existing === undefined ? { main: 0, sub: 0 } : existing.modified
    const ki = core.index.put(kv.key, k, rev, sub)
    this.undo.push({ kind: "put", ki, prev, created: existing === undefined })
    this.changes.push({ kv, deleted: false })
    if (oldLease !== lease) {
      if (oldLease !== 0n) this.lessorOps.push({ attach: false, id: oldLease, key: kv.key })
      if (lease !== 0n) this.lessorOps.push({ attach: true, id: lease, key: kv.key })
      this.setLease(k, lease)
    }
    return rev
  }

  /** Deletes the live keys in the range, in key order; returns [deleted, header revision]. */
  override deleteRange(key: string, end: string | undefined): [number, number] {
    const rrev = this.changes.length > 0 ? this.beginRev + 1 : this.beginRev
    const { keys } = this.core.index.range(key, end, rrev)
    for (const ki of keys) this.delete(ki)
    const n = keys.length
    return n !== 0 || this.changes.length > 0 ? [n, this.beginRev + 1] : [0, this.beginRev]
  }

  /** Deletes one live key. */
  delete(ki: KeyIndex): void {
    const rev = this.beginRev + 1
    const sub = this.changes.length
    this.ops.push({ bucket: "key", key: revToBytes(rev, sub, true), value: encodeTombstone(ki.key) })
    const prev = ki.modified
    if (!ki.tombstone(rev, sub)) throw new StoreCorruptError(`failed to tombstone an existing key ${ki.k}`)
    this.undo.push({ kind: "tombstone", ki, prev })
    this.changes.push({
      kv: { key: ki.key, createRevision: 0, modRevision: 0, version: 0, value: EMPTY, lease: 0n },
      deleted: true
    })
    const oldLease = this.core.leases.get(ki.k)
    if (oldLease !== undefined && oldLease !== 0n) {
      this.lessorOps.push({ attach: false, id: oldLease, key: ki.key })
      this.setLease(ki.k, 0n)
    }
  }

  private setLease(k: string, lease: bigint): void {
    const leases = this.core.leases
    this.undo.push({ kind: "lease", k, prev: leases.get(k) })
    if (lease === 0n) leases.delete(k)
    else leases.set(k, lease)
  }

  /** The events of this txn's revision, in sub-revision order. */
  events(): Array<Event> {
    const rev = this.beginRev + 1
    const out = new Array<Event>(this.changes.length)
    for (let i = 0; i < this.changes.length; i++) {
      const c = this.changes[i]!
      out[i] = c.deleted
        ? { type: EventType.DELETE, kv: tombstoneKv(c.kv.key, rev) }
        : { type: EventType.PUT, kv: c.kv }
    }
    return out
  }

  /** Tells the lessor about attachments that changed (once the txn is known to go through). */
  applyLessorOps(): void {
    const lessor = this.core.lessor
    if (lessor === undefined) return
    for (const op of this.lessorOps) {
      if (op.attach) lessor.attach(op.id, op.key)
      else lessor.detach(op.id, op.key)
    }
  }

  /** Undoes every index and lease change of this txn. */
  abort(): void {
    const index = this.core.index
    for (let i = this.undo.length - 1; i >= 0; i--) {
      const u = this.undo[i]!
      switch (u.kind) {
        case "put":
          if (u.created) index.remove(u.ki.k)
          else u.ki.undoPut(u.prev)
          break
        case "tombstone":
          u.ki.undoTombstone(u.prev)
          break
        case "lease":
          if (u.prev === undefined) this.core.leases.delete(u.k)
          else this.core.leases.set(u.k, u.prev)
          break
      }
    }
    this.undo.length = 0
    this.changes.length = 0
    this.ops.length = 0
    this.lessorOps.length = 0
  }
}
