// What a command wrote to stdout or stderr, for tests that run a command in-process with a CliIo.
import { Writable } from 'node:stream';

/** A writable stream that keeps everything written to it as text. */
export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += String(chunk);
    cb();
  }
}
