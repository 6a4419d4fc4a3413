/**
 * A periodic background loop with graceful stop: `stop()` waits for the running iteration
 * and cancels the next one. `wake()` runs the next iteration now (LISTEN/NOTIFY callers).
 */
export interface Loop {
  wake(): void;
  stop(): Promise<void>;
}

export function startLoop(
  name: string,
  intervalMs: number,
  step: () => Promise<unknown>,
  onError: (name: string, err: unknown) => void,
): Loop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let again = false;

  const run = () => {
    timer = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        await step();
      } catch (err) {
        onError(name, err);
      }
    })().finally(() => {
      running = undefined;
      if (stopped) return;
      const delay = again ? 0 : intervalMs;
      again = false;
      timer = setTimeout(run, delay);
    });
  };
  timer = setTimeout(run, 0);

  return {
    wake() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      if (timer) clearTimeout(timer);
      run();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
