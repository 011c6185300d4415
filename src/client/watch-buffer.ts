/**
 * A watch's buffer between the gRPC dispatch and its consumer (clientv3's `watcherStream.buf`),
 * read as a Stream.
 *
 * A plain array plus at most one waiting consumer: `offerAll` is synchronous and wakes the consumer
 * once per batch, and the Stream pulls whole batches as Chunks. It does what a Mailbox + toStream
 * would, with less machinery per wake-up (measured in docs/decisions.md, "Client: delivery").
 */
import { Cause, Chunk, Effect, Exit, Option, Stream } from "effect"

type Pull<A, E> = Effect.Effect<Chunk.Chunk<A>, Option.Option<E>>

export class WatchBuffer<A, E> {
  private items: Array<A> = []
  private waiter: ((pull: Pull<A, E>) => void) | undefined
  private exit: Exit.Exit<void, E> | undefined

  /** responses not yet taken by the consumer */
  get size(): number {
    return this.items.length
  }

  get done(): boolean {
    return this.exit !== undefined
  }

  /** Appends a batch (ignored once done) and wakes the consumer. */
  offerAll(batch: ReadonlyArray<A>): void {
    if (this.exit !== undefined || batch.length === 0) return
    for (const a of batch) this.items.push(a)
    this.wake()
  }

  /** Ends the Stream once what is buffered has been taken: normally, with a failure, or a defect. */
  end(exit: Exit.Exit<void, E>): void {
    if (this.exit !== undefined) return
    this.exit = exit
    this.wake()
  }

  private wake(): void {
    const waiter = this.waiter
    if (waiter === undefined) return
    this.waiter = undefined
    waiter(this.take())
  }

  private take(): Pull<A, E> {
    if (this.items.length > 0) {
      const chunk = Chunk.unsafeFromArray(this.items)
      this.items = []
      return Effect.succeed(chunk)
    }
    const exit = this.exit!
    if (Exit.isSuccess(exit)) return Effect.fail(Option.none())
    const failure = Cause.failureOption(exit.cause)
    return failure._tag === "Some"
      ? Effect.fail(Option.some(failure.value))
      : Effect.failCause(Cause.map(exit.cause, Option.some))
  }

  // No canceler: a consumer interrupted while waiting never pulls again, and a late resume of an
  // interrupted fiber is ignored. One closure per wake-up is all this allocates.
  private readonly pull: Pull<A, E> = Effect.async<Chunk.Chunk<A>, Option.Option<E>>((resume) => {
    if (this.items.length > 0 || this.exit !== undefined) return resume(this.take())
    this.waiter = resume
  })

  /** The consumer side: chunks of whatever accumulated since the last pull. */
  readonly stream: Stream.Stream<A, E> = Stream.repeatEffectChunkOption(this.pull)
}
