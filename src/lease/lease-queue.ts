/**
 * etcd's LeaseExpiredNotifier (lease_queue.go): a binary min-heap of (lease id, time) with at most
 * one entry per lease, so renewing a lease moves its entry instead of adding another. The lessor
 * peeks the earliest entry every expiry tick.
 */

export interface LeaseWithTime {
  readonly id: bigint
  /** milliseconds on the lessor's clock */
  time: number
  /** position in the heap array; -1 once removed */
  index: number
}

export class LeaseQueue {
  private readonly heap: Array<LeaseWithTime> = []
  private readonly byId = new Map<bigint, LeaseWithTime>()

  get size(): number {
    return this.heap.length
  }

  /** Adds the lease's entry, or moves it to `time` when it already has one. */
  registerOrUpdate(id: bigint, time: number): void {
    const old = this.byId.get(id)
    if (old !== undefined) {
      old.time = time
      this.fix(old.index)
      return
    }
    const item: LeaseWithTime = { id, time, index: this.heap.length }
    this.heap.push(item)
    this.byId.set(id, item)
    this.up(item.index)
  }

  peek(): LeaseWithTime | undefined {
    return this.heap[0]
  }

  /** Removes and returns the earliest entry. */
  pop(): LeaseWithTime | undefined {
    const top = this.heap[0]
    if (top !== undefined) this.removeAt(0)
    return top
  }

  /** Drops the lease's entry if it has one. */
  remove(id: bigint): void {
    const item = this.byId.get(id)
    if (item !== undefined) this.removeAt(item.index)
  }

  has(id: bigint): boolean {
    return this.byId.has(id)
  }

  timeOf(id: bigint): number | undefined {
    return this.byId.get(id)?.time
  }

  clear(): void {
    for (const item of this.heap) item.index = -1
    this.heap.length = 0
    this.byId.clear()
  }

  private removeAt(i: number): void {
    const item = this.heap[i]!
    const last = this.heap.pop()!
    this.byId.delete(item.id)
    item.index = -1
    if (last !== item) {
      this.heap[i] = last
      last.index = i
      this.fix(i)
    }
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i)
  }

  private less(i: number, j: number): boolean {
    return this.heap[i]!.time < this.heap[j]!.time
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i]!
    const b = this.heap[j]!
    this.heap[i] = b
    this.heap[j] = a
    b.index = i
    a.index = j
  }

  /** Sifts up; true if the entry moved. */
  private up(i: number): boolean {
    const start = i
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(i, parent)) break
      this.swap(i, parent)
      i = parent
    }
    return i !== start
  }

  private down(i: number): void {
    const n = this.heap.length
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) return
      const r = l + 1
      const m = r < n && this.less(r, l) ? r : l
      if (!this.less(m, i)) return
      this.swap(i, m)
      i = m
    }
  }
}
