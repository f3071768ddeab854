/**
 * Resolves when a full stream drained, or closed (a reader that went away: its error, if
 * any, is reported by the stream's 'error' listener). Writers of long exports await it
 * whenever write() returns false, so they hold one page in memory, not the whole export.
 */
export function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
