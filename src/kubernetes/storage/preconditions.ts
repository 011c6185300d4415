/**
 * storage.Preconditions.Check: what a guarded update or delete requires of the stored object
 * (its uid, its resourceVersion), as the registry reports a mismatch — 409 Conflict with the
 * storage error's text.
 */
import type { KubeObject } from "../api/object-meta.js"
import type { GroupResource, StatusError } from "../api/status.js"
import { invalidObj } from "./etcd3/errors.js"
import type { Preconditions } from "./interfaces.js"

export const checkPreconditions = (
  gr: GroupResource,
  key: string,
  p: Preconditions | undefined,
  obj: KubeObject
): StatusError | undefined => {
  if (p === undefined) return undefined
  if (p.uid !== undefined && p.uid !== (obj.metadata.uid ?? "")) {
    return invalidObj(
      gr,
      key,
      `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${obj.metadata.uid ?? ""}`
    )
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== (obj.metadata.resourceVersion ?? "")) {
    return invalidObj(
      gr,
      key,
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ""}`
    )
  }
  return undefined
}
