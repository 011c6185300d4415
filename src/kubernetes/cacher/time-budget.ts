/**
 * cacher/time_budget.go: how long the dispatcher may block on slow watchers. Refilled at 50 ms per
 * second of wall time, capped at 100 ms, starting empty; `takeAvailable` hands out all of it and
 * `returnUnused` gives back what a dispatch did not use. Over time at most ~5 % of wall time goes
 * to waiting for watchers that do not read.
 */
export const REFRESH_PER_SECOND_MS = 50
export const MAX_BUDGET_MS = 100

export class TimeBudget {
  private budget = 0
  private last: number

  constructor(private readonly now: () => number) {
    this.last = now()
  }

  takeAvailable(): number {
    const t = this.now()
    this.budget = Math.min(MAX_BUDGET_MS, this.budget + ((t - this.last) / 1000) * REFRESH_PER_SECOND_MS)
    this.last = t
    const out = this.budget
    this.budget = 0
    return out
  }

  returnUnused(ms: number): void {
    if (ms <= 0) return
    this.budget = Math.min(MAX_BUDGET_MS, this.budget + ms)
  }
}
