/** How the demo stops: on the first Ctrl-C or SIGTERM, however far its start-up has got. */

/**
 * Aborted by the first SIGINT or SIGTERM. Later ones are ignored: under `tsx`, one Ctrl-C can arrive
 * twice (from the terminal and relayed by tsx), and the stop is bounded anyway. Handling them at all
 * keeps Node from dying before Homebridge is stopped.
 */
export function stopSignal(): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      console.log(`\n${signal}: stopping the demo…`);
      controller.abort();
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller.signal;
}

export function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
    } else {
      signal.addEventListener('abort', () => resolve(), { once: true });
    }
  });
}

/** Settles like `promise`, or rejects as soon as a stop is requested, so start-up never delays it. */
export function unlessStopped<T>(promise: Promise<T>, stop: AbortSignal): Promise<T> {
  return Promise.race([promise, whenAborted(stop).then(() => Promise.reject(stop.reason as Error))]);
}
