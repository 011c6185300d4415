/**
 * Validation: the kind's rules (ValidateObjectMeta and the kind's Validate on create,
 * ValidateObjectMetaUpdate and ValidateUpdate on update) as the 422
 * `<Kind>[.<group>] "<name>" is invalid: …` with one cause per field error.
 */
import { Effect } from "effect"
import { newInvalid } from "../../api/status.js"
import type { ObjectStage } from "./stage.js"

export const kindValidation: ObjectStage = (ctx, op, obj, old) =>
  Effect.suspend(() => {
    if (op === "DELETE") return Effect.void
    const errs =
      op === "CREATE" || old === undefined ? ctx.strategy.validate(obj) : ctx.strategy.validateUpdate(obj, old)
    if (errs.length === 0) return Effect.void
    return Effect.fail(newInvalid({ group: ctx.info.group, kind: ctx.info.kind }, obj.metadata.name ?? "", errs))
  })
