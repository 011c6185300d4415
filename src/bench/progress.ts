/**
 * What a scenario is counting right now, for the progress bar. The scenario names a phase and a
 * counter; the runner polls it on a timer, so counting costs the hot path nothing extra.
 */
import type { Progress } from "./result.js"

export class ProgressTracker {
  private phase = ""
  private total = 0
  private done: () => number = () => 0

  track(phase: string, total: number, done: () => number): void {
    this.phase = phase
    this.total = total
    this.done = done
  }

  snapshot(): Progress {
    return { phase: this.phase, total: this.total, done: Math.min(this.done(), this.total) }
  }
}
