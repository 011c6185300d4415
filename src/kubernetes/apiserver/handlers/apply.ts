/**
 * endpoints/handlers/patch.go's applyPatcher: a PATCH of `application/apply-patch+yaml` —
 * server-side apply. The configuration (YAML or JSON) is applied by its fieldManager to the
 * current object inside the Store's update (a conflict retries with the fresh object); when the
 * object does not exist, it is created from an empty one (201). Conflicts with other managers are
 * the apiserver's 409 with one FieldManagerConflict cause per field, unless `force=true`. The
 * result is decoded with the kind's type and goes through the same stages as any patch.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import * as YAML from "yaml"
import { BadRequest, Conflict, InternalError, type StatusError } from "../../api/status.js"
import { ApplyBadRequest, ApplyConflict } from "../../managedfields/apply-errors.js"
import * as FieldManager from "../../managedfields/field-manager.js"
import { ListItemError } from "../../managedfields/typed-value.js"
import type { Obj } from "../kinds/strategy.js"
import { checkName } from "../write/object-checks.js"
import { fieldManagerFor } from "../write/managed-fields.js"
import { applyOptions } from "../write/options.js"
import { create as storeCreate, defaulted, update as storeUpdate } from "../write/store.js"
import { objectResponse } from "./output.js"
import { decodePatched } from "./decode-patched.js"
import { type RequestScope, writeContext } from "./scope.js"

/** the configuration: a YAML (or JSON) object */
const parseConfig = (bytes: Uint8Array): Effect.Effect<FieldManager.Obj, StatusError> =>
  Effect.suspend(() => {
    let doc: unknown
    try {
      doc = YAML.parse(Buffer.from(bytes).toString("utf8"), { uniqueKeys: false, intAsBigInt: false })
    } catch (e) {
      return Effect.fail(new BadRequest({ message: `error decoding YAML: ${(e as Error).message.split("\n")[0]}` }))
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc))
      return Effect.fail(
        new BadRequest({
          message: `error decoding YAML: json: cannot unmarshal ${Array.isArray(doc) ? "array" : doc === null ? "null" : typeof doc === "string" ? "string" : "number"} into Go value of type map[string]interface {}`
        })
      )
    return Effect.succeed(doc as FieldManager.Obj)
  })

/** the field manager's errors as the apiserver's Status */
const applied = (f: () => FieldManager.Obj): Effect.Effect<Obj, StatusError> =>
  Effect.try({
    try: () => f() as unknown as Obj,
    catch: (e): StatusError =>
      e instanceof ApplyConflict
        ? new Conflict({ message: e.message, details: { causes: e.causes.map((c) => ({ ...c })) } })
        : e instanceof ApplyBadRequest
          ? new BadRequest({ message: e.message })
          : e instanceof ListItemError
            ? new InternalError({
                message: `Internal error occurred: failed to create typed patch object: ${e.message}`
              })
            : new InternalError({ message: `Internal error occurred: ${(e as Error).message}` })
  })

export const serverSideApply = (
  s: RequestScope,
  name: string,
  bytes: Uint8Array
): Effect.Effect<HttpServerResponse.HttpServerResponse, StatusError> =>
  Effect.gen(function* () {
    const options = yield* applyOptions(s.url.searchParams)
    const config = yield* parseConfig(bytes)
    const configName = (config.metadata?.["name"] as string | undefined) ?? ""
    if (configName !== "") yield* checkName(config as unknown as Obj, name)
    const cfg = fieldManagerFor(s.info, s.version, s.subresource)
    if (cfg === undefined)
      return yield* Effect.fail(new BadRequest({ message: "server-side apply is not supported for this resource" }))
    const ctx = writeContext(s, options.dryRun)
    const p = { type: "apply" as const, patch: config, strict: [] }
    const decode = (o: Obj) =>
      Effect.flatMap(decodePatched(s, p, o, options.fieldValidation, s.warnings), (obj) =>
        defaulted(ctx, "UPDATE", obj)
      )
    const updated = yield* storeUpdate(ctx, name, (current) =>
      Effect.flatMap(
        applied(() =>
          FieldManager.apply(
            cfg,
            structuredClone(current) as unknown as FieldManager.Obj,
            config,
            options.fieldManager,
            options.force
          )
        ),
        decode
      )
    ).pipe(
      Effect.map((o) => ({ object: o, created: false })),
      Effect.catchTag("NotFound", (notFound) =>
        s.subresource !== undefined
          ? Effect.fail(notFound)
          : Effect.gen(function* () {
              const empty: FieldManager.Obj = {
                apiVersion: s.apiVersion,
                kind: s.info.kind,
                metadata: { name, ...(s.namespace !== undefined ? { namespace: s.namespace } : {}) }
              }
              const obj = yield* applied(() =>
                FieldManager.apply(cfg, empty, config, options.fieldManager, options.force)
              )
              const typed = yield* decodePatched(s, p, obj, options.fieldValidation, s.warnings)
              return { object: yield* storeCreate(ctx, yield* defaulted(ctx, "CREATE", typed)), created: true }
            })
      )
    )
    return yield* objectResponse(s, updated.object, updated.created ? 201 : 200)
  })
