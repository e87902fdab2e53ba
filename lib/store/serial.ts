/** Runs async jobs one at a time, in call order: the in-process half of a store's write lock. */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `job` after every job queued before it; a failed job does not stop the queue. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(job, job);
    this.#tail = result.catch(() => {});
    return result;
  }
}
