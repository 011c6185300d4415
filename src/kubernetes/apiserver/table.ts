/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get`
 * prints: a NAME column (unless the printer places it itself, as Events'), the resource's columns (a built-in printer's, or a CRD's
 * additionalPrinterColumns, by default AGE), and per row the object as PartialObjectMetadata
 * (`includeObject=Metadata`, the default), the whole object (`Object`) or nothing (`None`).
 */
import type { KubeObject, ListMeta } from "../api/object-meta.js"
import { humanDuration, type PrinterColumn, type ResourceInfo } from "./resources.js"

export type IncludeObject = "None" | "Metadata" | "Object"

const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"

/** A media range of the Accept header asks for a Table. */
export const wantsTable = (accept: string | undefined): boolean =>
  accept !== undefined &&
  accept.split(",").some((r) => {
    const params = r.split(";").map((p) => p.trim())
    return params.includes("as=Table") && (params.includes("g=meta.k8s.io") || !params.some((p) => p.startsWith("g=")))
  })

export const includeObjectOf = (q: URLSearchParams): IncludeObject => {
  const v = q.get("includeObject")
  return v === "None" || v === "Object" ? v : "Metadata"
}

/**
 * A small JSONPath subset of CRD printer columns: `.a.b`, `.a[0].b`, `{.a.b}`. Filters and
 * wildcards (`[?(…)]`, `[*]`) give no value (kubectl prints `<none>`).
 */
export const evalJsonPath = (obj: unknown, path: string): unknown => {
  let p = path.trim()
  if (p.startsWith("{") && p.endsWith("}")) p = p.slice(1, -1)
  if (p.startsWith("$")) p = p.slice(1)
  const tokens: Array<string | number> = []
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[['"]([^'"]+)['"]\]/y
  let i = 0
  while (i < p.length) {
    re.lastIndex = i
    const m = re.exec(p)
    if (m === null) return undefined
    tokens.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : m[3]!))
    i = re.lastIndex
  }
  let cur: unknown = obj
  for (const t of tokens) {
    if (cur === null || typeof cur !== "object") return undefined
    cur = (cur as Record<string | number, unknown>)[t]
  }
  return cur
}

const cellOf = (info: ResourceInfo, col: PrinterColumn, obj: KubeObject): unknown => {
  if (col.cell !== undefined) return col.cell(obj)
  if (col.jsonPath === undefined) return null
  const v = evalJsonPath(obj, col.jsonPath)
  if (v === undefined) return null
  // the CRD table convertor renders dates as ages; the default convertor (CRDs themselves) keeps the timestamp
  if (info.custom && col.type === "date" && typeof v === "string") return humanDuration(Date.now() - Date.parse(v))
  switch (col.type) {
    case "integer":
    case "number":
    case "boolean":
      return v
    default:
      return typeof v === "string" ? v : JSON.stringify(v)
  }
}

const rowObject = (obj: KubeObject, include: IncludeObject): unknown => {
  if (include === "None") return undefined
  if (include === "Object") return obj
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: obj.metadata }
}

export interface Table {
  readonly kind: "Table"
  readonly apiVersion: "meta.k8s.io/v1"
  readonly metadata: ListMeta
  readonly columnDefinitions: ReadonlyArray<unknown>
  readonly rows: ReadonlyArray<unknown>
}

export const columnDefinitions = (info: ResourceInfo): ReadonlyArray<unknown> => [
  ...(info.nameColumn === false
    ? []
    : [{ name: "Name", type: "string", format: "name", description: NAME_DESCRIPTION, priority: 0 }]),
  ...info.printerColumns.map((c) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? "",
    description: c.description ?? "",
    priority: c.priority ?? 0
  }))
]

export const tableOf = (
  info: ResourceInfo,
  objects: ReadonlyArray<KubeObject>,
  metadata: ListMeta,
  include: IncludeObject
): Table => ({
  kind: "Table",
  apiVersion: "meta.k8s.io/v1",
  metadata,
  columnDefinitions: columnDefinitions(info),
  rows: objects.map((obj) => {
    const object = rowObject(obj, include)
    const columns = info.printerColumns.map((c) => cellOf(info, c, obj))
    const cells = info.nameColumn === false ? columns : [obj.metadata.name ?? "", ...columns]
    return object === undefined ? { cells } : { cells, object }
  })
})
