/**
 * fieldpath.Set: a set of field paths as a tree. At each level `members` are the elements whose
 * path ends there and `children` the elements with paths below them (an element can be both: a
 * map owned itself and through its entries, fieldsV1's `".": {}`). Elements are identified by
 * their fieldsV1 form; the order of iteration and of fieldsV1 is PathElement's.
 */
import * as PE from "./path-element.js"
import type { Path, PathElement } from "./path-element.js"

export class FieldSet {
  readonly members = new Map<string, PathElement>()
  readonly children = new Map<string, { readonly pe: PathElement; readonly set: FieldSet }>()

  static of(...paths: ReadonlyArray<Path>): FieldSet {
    const s = new FieldSet()
    for (const p of paths) s.insert(p)
    return s
  }

  /** fieldpath.MakePathOrDie of field names only */
  static fields(...paths: ReadonlyArray<ReadonlyArray<string>>): FieldSet {
    return FieldSet.of(...paths.map((p) => p.map(PE.field)))
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false
    for (const c of this.children.values()) if (!c.set.isEmpty()) return false
    return true
  }

  insert(path: Path): void {
    if (path.length === 0) return
    let s: FieldSet = this
    for (let i = 0; i < path.length - 1; i++) s = s.child(path[i]!)
    const last = path[path.length - 1]!
    s.members.set(PE.serialize(last), last)
  }

  /** the child set of `pe`, made when missing */
  child(pe: PathElement): FieldSet {
    const k = PE.serialize(pe)
    let c = this.children.get(k)
    if (c === undefined) {
      c = { pe, set: new FieldSet() }
      this.children.set(k, c)
    }
    return c.set
  }

  has(path: Path): boolean {
    if (path.length === 0) return false
    let s: FieldSet | undefined = this
    for (let i = 0; i < path.length - 1 && s !== undefined; i++) s = s.children.get(PE.serialize(path[i]!))?.set
    return s !== undefined && s.members.has(PE.serialize(path[path.length - 1]!))
  }

  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(PE.serialize(pe))?.set ?? EMPTY
  }

  union(o: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) out.members.set(k, pe)
    for (const [k, pe] of o.members) out.members.set(k, pe)
    for (const [k, c] of this.children) {
      const other = o.children.get(k)
      out.children.set(k, { pe: c.pe, set: other === undefined ? c.set : c.set.union(other.set) })
    }
    for (const [k, c] of o.children) if (!this.children.has(k)) out.children.set(k, c)
    return out
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) if (o.members.has(k)) out.members.set(k, pe)
    for (const [k, c] of this.children) {
      const other = o.children.get(k)
      if (other === undefined) continue
      const i = c.set.intersection(other.set)
      if (!i.isEmpty()) out.children.set(k, { pe: c.pe, set: i })
    }
    return out
  }

  difference(o: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.members.set(k, pe)
    for (const [k, c] of this.children) {
      const other = o.children.get(k)
      if (other === undefined) out.children.set(k, c)
      else {
        const d = c.set.difference(other.set)
        if (!d.isEmpty()) out.children.set(k, { pe: c.pe, set: d })
      }
    }
    return out
  }

  /** every path of this set that neither is in `o` nor lies below one of `o`'s paths */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.members.set(k, pe)
    for (const [k, c] of this.children) {
      if (o.members.has(k)) continue
      const other = o.children.get(k)
      if (other === undefined) out.children.set(k, c)
      else {
        const d = c.set.recursiveDifference(other.set)
        if (!d.isEmpty()) out.children.set(k, { pe: c.pe, set: d })
      }
    }
    return out
  }

  sortedMembers(): Array<PathElement> {
    return [...this.members.values()].sort(PE.compare)
  }

  sortedChildren(): Array<{ readonly pe: PathElement; readonly set: FieldSet }> {
    return [...this.children.values()].sort((a, b) => PE.compare(a.pe, b.pe))
  }

  /** Set.Iterate: this level's members, then each child's paths, in order */
  paths(prefix: Path = []): Array<Path> {
    const out: Array<Path> = this.sortedMembers().map((pe) => [...prefix, pe])
    for (const c of this.sortedChildren()) out.push(...c.set.paths([...prefix, c.pe]))
    return out
  }

  equals(o: FieldSet): boolean {
    return this.difference(o).isEmpty() && o.difference(this).isEmpty()
  }
}

const EMPTY = new FieldSet()
