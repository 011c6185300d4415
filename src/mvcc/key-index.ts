/**
 * key_index.go: the revisions of one key, grouped in generations. A generation runs from a
 * creation to a deletion (its last revision is then the tombstone); a deletion opens a new, empty
 * generation. For put(1.0); put(2.0); tombstone(3.0); put(4.0); tombstone(5.0):
 *
 *   {1.0, 2.0, 3.0(t)}  {4.0, 5.0(t)}  {empty}
 *
 * Compaction at R keeps, per key, the latest revision <= R (a tombstone at exactly R included, so a
 * watch from R still sees that DELETE: etcd #18089/#19179) and drops everything older; a key whose
 * only generation ends up empty is removed from the index.
 */
import type { Revision } from "./revision.js"

const ZERO: Revision = { main: 0, sub: 0 }

/** a revision as a Set/Map key */
export const revisionKey = (main: number, sub: number): string => `${main}_${sub}`

const greater = (a: Revision, b: Revision): boolean => a.main > b.main || (a.main === b.main && a.sub > b.sub)

export class Generation {
  /** number of revisions ever put into this generation (compaction keeps counting) */
  ver = 0
  /** when the generation was created (its first put) */
  created: Revision = ZERO
  revs: Array<Revision> = []

  isEmpty(): boolean {
    return this.revs.length === 0
  }

  /** index of the last revision with main <= atRev, -1 when none (revs are ascending) */
  findRevisionIndex(atRev: number): number {
    const revs = this.revs
    let lo = 0
    let hi = revs.length - 1
    let result = -1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (revs[mid]!.main <= atRev) {
        result = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return result
  }
}

/** The result of `get`: the revision visible at the asked revision, its generation's creation, its version. */
export interface KeyIndexGet {
  readonly modified: Revision
  readonly created: Revision
  readonly ver: number
}

export class KeyIndexError extends Error {}

export class KeyIndex {
  /** the last modification (main, sub) */
  modified: Revision = ZERO
  generations: Array<Generation> = []

  /**
   * @param key the key bytes (returned to callers)
   * @param k the same key as a latin1 string: native string order is then bytewise order
   */
  constructor(
    readonly key: Uint8Array,
    readonly k: string
  ) {}

  put(main: number, sub: number): void {
    const rev: Revision = { main, sub }
    if (!greater(rev, this.modified)) {
      throw new KeyIndexError(
        `'put' with an unexpected smaller revision ${main}.${sub} <= ${this.modified.main}.${this.modified.sub}`
      )
    }
    if (this.generations.length === 0) this.generations.push(new Generation())
    const g = this.generations[this.generations.length - 1]!
    if (g.revs.length === 0) g.created = rev
    g.revs.push(rev)
    g.ver++
    this.modified = rev
  }

  /** Restores a key from its latest stored KeyValue (restore from the backend). */
  restore(created: Revision, modified: Revision, ver: number): void {
    if (this.generations.length !== 0) throw new KeyIndexError("'restore' got an unexpected non-empty generations")
    this.modified = modified
    const g = new Generation()
    g.created = created
    g.ver = ver
    g.revs.push(modified)
    this.generations.push(g)
  }

  /** Restores a tombstone that is the only revision left of a key (its creation was compacted). */
  restoreTombstone(main: number, sub: number): void {
    this.restore(ZERO, { main, sub }, 1)
    this.generations.push(new Generation())
  }

  /**
   * Appends a tombstone and opens a new empty generation. Returns false (etcd's
   * ErrRevisionNotFound) when the key is not live.
   */
  tombstone(main: number, sub: number): boolean {
    if (this.isEmpty()) throw new KeyIndexError("'tombstone' got an unexpected empty keyIndex")
    if (this.generations[this.generations.length - 1]!.isEmpty()) return false
    this.put(main, sub)
    this.generations.push(new Generation())
    return true
  }

  /** The revision visible at `atRev` with its creation and version; undefined where the key is absent. */
  get(atRev: number): KeyIndexGet | undefined {
    const g = this.findGeneration(atRev)
    if (g === undefined || g.isEmpty()) return undefined
    const n = g.findRevisionIndex(atRev)
    if (n === -1) return undefined
    return { modified: g.revs[n]!, created: g.created, ver: g.ver - (g.revs.length - n - 1) }
  }

  /** Only the modified revision visible at `atRev` (no allocation): for range scans. */
  revisionAt(atRev: number): Revision | undefined {
    const g = this.findGeneration(atRev)
    if (g === undefined || g.isEmpty()) return undefined
    const n = g.findRevisionIndex(atRev)
    return n === -1 ? undefined : g.revs[n]
  }

  /**
   * Revisions with main >= rev, one per main revision (the largest sub wins: the others were never
   * visible outside their txn).
   */
  since(rev: number): Array<Revision> {
    if (this.isEmpty()) throw new KeyIndexError("'since' got an unexpected empty keyIndex")
    const since: Revision = { main: rev, sub: 0 }
    let gi: number
    for (gi = this.generations.length - 1; gi > 0; gi--) {
      const g = this.generations[gi]!
      if (g.isEmpty()) continue
      if (greater(since, g.created)) break
    }
    const revs: Array<Revision> = []
    let last = 0
    for (; gi < this.generations.length; gi++) {
      for (const r of this.generations[gi]!.revs) {
        if (greater(since, r)) continue
        if (r.main === last) {
          revs[revs.length - 1] = r
          continue
        }
        revs.push(r)
        last = r.main
      }
    }
    return revs
  }

  /**
   * Compacts at atRev: keeps every revision with main >= atRev (so revision atRev stays complete,
   * its tombstones included), and below atRev only the revision visible at atRev when that is a
   * put; drops the rest and every generation left empty (except the current one). The revisions
   * <= atRev that survive are recorded in `available` for the backend sweep.
   *
   * For one change per key per revision this is exactly etcd's rule (latest revision <= atRev,
   * plus a tombstone at exactly atRev, #18089/#19179). It also stays right when one txn changed a
   * key twice at atRev (a from-key delete then a put): etcd main would keep only the tombstone
   * generation and sweep the live put from the backend.
   */
  compact(atRev: number, available: Set<string>): void {
    if (this.isEmpty()) throw new KeyIndexError("'compact' got an unexpected empty keyIndex")
    this.compacted(atRev, available, true)
  }

  /** What `compact(atRev)` would keep (`available`), changing nothing. */
  keep(atRev: number, available: Set<string>): void {
    if (this.isEmpty()) return
    this.compacted(atRev, available, false)
  }

  private compacted(atRev: number, available: Set<string>, apply: boolean): void {
    const gens = this.generations
    const last = gens.length - 1
    // the revision visible at atRev (the newest with main <= atRev) survives when it is a put
    // older than atRev; it is then the last revision of its generation below atRev
    let keepGen = -1
    let keepIdx = -1
    for (let gi = last; gi >= 0; gi--) {
      const g = gens[gi]!
      const idx = g.findRevisionIndex(atRev)
      if (idx !== -1) {
        const isTombstone = gi !== last && idx === g.revs.length - 1
        if (g.revs[idx]!.main < atRev && !isTombstone) {
          keepGen = gi
          keepIdx = idx
        }
        break
      }
    }
    let out: Array<Generation> | undefined
    for (let gi = 0; gi <= last; gi++) {
      const g = gens[gi]!
      const revs = g.revs
      // the kept suffix: from the visible put, or from the first revision with main >= atRev
      let start: number
      if (gi === keepGen) start = keepIdx
      else {
        start = revs.length
        while (start > 0 && revs[start - 1]!.main >= atRev) start--
      }
      for (let i = start; i < revs.length; i++) {
        const r = revs[i]!
        if (r.main > atRev) break
        available.add(revisionKey(r.main, r.sub))
      }
      if (!apply) continue
      if (start === revs.length && gi !== last) {
        // a generation wholly before atRev: dropped
        out ??= gens.slice(0, gi)
        continue
      }
      if (start > 0) g.revs = revs.slice(start)
      if (out !== undefined) out.push(g)
    }
    if (out !== undefined) this.generations = out
  }

  isEmpty(): boolean {
    return this.generations.length === 1 && this.generations[0]!.isEmpty()
  }

  /** The generation `rev` falls in; undefined when the key did not exist at `rev`. */
  findGeneration(rev: number): Generation | undefined {
    const lastg = this.generations.length - 1
    for (let cg = lastg; cg >= 0; cg--) {
      const g = this.generations[cg]!
      if (g.revs.length === 0) continue
      if (cg !== lastg) {
        const tomb = g.revs[g.revs.length - 1]!.main
        if (tomb <= rev) return undefined
      }
      if (g.revs[0]!.main <= rev) return g
    }
    return undefined
  }

  /**
   * Undoes the latest `put` (given the `modified` it replaced): the store keeps an undo log so a
   * txn that fails half-way leaves no trace in the index.
   */
  undoPut(prevModified: Revision): void {
    const g = this.generations[this.generations.length - 1]!
    g.revs.pop()
    g.ver--
    if (g.revs.length === 0) g.created = ZERO
    this.modified = prevModified
  }

  /** Undoes the latest `tombstone` (given the `modified` it replaced). */
  undoTombstone(prevModified: Revision): void {
    this.generations.pop()
    this.undoPut(prevModified)
  }

  equal(b: KeyIndex): boolean {
    if (this.k !== b.k) return false
    if (this.modified.main !== b.modified.main || this.modified.sub !== b.modified.sub) return false
    if (this.generations.length !== b.generations.length) return false
    for (let i = 0; i < this.generations.length; i++) {
      const ag = this.generations[i]!
      const bg = b.generations[i]!
      if (ag.ver !== bg.ver || ag.revs.length !== bg.revs.length) return false
      for (let j = 0; j < ag.revs.length; j++) {
        if (ag.revs[j]!.main !== bg.revs[j]!.main || ag.revs[j]!.sub !== bg.revs[j]!.sub) return false
      }
    }
    return true
  }

  toString(): string {
    return this.generations
      .map(
        (g) =>
          `{created ${g.created.main}.${g.created.sub} ver ${g.ver} [${g.revs.map((r) => `${r.main}.${r.sub}`).join(" ")}]}`
      )
      .join(" ")
  }
}
