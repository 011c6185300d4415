/**
 * The request's warnings (endpoints/filters/warning.go): each text once, in order, as
 * `Warning: 299 - "<text>"` headers (quotes and backslashes escaped); past 4096 runes in all,
 * every warning is cut to 256 runes.
 */
const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
const TRUNCATE_ITEM_RUNES = 256

export class Warnings {
  private readonly texts: Array<string> = []
  private readonly seen = new Set<string>()

  add(text: string): void {
    if (text === "" || this.seen.has(text)) return
    this.seen.add(text)
    this.texts.push(text)
  }

  get size(): number {
    return this.texts.length
  }

  /** The Warning header values (net.NewWarningHeader(299, "", text)), truncated as the apiserver does. */
  headers(): Array<string> {
    const runes = (s: string) => Array.from(s).length
    const total = this.texts.reduce((n, t) => n + runes(t), 0)
    const cut = total > TRUNCATE_AT_TOTAL_RUNES
    return this.texts.map((t) => {
      const text = cut && runes(t) > TRUNCATE_ITEM_RUNES ? Array.from(t).slice(0, TRUNCATE_ITEM_RUNES).join("") : t
      return `299 - "${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
    })
  }
}
