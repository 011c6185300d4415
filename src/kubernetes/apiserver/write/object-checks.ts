/**
 * The handlers' checks of a decoded body against its URL: the body's apiVersion and kind (unset:
 * the URL's), EnsureObjectNamespaceMatchesRequestNamespace, and an update's checkName — each a
 * 400 with the apiserver's text.
 */
import { Effect } from "effect"
import { BadRequest, type StatusError } from "../../api/status.js"
import type { Obj } from "../kinds/strategy.js"
import type { ResourceInfo } from "../resources.js"

/** The body's TypeMeta against the URL's; set to the URL's when unset. */
export const checkTypeMeta = (info: ResourceInfo, apiVersion: string, obj: Obj): Effect.Effect<void, StatusError> =>
  Effect.suspend(() => {
    const v = typeof obj["apiVersion"] === "string" ? obj["apiVersion"] : ""
    const k = typeof obj["kind"] === "string" ? obj["kind"] : ""
    if (v !== "" && v !== apiVersion)
      return Effect.fail(
        new BadRequest({
          message: `the API version in the data (${v}) does not match the expected API version (${apiVersion})`
        })
      )
    if (k !== "" && k !== info.kind)
      return Effect.fail(
        new BadRequest({ message: `the kind in the data (${k}) does not match the expected kind (${info.kind})` })
      )
    obj["apiVersion"] = apiVersion
    obj["kind"] = info.kind
    return Effect.void
  })

/** EnsureObjectNamespaceMatchesRequestNamespace (namespaces themselves expect none). */
export const ensureNamespace = (
  info: ResourceInfo,
  namespace: string | undefined,
  obj: Obj
): Effect.Effect<void, StatusError> =>
  Effect.suspend(() => {
    const expected = info.namespaced ? (namespace ?? "") : ""
    const actual = obj.metadata.namespace ?? ""
    if (actual === expected) return Effect.void
    if (actual === "") obj.metadata.namespace = expected
    else if (expected === "") delete obj.metadata.namespace
    else
      return Effect.fail(
        new BadRequest({
          message: "the namespace of the provided object does not match the namespace sent on the request"
        })
      )
    return Effect.void
  })

/** checkName: a PUT's body names the object of its URL. */
export const checkName = (obj: Obj, name: string): Effect.Effect<void, StatusError> =>
  (obj.metadata.name ?? "") === name
    ? Effect.void
    : Effect.fail(
        new BadRequest({
          message: `the name of the object (${obj.metadata.name ?? ""}) does not match the name on the URL (${name})`
        })
      )
