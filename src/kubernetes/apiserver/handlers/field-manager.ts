/**
 * managedFields on every write that is not an apply (create.go, update.go, patch.go call
 * `scope.FieldManager.UpdateNoErrors`): the manager is the request's fieldManager, else the
 * product of its User-Agent; it gets the fields the write changed (on create: every field).
 */
import type { KubeObject } from "../../api/object-meta.js"
import * as FieldManager from "../../managedfields/field-manager.js"
import type { Obj } from "../kinds/strategy.js"
import { fieldManagerFor, managerFromUserAgent, zeroValue } from "../write/managed-fields.js"
import type { RequestScope } from "./scope.js"

/** `obj` with its managedFields after a write by the request's manager (`live`: undefined on create) */
export const trackManagedFields = (
  s: RequestScope,
  fieldManager: string,
  live: KubeObject | undefined,
  obj: Obj
): Obj => {
  const cfg = fieldManagerFor(s.info, s.version, s.subresource)
  if (cfg === undefined) return obj
  const manager = fieldManager !== "" ? fieldManager : managerFromUserAgent(s.request.headers["user-agent"])
  const empty = { apiVersion: s.apiVersion, kind: s.info.kind, metadata: {}, ...zeroValue(s.info) }
  const before = (live === undefined ? empty : live) as unknown as FieldManager.Obj
  return FieldManager.update(cfg, before, obj as unknown as FieldManager.Obj, manager) as unknown as Obj
}
