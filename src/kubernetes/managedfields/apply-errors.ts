/**
 * The errors server-side apply answers with (internal/conflict.go, structuredmerge.go,
 * versioncheck.go): a conflict (409, reason Conflict, one FieldManagerConflict cause per path)
 * and a bad request (400). The apiserver layer turns them into its Status errors.
 */
import * as PE from "./path-element.js"

export interface ConflictCause {
  readonly reason: "FieldManagerConflict"
  readonly message: string
  readonly field: string
}

export class ApplyConflict extends Error {
  constructor(
    message: string,
    readonly causes: ReadonlyArray<ConflictCause>
  ) {
    super(message)
  }
}

export class ApplyBadRequest extends Error {}

/** printManager: `"name"` [with subresource "sr"] [using apiVersion, for Update managers] */
export const printManager = (id: string): string => {
  let e: Record<string, unknown>
  try {
    const parsed = JSON.parse(id) as unknown
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return JSON.stringify(id)
    e = parsed as Record<string, unknown>
  } catch {
    return JSON.stringify(id)
  }
  let s = JSON.stringify(e["manager"] ?? "")
  if (typeof e["subresource"] === "string" && e["subresource"] !== "")
    s = `${s} with subresource ${JSON.stringify(e["subresource"])}`
  if (e["operation"] === "Update") s = `${s} using ${String(e["apiVersion"] ?? "")}`
  return s
}

/** NewConflictError */
export const conflictError = (conflicts: ReadonlyArray<{ readonly manager: string; readonly path: PE.Path }>) => {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict" as const,
    message: `conflict with ${printManager(c.manager)}`,
    field: PE.pathToString(c.path)
  }))
  if (conflicts.length === 1) {
    const c = conflicts[0]!
    return new ApplyConflict(
      `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${PE.pathToString(c.path)}`,
      causes
    )
  }
  const byManager = new Map<string, Array<string>>()
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), PE.pathToString(c.path)])
  const lines: Array<string> = []
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(m)}:`)
    for (const p of byManager.get(m)!) lines.push(`- ${p}`)
  }
  return new ApplyConflict(`Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`, causes)
}
