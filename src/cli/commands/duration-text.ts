/**
 * Go-style durations as etcdctl takes them ("500ms", "2s", "1m", "1h"), in milliseconds; a leaf
 * module so the lean path (src/cli/lean/) reads --dial-timeout and --command-timeout exactly as
 * global.ts does without loading effect.
 */
export const durationMillis = (text: string): number | undefined => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim())
  if (m === null) return undefined
  const n = Number(m[1])
  const unit = m[2]
  return unit === "ms" ? n : unit === "s" ? n * 1000 : unit === "m" ? n * 60_000 : n * 3_600_000
}
