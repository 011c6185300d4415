/**
 * Defaulting and preparation: the kind's defaults right after decoding (kindDefaults, a pipeline
 * stage), and rest.BeforeCreate / BeforeUpdate's share of the Store (`prepareCreate`,
 * `prepareUpdate`): the system fields a client may not set (uid, creationTimestamp,
 * deletionTimestamp…), a generated name, the namespace from the URL, what the strategy resets,
 * and the generation of kinds that keep one.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { KubeObject } from "../../api/object-meta.js"
import type { Obj } from "../kinds/strategy.js"
import type { ObjectStage, WriteContext } from "./stage.js"

/** names.SimpleNameGenerator: 5 characters from an alphabet without vowels or look-alikes. */
const ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
export const generateName = (base: string): string => {
  const b = base.length > 58 ? base.slice(0, 58) : base
  let suffix = ""
  for (let i = 0; i < 5; i++) suffix += ALPHABET[Math.floor(Math.random() * ALPHABET.length)]
  return b + suffix
}

/** metav1.Time's RFC 3339 form in seconds. */
export const timestamp = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** The strategy's defaults (a Secret's stringData and type, a Namespace's name label). */
export const kindDefaults: ObjectStage = (ctx, op, obj) =>
  Effect.sync(() => {
    if (op !== "DELETE") ctx.strategy.defaults?.(obj)
  })

/** TypeMeta first, as the apiserver writes objects. */
const ordered = (obj: Obj): Obj => {
  const { apiVersion, kind, metadata, ...rest } = obj
  return { apiVersion, kind, metadata, ...rest } as Obj
}

/** WipeObjectMetaSystemFields + FillObjectMetaSystemFields, generateName, PrepareForCreate. */
export const prepareCreate = (ctx: WriteContext, obj: Obj): Obj => {
  const m = obj.metadata
  delete m.deletionTimestamp
  delete m.deletionGracePeriodSeconds
  delete m.resourceVersion
  delete m["selfLink"]
  m.uid = randomUUID()
  m.creationTimestamp = timestamp()
  if ((m.name ?? "") === "" && (m.generateName ?? "") !== "") m.name = generateName(m.generateName!)
  if (ctx.info.generation) m.generation = 1
  else delete m.generation
  ctx.strategy.prepareForCreate?.(obj)
  return ordered(obj)
}

const specJson = (o: Record<string, unknown>): string => {
  const { metadata: _m, status: _s, ...rest } = o
  return JSON.stringify(rest)
}

/** rest.BeforeUpdate: what the stored object keeps, PrepareForUpdate, the generation of a spec change. */
export const prepareUpdate = (ctx: WriteContext, obj: Obj, current: KubeObject): Obj => {
  const m = obj.metadata
  const cur = current.metadata
  // the URL's name and namespace (a different one in the body was refused before)
  m.name = cur.name
  if (ctx.info.namespaced) m.namespace = cur.namespace
  if ((m.uid ?? "") === "") m.uid = cur.uid
  if ((cur.creationTimestamp ?? "") !== "") m.creationTimestamp = cur.creationTimestamp
  // an update never removes or changes a deletion (a new one is refused by validation)
  if ((cur.deletionTimestamp ?? "") !== "") m.deletionTimestamp = cur.deletionTimestamp
  if (
    cur.deletionGracePeriodSeconds !== undefined &&
    cur.deletionGracePeriodSeconds !== null &&
    m.deletionGracePeriodSeconds == null
  )
    m.deletionGracePeriodSeconds = cur.deletionGracePeriodSeconds
  delete m["selfLink"]
  ctx.strategy.prepareForUpdate?.(obj, current)
  if (ctx.info.generation) {
    const g = cur.generation ?? 1
    const changed =
      ctx.strategy.generationChanged?.(obj, current) ?? specJson(obj) !== specJson(current as Record<string, unknown>)
    m.generation = changed ? g + 1 : g
  } else {
    delete m.generation
  }
  return ordered(obj)
}
