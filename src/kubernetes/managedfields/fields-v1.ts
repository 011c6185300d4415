/**
 * FieldsV1, the managedFields form of a FieldSet (fieldpath/serialize.go): a JSON object whose
 * keys are serialized path elements (`f:`, `k:`, `v:`, `i:`) in PathElement order, `{}` for a
 * member, and `".": {}` first where an element is a member and has members below it.
 */
import { FieldSet } from "./field-set.js"
import * as PE from "./path-element.js"

export type FieldsV1 = { [k: string]: FieldsV1 }

const emit = (s: FieldSet, includeSelf: boolean): FieldsV1 => {
  const out: FieldsV1 = {}
  if (includeSelf) out["."] = {}
  const members = s.sortedMembers()
  const children = s.sortedChildren().filter((c) => !c.set.isEmpty())
  let mi = 0
  let ci = 0
  while (mi < members.length || ci < children.length) {
    const m = members[mi]
    const c = children[ci]
    const cmp = m === undefined ? 1 : c === undefined ? -1 : PE.compare(m, c.pe)
    if (cmp < 0) {
      out[PE.serialize(m!)] = {}
      mi++
    } else {
      out[PE.serialize(c!.pe)] = emit(c!.set, cmp === 0)
      if (cmp === 0) mi++
      ci++
    }
  }
  return out
}

/** SetToFields */
export const toFieldsV1 = (s: FieldSet): FieldsV1 => emit(s, false)

export class FieldsV1Error extends Error {}

const read = (o: unknown, into: FieldSet): void => {
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw new FieldsV1Error("expected an object")
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    if (k === ".") continue
    const pe = PE.deserialize(k)
    if (pe === undefined) throw new FieldsV1Error(`parsing JSON: unknown path element ${JSON.stringify(k)}`)
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw new FieldsV1Error(`expected an object at ${JSON.stringify(k)}`)
    const entries = Object.keys(v)
    if (entries.length === 0 || entries.includes(".")) into.members.set(PE.serialize(pe), pe)
    if (entries.some((e) => e !== ".")) read(v, into.child(pe))
  }
}

/** FieldsToSet; throws FieldsV1Error for a form that is not a set. */
export const fromFieldsV1 = (o: unknown): FieldSet => {
  const s = new FieldSet()
  read(o, s)
  return s
}
