/**
 * The built-in kinds' Go types as effect/Schema: each leaf, slice, map and struct carries its Go
 * type's name (an annotation), so a body that does not fit gets the error encoding/json (through
 * sigs.k8s.io/json) gives for it — `json: cannot unmarshal number into Go struct field
 * ConfigMap.data of type string` — and the fields the type does not have are the strict
 * decoder's `unknown field "spec.foo"`. Decoding drops unknown fields and turns a null field into
 * an absent one, as Go's decoding into the typed object and encoding it back does.
 */
import { Either, ParseResult, Schema, SchemaAST } from "effect"
import { jsonKindOf, type JsonPath, unmarshalTypeError } from "../../api/go-json.js"

const TYPE_ERROR = "\u0000type:"

/** A custom decoder's type mismatch: reported as an UnmarshalTypeError of this Go type (with the field's context). */
export const asTypeError = (goType: string) => ({ ok: false as const, message: `${TYPE_ERROR}${goType}` })
const typeErrorOf = (message: string): string | undefined =>
  message.startsWith(TYPE_ERROR) ? message.slice(TYPE_ERROR.length) : undefined

/** the Go type of a schema node (`string`, `map[string]string`, `[]v1.FinalizerName`, `v1.ObjectMeta`) */
export const GoTypeId = Symbol.for("etcd-effect/kubernetes/GoType")
/** a struct's Go name (`ObjectMeta`): the error's "Go struct field <Struct>.<field>" */
export const GoStructId = Symbol.for("etcd-effect/kubernetes/GoStruct")
/** the leaf's failure is its own message (a custom UnmarshalJSON's or []byte's error), not a type error */
export const GoMessageId = Symbol.for("etcd-effect/kubernetes/GoMessage")

export type GoSchema = Schema.Schema<any, any, never>

const leaf = (goType: string, is: (u: unknown) => boolean): GoSchema =>
  Schema.declare((u: unknown): u is unknown => u === null || is(u), { [GoTypeId]: goType })

export const goString = (goType = "string"): GoSchema => leaf(goType, (u) => typeof u === "string")
export const goBool: GoSchema = leaf("bool", (u) => typeof u === "boolean")
export const goFloat64: GoSchema = leaf("float64", (u) => typeof u === "number")
/** int64 / int32: a JSON number without a fraction, in range (else "number 1.5") */
export const goInt = (goType: "int64" | "int32"): GoSchema =>
  leaf(
    goType,
    (u) =>
      typeof u === "number" &&
      Number.isInteger(u) &&
      (goType === "int64" ? Number.isSafeInteger(u) || Math.abs(u) < 2 ** 63 : Math.abs(u) < 2 ** 31)
  )
/** any JSON (apiextensions' JSON, runtime.RawExtension) */
export const goJson: GoSchema = Schema.Unknown

/** A leaf whose own parser decides (metav1.Time, []byte): `check` gives Go's error text, or the value to store. */
export const goCustom = (
  goType: string,
  check: (
    u: unknown
  ) => { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }
): GoSchema =>
  Schema.transformOrFail(Schema.Unknown, Schema.Unknown, {
    strict: true,
    decode: (u, _, ast) => {
      if (u === null) return ParseResult.succeed(null)
      const r = check(u)
      return r.ok ? ParseResult.succeed(r.value) : ParseResult.fail(new ParseResult.Type(ast, u, r.message))
    },
    encode: ParseResult.succeed
  }).annotations({ [GoTypeId]: goType, [GoMessageId]: true })

export const goSlice = (item: GoSchema, goType: string): GoSchema =>
  Schema.NullOr(Schema.Array(item).annotations({ [GoTypeId]: goType }))

export const goMap = (value: GoSchema, goType: string): GoSchema =>
  Schema.NullOr(Schema.Record({ key: Schema.String, value }).annotations({ [GoTypeId]: goType }))

/** A Go struct: every field optional (Go never requires one), its Go name for errors. */
export const goStruct = (name: string, goType: string, fields: Record<string, GoSchema>): GoSchema =>
  Schema.NullOr(goStructOnly(name, goType, fields))

/** The struct itself (a top-level kind is never null). */
export const goStructOnly = (name: string, goType: string, fields: Record<string, GoSchema>): GoSchema => {
  const props: Record<string, Schema.optional<GoSchema>> = {}
  for (const [k, v] of Object.entries(fields)) props[k] = Schema.optional(v)
  return Schema.Struct(props).annotations({ [GoTypeId]: goType, [GoStructId]: name })
}

/** What decoding a body with a kind's schema found. */
export interface GoDecoded {
  /** the typed object: unknown fields dropped, null fields absent */
  readonly value: Record<string, unknown>
  /** fields the type does not have (the strict decoder's unknown fields), in schema order */
  readonly unknown: ReadonlyArray<JsonPath>
}

export interface GoTypeError {
  readonly path: JsonPath
  readonly message: string
}

const annotation = <A>(ast: SchemaAST.AST, id: symbol): A | undefined => ast.annotations[id] as A | undefined

/** The Go type named on a node (through refinements, transformations and unions). */
const goTypeOf = (ast: SchemaAST.AST): string | undefined => {
  const t = annotation<string>(ast, GoTypeId)
  if (t !== undefined) return t
  if (SchemaAST.isRefinement(ast)) return goTypeOf(ast.from)
  if (SchemaAST.isTransformation(ast)) return goTypeOf(ast.to)
  if (SchemaAST.isUnion(ast)) {
    for (const m of ast.types) {
      const n = goTypeOf(m)
      if (n !== undefined) return n
    }
  }
  return undefined
}

interface WalkState {
  readonly path: Array<string | number>
  /** the innermost struct and the struct fields from the root (no map keys, no indices) */
  readonly struct: string | undefined
  readonly fields: ReadonlyArray<string>
}

const isNoise = (i: ParseResult.ParseIssue): boolean =>
  i._tag === "Type" && (i.ast._tag === "UndefinedKeyword" || (i.ast._tag === "Literal" && i.ast.literal === null))

const walk = (
  issue: ParseResult.ParseIssue,
  st: WalkState,
  typeErrors: Array<GoTypeError>,
  unknown: Array<JsonPath>,
  parentStruct: string | undefined
): void => {
  switch (issue._tag) {
    case "Pointer": {
      const keys = Array.isArray(issue.path) ? (issue.path as ReadonlyArray<PropertyKey>) : [issue.path as PropertyKey]
      let next = st
      for (const k of keys) {
        const seg = typeof k === "number" ? k : String(k)
        const isField = parentStruct !== undefined && typeof seg === "string"
        next = {
          path: [...next.path, seg],
          struct: isField ? parentStruct : next.struct,
          fields: isField ? [...next.fields, seg] : next.fields
        }
      }
      return walk(issue.issue, next, typeErrors, unknown, undefined)
    }
    case "Unexpected":
      unknown.push([...st.path])
      return
    case "Composite": {
      const children = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      if (SchemaAST.isUnion(issue.ast)) {
        const real = children.filter((c) => !isNoise(c))
        // the member that got furthest (an object's field errors) explains it best
        const best = real.find((c) => c._tag !== "Type") ?? real[0]
        if (best !== undefined) walk(best, st, typeErrors, unknown, undefined)
        return
      }
      const struct = annotation<string>(issue.ast, GoStructId)
      for (const c of children) walk(c, st, typeErrors, unknown, struct)
      return
    }
    case "Refinement":
    case "Transformation":
      return walk(issue.issue, st, typeErrors, unknown, parentStruct)
    case "Type": {
      if (isNoise(issue)) return
      const custom = annotation(issue.ast, GoMessageId) === true
      const asType = custom ? typeErrorOf(issue.message ?? "") : undefined
      if (custom && asType === undefined) {
        typeErrors.push({ path: st.path, message: issue.message ?? "" })
        return
      }
      const goType = asType ?? goTypeOf(issue.ast) ?? "interface {}"
      const kind = jsonKindOf(issue.actual)
      const value = kind === "number" && goType.startsWith("int") ? `number ${String(issue.actual)}` : kind
      const field = st.fields.length > 0 ? st.fields.join(".") : undefined
      typeErrors.push({ path: st.path, message: unmarshalTypeError(value, goType, st.struct, field) })
      return
    }
    default:
      return
  }
}

/** null → absent in structs (Go's zero value, omitted on the way out); what the schema knows, recursively. */
const dropNulls = (ast: SchemaAST.AST, u: unknown): unknown => {
  if (u === null || typeof u !== "object") return u
  if (SchemaAST.isUnion(ast)) {
    const m = ast.types.find((t) => !(SchemaAST.isLiteral(t) && t.literal === null))
    return m === undefined ? u : dropNulls(m, u)
  }
  if (SchemaAST.isTransformation(ast)) return dropNulls(ast.to, u)
  if (SchemaAST.isTupleType(ast) && Array.isArray(u)) {
    const item = ast.rest[0]?.type
    return item === undefined ? u : u.map((x) => dropNulls(item, x))
  }
  if (SchemaAST.isTypeLiteral(ast) && !Array.isArray(u)) {
    const rec = u as Record<string, unknown>
    if (ast.propertySignatures.length > 0) {
      for (const ps of ast.propertySignatures) {
        const k = String(ps.name)
        if (!(k in rec)) continue
        if (rec[k] === null) delete rec[k]
        else rec[k] = dropNulls(ps.type, rec[k])
      }
    } else if (ast.indexSignatures.length > 0) {
      const value = ast.indexSignatures[0]!.type
      for (const k of Object.keys(rec)) rec[k] = dropNulls(value, rec[k])
    }
  }
  return u
}

/**
 * A body against its kind's schema: the typed object and the unknown fields, or the type errors
 * (all of them; the caller reports the first in document order, as Go's decoder does).
 */
export const decodeGo = (schema: GoSchema, body: unknown): Either.Either<GoDecoded, ReadonlyArray<GoTypeError>> => {
  const strict = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(body)
  const unknown: Array<JsonPath> = []
  if (Either.isLeft(strict)) {
    const typeErrors: Array<GoTypeError> = []
    walk(strict.left.issue, { path: [], struct: undefined, fields: [] }, typeErrors, unknown, undefined)
    if (typeErrors.length > 0) return Either.left(typeErrors)
  }
  const lenient = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })(body)
  if (Either.isLeft(lenient)) {
    return Either.left([{ path: [], message: ParseResult.TreeFormatter.formatErrorSync(lenient.left) }])
  }
  const value = dropNulls(schema.ast, lenient.right) as Record<string, unknown>
  return Either.right({ value, unknown })
}
