/**
 * A small, obviously-correct reference model of etcd's KV semantics for the property tests: the
 * whole key space is copied at every revision (snapshots[rev]), keys and values are latin1
 * strings, and every request is answered from those snapshots by the rules of etcd 3.4/3.5
 * (apply.go, kvstore_txn.go, v3rpc/key.go), written as plainly as possible.
 *
 * Responses come out in a normalised shape (`N*` types) that the store's responses are converted
 * to as well, so the two can be compared with toEqual.
 */
import { Errors } from "../../src/errors.js"

export interface MKV {
  readonly key: string
  readonly create: number
  readonly mod: number
  readonly version: number
  readonly value: string
  readonly lease: string
}
export type State = ReadonlyMap<string, MKV>

export interface MEvent {
  readonly type: "PUT" | "DELETE"
  readonly kv: MKV
}

// requests (strings for bytes)
export interface MRange {
  readonly key: string
  readonly rangeEnd?: string | undefined
  readonly limit?: number | undefined
  readonly revision?: number | undefined
  readonly sortOrder?: number | undefined
  readonly sortTarget?: number | undefined
  readonly keysOnly?: boolean | undefined
  readonly countOnly?: boolean | undefined
  readonly minModRevision?: number | undefined
  readonly maxModRevision?: number | undefined
  readonly minCreateRevision?: number | undefined
  readonly maxCreateRevision?: number | undefined
}
export interface MPut {
  readonly key: string
  readonly value?: string | undefined
  readonly lease?: bigint | undefined
  readonly prevKv?: boolean | undefined
  readonly ignoreValue?: boolean | undefined
  readonly ignoreLease?: boolean | undefined
}
export interface MDelete {
  readonly key: string
  readonly rangeEnd?: string | undefined
  readonly prevKv?: boolean | undefined
}
export interface MCompare {
  readonly key: string
  readonly rangeEnd?: string | undefined
  /** 0 VERSION 1 CREATE 2 MOD 3 VALUE 4 LEASE */
  readonly target: number
  /** 0 EQUAL 1 GREATER 2 LESS 3 NOT_EQUAL */
  readonly result: number
  readonly num: number
  readonly value: string
  readonly lease: bigint
}
export type MOp =
  | { readonly _tag: "Range"; readonly request: MRange }
  | { readonly _tag: "Put"; readonly request: MPut }
  | { readonly _tag: "DeleteRange"; readonly request: MDelete }
  | { readonly _tag: "Txn"; readonly request: MTxn }
export interface MTxn {
  readonly compare: ReadonlyArray<MCompare>
  readonly success: ReadonlyArray<MOp>
  readonly failure: ReadonlyArray<MOp>
}

// normalised responses
export type NError = { readonly error: string; readonly code: number }
export interface NRange {
  readonly rev: number
  readonly kvs: ReadonlyArray<MKV>
  readonly more: boolean
  readonly count: number
}
export interface NPut {
  readonly rev: number
  readonly prevKv: MKV | null
}
export interface NDelete {
  readonly rev: number
  readonly deleted: number
  readonly prevKvs: ReadonlyArray<MKV>
}
export interface NTxn {
  readonly rev: number
  readonly succeeded: boolean
  readonly responses: ReadonlyArray<NOp>
}
export type NOp =
  { readonly Range: NRange } | { readonly Put: NPut } | { readonly DeleteRange: NDelete } | { readonly Txn: NTxn }

class ModelError extends Error {
  constructor(readonly e: NError) {
    super(e.error)
  }
}
const raise = (mk: () => { code: number; message: string }): never => {
  const e = mk()
  throw new ModelError({ error: e.message, code: e.code })
}

/** keys of `state` in the request's range, sorted bytewise (latin1 strings sort bytewise) */
const keysIn = (state: State, key: string, rangeEnd: string | undefined): Array<string> => {
  if (rangeEnd === undefined || rangeEnd === "") return state.has(key) ? [key] : []
  const fromKey = rangeEnd === "\0"
  return [...state.keys()].filter((k) => k >= key && (fromKey || k < rangeEnd)).sort()
}

const cmp = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0)
const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const cmpBig = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)

const MAX_TXN_OPS = 128

export class Model {
  rev = 1
  compactRev = -1
  /** snapshots[r]: the key space at revision r */
  readonly snapshots: Array<State> = [new Map(), new Map()]
  /** events[r]: the changes made at revision r */
  readonly events: Array<ReadonlyArray<MEvent>> = [[], []]
  readonly leases = new Set<bigint>([1n, 2n])

  head(): State {
    return this.snapshots[this.rev]!
  }

  private attempt<A>(f: () => A): A | NError {
    try {
      return f()
    } catch (e) {
      if (e instanceof ModelError) return e.e
      throw e
    }
  }

  // ---- request checks (v3rpc/key.go)
  private checkOp(op: MOp, maxOps: number): void {
    switch (op._tag) {
      case "Range":
        if (op.request.key === "") raise(Errors.emptyKey)
        if (![undefined, 0, 1, 2].includes(op.request.sortOrder)) raise(Errors.invalidSortOption)
        if (![undefined, 0, 1, 2, 3, 4].includes(op.request.sortTarget)) raise(Errors.invalidSortOption)
        return
      case "Put":
        this.checkPut(op.request)
        return
      case "DeleteRange":
        if (op.request.key === "") raise(Errors.emptyKey)
        return
      case "Txn":
        this.checkTxn(op.request, maxOps)
    }
  }
  private checkPut(p: MPut): void {
    if (p.key === "") raise(Errors.emptyKey)
    if (p.ignoreValue === true && (p.value ?? "") !== "") raise(Errors.valueProvided)
    if (p.ignoreLease === true && (p.lease ?? 0n) !== 0n) raise(Errors.leaseProvided)
  }
  private checkTxn(t: MTxn, maxOps: number): void {
    const widest = Math.max(t.compare.length, t.success.length, t.failure.length)
    if (widest > maxOps) raise(Errors.tooManyOps)
    if (t.compare.some((c) => c.key === "")) raise(Errors.emptyKey)
    for (const op of [...t.success, ...t.failure]) this.checkOp(op, maxOps - widest)
  }

  /** checkIntervals, as plainly as possible: [puts, delete intervals] of one op list. */
  private intervals(ops: ReadonlyArray<MOp>): [Set<string>, Array<[string, string]>] {
    const covers = (dels: Array<[string, string]>, k: string) => dels.some(([lo, hi]) => lo <= k && k < hi)
    const dels: Array<[string, string]> = []
    for (const op of ops) {
      if (op._tag !== "DeleteRange") continue
      const { key, rangeEnd } = op.request
      // a from-key delete's end is the literal "\0": it covers nothing (as in etcd)
      dels.push(rangeEnd !== undefined && rangeEnd !== "" ? [key, rangeEnd] : [key, key + "\0"])
    }
    const puts = new Set<string>()
    for (const op of ops) {
      if (op._tag !== "Txn") continue
      const [thenPuts, thenDels] = this.intervals(op.request.success)
      const [elsePuts, elseDels] = this.intervals(op.request.failure)
      for (const k of thenPuts) {
        if (puts.has(k) || covers(dels, k)) raise(Errors.duplicateKey)
        puts.add(k)
      }
      for (const k of elsePuts) {
        if ((puts.has(k) && !thenPuts.has(k)) || covers(dels, k)) raise(Errors.duplicateKey)
        puts.add(k)
      }
      dels.push(...thenDels, ...elseDels)
    }
    for (const op of ops) {
      if (op._tag !== "Put") continue
      const k = op.request.key
      if (puts.has(k) || covers(dels, k)) raise(Errors.duplicateKey)
      puts.add(k)
    }
    return [puts, dels]
  }

  // ---- reads

  /** Range against `state` (the state at curRev, for revision 0), or a snapshot for a historical revision. */
  private range(r: MRange, curRev: number, stateAtCur: State): NRange {
    let rev = r.revision ?? 0
    if (rev > curRev) raise(Errors.futureRev)
    if (rev <= 0) rev = curRev
    if (rev < this.compactRev) raise(Errors.compacted)
    const state = rev === curRev ? stateAtCur : this.snapshots[rev]!
    const all = keysIn(state, r.key, r.rangeEnd).map((k) => state.get(k)!)
    const count = all.length
    let kvs = r.countOnly === true ? [] : all
    const { minModRevision: minMod = 0, maxModRevision: maxMod = 0 } = r
    const { minCreateRevision: minCreate = 0, maxCreateRevision: maxCreate = 0 } = r
    if (maxMod !== 0) kvs = kvs.filter((kv) => kv.mod <= maxMod)
    if (minMod !== 0) kvs = kvs.filter((kv) => kv.mod >= minMod)
    if (maxCreate !== 0) kvs = kvs.filter((kv) => kv.create <= maxCreate)
    if (minCreate !== 0) kvs = kvs.filter((kv) => kv.create >= minCreate)
    const target = r.sortTarget ?? 0
    let order = r.sortOrder ?? 0
    // etcd (apply.go) fetches everything only for an explicit order or a revision filter; a target
    // other than KEY with order NONE sorts just the limit + 1 keys fetched in key order (checked
    // against etcd 3.4: keys a=zz, b=y, d="" ranged from "a" with limit 1 and VALUE/NONE give b)
    const limitFirst = r.limit ?? 0
    if (order === 0 && limitFirst > 0 && minMod === 0 && maxMod === 0 && minCreate === 0 && maxCreate === 0) {
      kvs = kvs.slice(0, limitFirst + 1)
    }
    if (target !== 0 && order === 0) order = 1
    if (order !== 0) {
      const by: Record<number, (a: MKV, b: MKV) => number> = {
        0: (a, b) => cmpStr(a.key, b.key),
        1: (a, b) => cmp(a.version, b.version),
        2: (a, b) => cmp(a.create, b.create),
        3: (a, b) => cmp(a.mod, b.mod),
        4: (a, b) => cmpStr(a.value, b.value)
      }
      const f = by[target]!
      // stable: ties stay in key order
      kvs = [...kvs].sort(order === 1 ? f : (a, b) => f(b, a))
    }
    const limit = r.limit ?? 0
    let more = false
    if (limit > 0 && kvs.length > limit) {
      kvs = kvs.slice(0, limit)
      more = true
    }
    if (r.keysOnly === true) kvs = kvs.map((kv) => ({ ...kv, value: "" }))
    return { rev: curRev, kvs, more, count }
  }

  rangeRequest(r: MRange): NRange | NError {
    return this.attempt(() => {
      this.checkOp({ _tag: "Range", request: r }, MAX_TXN_OPS)
      return this.range(r, this.rev, this.head())
    })
  }

  // ---- writes

  private newWork() {
    const base = this.rev
    return { base, state: new Map(this.head()), changes: [] as Array<MEvent> }
  }
  private commit(w: ReturnType<Model["newWork"]>): void {
    if (w.changes.length === 0) return
    this.rev = w.base + 1
    this.snapshots[this.rev] = w.state
    this.events[this.rev] = w.changes
  }

  private put(w: ReturnType<Model["newWork"]>, p: MPut, standalone: boolean): NPut {
    let lease = p.lease ?? 0n
    if (standalone && lease !== 0n && !this.leases.has(lease)) raise(Errors.leaseNotFound)
    const prev = w.state.get(p.key)
    if ((p.ignoreValue === true || p.ignoreLease === true) && prev === undefined) raise(Errors.keyNotFound)
    const value = p.ignoreValue === true ? prev!.value : (p.value ?? "")
    if (p.ignoreLease === true) lease = BigInt(prev!.lease)
    const rev = w.base + 1
    const kv: MKV = {
      key: p.key,
      create: prev === undefined ? rev : prev.create,
      mod: rev,
      version: prev === undefined ? 1 : prev.version + 1,
      value,
      lease: String(lease)
    }
    w.state.set(p.key, kv)
    w.changes.push({ type: "PUT", kv })
    return { rev, prevKv: p.prevKv === true && prev !== undefined ? prev : null }
  }

  private del(w: ReturnType<Model["newWork"]>, d: MDelete): NDelete {
    const keys = keysIn(w.state, d.key, d.rangeEnd)
    const prevKvs = d.prevKv === true ? keys.map((k) => w.state.get(k)!) : []
    const rev = w.base + 1
    for (const k of keys) {
      w.state.delete(k)
      w.changes.push({ type: "DELETE", kv: { key: k, create: 0, mod: rev, version: 0, value: "", lease: "0" } })
    }
    return { rev: keys.length > 0 || w.changes.length > 0 ? rev : w.base, deleted: keys.length, prevKvs }
  }

  putRequest(p: MPut): NPut | NError {
    return this.attempt(() => {
      this.checkPut(p)
      const w = this.newWork()
      const r = this.put(w, p, true)
      this.commit(w)
      return r
    })
  }

  deleteRequest(d: MDelete): NDelete | NError {
    return this.attempt(() => {
      if (d.key === "") raise(Errors.emptyKey)
      const w = this.newWork()
      const r = this.del(w, d)
      this.commit(w)
      return r
    })
  }

  private compare(state: State, c: MCompare): boolean {
    const kvs = keysIn(state, c.key, c.rangeEnd).map((k) => state.get(k)!)
    if (kvs.length === 0 && c.target === 3) return false
    const zero: MKV = { key: "", create: 0, mod: 0, version: 0, value: "", lease: "0" }
    return (kvs.length === 0 ? [zero] : kvs).every((kv) => {
      const res = [
        cmp(kv.version, c.num),
        cmp(kv.create, c.num),
        cmp(kv.mod, c.num),
        cmpStr(kv.value, c.value),
        cmpBig(BigInt(kv.lease), c.lease)
      ][c.target]!
      return [res === 0, res > 0, res < 0, res !== 0][c.result]!
    })
  }

  txnRequest(t: MTxn): NTxn | NError {
    return this.attempt(() => {
      this.checkTxn(t, MAX_TXN_OPS)
      this.intervals(t.success)
      this.intervals(t.failure)
      const isWrite = [...t.success, ...t.failure].some((op) => op._tag !== "Range")
      const before = this.head()
      // every compare, nested ones too, sees the state before the txn
      const decide = (x: MTxn): boolean => x.compare.every((c) => this.compare(before, c))
      const chosen = (x: MTxn) => (decide(x) ? x.success : x.failure)
      const walk = (x: MTxn, f: (op: MOp) => void) => {
        for (const op of chosen(x)) {
          if (op._tag === "Txn") walk(op.request, f)
          else f(op)
        }
      }
      if (isWrite) {
        walk(t, (op) => {
          if (op._tag !== "Put") return
          const p = op.request
          if ((p.ignoreValue === true || p.ignoreLease === true) && !before.has(p.key)) raise(Errors.keyNotFound)
          if ((p.lease ?? 0n) !== 0n && !this.leases.has(p.lease!)) raise(Errors.leaseNotFound)
        })
      }
      walk(t, (op) => {
        if (op._tag !== "Range") return
        const rev = op.request.revision ?? 0
        if (rev === 0) return
        if (rev > this.rev) raise(Errors.futureRev)
        if (rev < this.compactRev) raise(Errors.compacted)
      })
      const w = this.newWork()
      const run = (x: MTxn): { succeeded: boolean; responses: Array<NOp> } => {
        const succeeded = decide(x)
        const responses = (succeeded ? x.success : x.failure).map((op): NOp => {
          switch (op._tag) {
            case "Range":
              return { Range: this.range(op.request, w.changes.length > 0 ? w.base + 1 : w.base, w.state) }
            case "Put":
              return { Put: this.put(w, op.request, false) }
            case "DeleteRange":
              return { DeleteRange: this.del(w, op.request) }
            case "Txn":
              return { Txn: { rev: 0, ...run(op.request) } }
          }
        })
        return { succeeded, responses }
      }
      const out = run(t)
      const rev = w.changes.length > 0 ? w.base + 1 : w.base
      this.commit(w)
      return { rev, ...out }
    })
  }

  compactRequest(rev: number): { rev: number } | NError {
    return this.attempt(() => {
      if (rev <= this.compactRev) raise(Errors.compacted)
      if (rev > this.rev) raise(Errors.futureRev)
      this.compactRev = rev
      return { rev: this.rev }
    })
  }

  /** live keys with a lease at head */
  leaseAttachments(): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [k, kv] of this.head()) if (kv.lease !== "0") out[k] = kv.lease
    return out
  }
}
