/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get`
 * prints: a NAME column (unless the printer places it itself, as Events'), the resource's columns (a built-in printer's, or a CRD's
 * additionalPrinterColumns of the version asked for, by default AGE), and per row the object as PartialObjectMetadata
 * (`includeObject=Metadata`, the default), the whole object (`Object`) or nothing (`None`).
 */
import type { KubeObject, ListMeta } from "../api/object-meta.js"
import { compileJsonPath, findResults, type JsonPath, JsonPathEvalError, printValue } from "../api/jsonpath.js"
import { JsonPathSyntaxError } from "../api/jsonpath-parser.js"
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
 * A CRD column's cell, as apiextensions-apiserver's table convertor computes it: the first value
 * of the column's JSONPath (client-go's, with filters, `[*]`, `..`; a missing field or an
 * evaluation error is an empty cell), rendered by the column's type — a string column prints the
 * value as `kubectl get -o jsonpath` would (objects as JSON, null as `<no value>`), integer,
 * number and boolean columns keep values of their type, a date column is an age.
 */
const customCell = (col: PrinterColumn, path: JsonPath, obj: KubeObject): unknown => {
  let value: unknown
  try {
    const results = findResults(path, obj)
    if (results.length === 0 || results[0]!.length === 0) return null
    value = results[0]![0]
  } catch (e) {
    if (e instanceof JsonPathEvalError) return null
    throw e
  }
  if (col.type === "string") return printValue(value, "<no value>")
  if (value === null) return null
  switch (col.type) {
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null
    case "number":
    case "boolean":
      return typeof value === col.type ? value : null
    case "date": {
      if (typeof value !== "string") return null
      if (value === "" || value === "null") return "<unknown>"
      const t = Date.parse(value)
      return RFC3339.test(value) && Number.isFinite(t) ? humanDuration(Date.now() - t) : "<invalid>"
    }
    default:
      return null
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** The parsed paths of a resource's CRD columns, up to the first that does not parse (New's partial convertor) */
const compiled = new WeakMap<ReadonlyArray<PrinterColumn>, ReadonlyArray<readonly [PrinterColumn, JsonPath]>>()

export const customColumns = (
  columns: ReadonlyArray<PrinterColumn>
): ReadonlyArray<readonly [PrinterColumn, JsonPath]> => {
  const known = compiled.get(columns)
  if (known !== undefined) return known
  const out: Array<readonly [PrinterColumn, JsonPath]> = []
  for (const c of columns) {
    try {
      out.push([c, compileJsonPath(`{${c.jsonPath ?? ""}}`)])
    } catch (e) {
      if (e instanceof JsonPathSyntaxError) break
      throw e
    }
  }
  compiled.set(columns, out)
  return out
}

/** A custom resource's cells after NAME for its version's columns */
export const customResourceCells = (columns: ReadonlyArray<PrinterColumn>, obj: KubeObject): Array<unknown> =>
  customColumns(columns).map(([c, path]) => customCell(c, path, obj))

const cellOf = (col: PrinterColumn, obj: KubeObject): unknown => {
  if (col.cell !== undefined) return col.cell(obj)
  if (col.jsonPath === undefined) return null
  // the default convertor (CRDs themselves): the value as it is
  const v = findResults(compileJsonPath(`{${col.jsonPath}}`), obj)[0]?.[0]
  return v === undefined ? null : v
}

/** The columns of a resource served at a version (a CRD's version may have its own) */
const printerColumnsOf = (info: ResourceInfo, version: string | undefined): ReadonlyArray<PrinterColumn> =>
  (version !== undefined ? info.versionPrinterColumns?.[version] : undefined) ?? info.printerColumns

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

const definitionOf = (c: PrinterColumn) => ({
  name: c.name,
  type: c.type,
  format: c.format ?? "",
  description: c.description ?? "",
  priority: c.priority ?? 0
})

export const columnDefinitions = (info: ResourceInfo, version?: string): ReadonlyArray<unknown> => {
  const nameColumn =
    info.nameColumn === false
      ? []
      : [{ name: "Name", type: "string", format: "name", description: NAME_DESCRIPTION, priority: 0 }]
  const columns = printerColumnsOf(info, version)
  if (!info.custom) return [...nameColumn, ...columns.map(definitionOf)]
  return [
    ...nameColumn,
    ...customColumns(columns).map(([c]) =>
      definitionOf({
        ...c,
        description:
          c.description === undefined || c.description === ""
            ? `Custom resource definition column (in JSONPath format): ${c.jsonPath ?? ""}`
            : c.description
      })
    )
  ]
}

/** The row's cells after NAME */
const cellsOf = (info: ResourceInfo, version: string | undefined, obj: KubeObject): Array<unknown> => {
  const columns = printerColumnsOf(info, version)
  return info.custom ? customResourceCells(columns, obj) : columns.map((c) => cellOf(c, obj))
}

export const tableOf = (
  info: ResourceInfo,
  objects: ReadonlyArray<KubeObject>,
  metadata: ListMeta,
  include: IncludeObject,
  version?: string
): Table => ({
  kind: "Table",
  apiVersion: "meta.k8s.io/v1",
  metadata,
  columnDefinitions: columnDefinitions(info, version),
  rows: objects.map((obj) => {
    const object = rowObject(obj, include)
    const columns = cellsOf(info, version, obj)
    const cells = info.nameColumn === false ? columns : [obj.metadata.name ?? "", ...columns]
    return object === undefined ? { cells } : { cells, object }
  })
})
