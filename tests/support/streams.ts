/** Reading a child's output: text lines as they arrive, or the last characters of it. */

/** Splits a byte stream into text lines (without their `\n`), as they arrive. */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
  if (buffer) yield buffer;
}

/** Reads a stream to its end, keeping only its last `keep` characters in `into.text`. */
export async function tail(
  stream: ReadableStream<Uint8Array>,
  keep: number,
  into: { text: string },
): Promise<void> {
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    into.text = (into.text + chunk).slice(-keep);
  }
}
