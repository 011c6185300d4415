/**
 * internal/managedfields.go: metadata.managedFields ↔ the updater's managers. A manager's
 * identifier is the JSON of its entry without fieldsType, fieldsV1 and time (and, for Apply,
 * without apiVersion: one Apply entry per manager and subresource); entries are sorted by
 * operation, time (seconds), manager, apiVersion, subresource.
 */
import { fromFieldsV1, toFieldsV1, type FieldsV1 } from "./fields-v1.js"
import type { ManagedFields } from "./updater.js"

export interface ManagedFieldsEntry {
  readonly manager?: string
  readonly operation?: string
  readonly apiVersion?: string
  readonly time?: string
  readonly fieldsType?: string
  readonly fieldsV1?: FieldsV1
  readonly subresource?: string
}

export interface Managed {
  readonly fields: ManagedFields
  /** manager identifier → when its fields last changed (RFC 3339, seconds) */
  readonly times: Map<string, string | undefined>
}

export const emptyManaged = (): Managed => ({ fields: new Map(), times: new Map() })

/** BuildManagerIdentifier */
export const managerIdentifier = (e: {
  readonly manager?: string | undefined
  readonly operation?: string | undefined
  readonly apiVersion?: string | undefined
  readonly subresource?: string | undefined
}): string => {
  const o: Record<string, string> = {}
  if (e.manager) o["manager"] = e.manager
  if (e.operation) o["operation"] = e.operation
  if (e.apiVersion && e.operation !== "Apply") o["apiVersion"] = e.apiVersion
  if (e.subresource) o["subresource"] = e.subresource
  return JSON.stringify(o)
}

export class ManagedFieldsError extends Error {}

/** DecodeManagedFields; throws ManagedFieldsError with the Go text. */
export const decodeManagedFields = (entries: ReadonlyArray<ManagedFieldsEntry>): Managed => {
  const m = emptyManaged()
  entries.forEach((e, i) => {
    if (e.operation !== "Apply" && e.operation !== "Update")
      throw new ManagedFieldsError("operation must be `Apply` or `Update`")
    if ((e.apiVersion ?? "") === "") throw new ManagedFieldsError("apiVersion must not be empty")
    if ((e.fieldsType ?? "") === "") throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`)
    if (e.fieldsType !== "FieldsV1")
      throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`)
    const id = managerIdentifier(e)
    let set
    try {
      set = fromFieldsV1(e.fieldsV1 ?? {})
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set: ${(err as Error).message}`)
    }
    m.fields.set(id, { set, apiVersion: e.apiVersion!, applied: e.operation === "Apply" })
    m.times.set(id, e.time)
  })
  return m
}

const seconds = (t: string | undefined): number => (t === undefined ? 0 : Math.floor(Date.parse(t) / 1000))

/** encodeManagedFields: undefined when no manager is left */
export const encodeManagedFields = (m: Managed): Array<ManagedFieldsEntry> | undefined => {
  if (m.fields.size === 0) return undefined
  const out: Array<ManagedFieldsEntry> = []
  for (const [id, vs] of m.fields) {
    const parsed = (() => {
      try {
        return JSON.parse(id) as Record<string, string>
      } catch {
        return {} as Record<string, string>
      }
    })()
    const time = m.times.get(id)
    out.push({
      ...(parsed["manager"] !== undefined ? { manager: parsed["manager"] } : {}),
      operation: vs.applied ? "Apply" : (parsed["operation"] ?? "Update"),
      apiVersion: vs.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(vs.set),
      ...(parsed["subresource"] !== undefined ? { subresource: parsed["subresource"] } : {})
    })
  }
  const s = (x: string | undefined) => x ?? ""
  return out.sort(
    (p, q) =>
      cmp(s(p.operation), s(q.operation)) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(s(p.manager), s(q.manager)) ||
      cmp(s(p.apiVersion), s(q.apiVersion)) ||
      cmp(s(p.subresource), s(q.subresource))
  )
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
