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

/** Reads a stream's text (e.g. an event stream, comments included) until `done(text)` holds or `ms` pass; returns what was read. */
export async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  done: (text: string) => boolean,
  ms = 3000,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (!done(text)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out; read so far: ${JSON.stringify(text)}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const chunk = await Promise.race([
      reader.read(),
      new Promise<never>((
        _,
        reject,
      ) => (timer = setTimeout(() => reject(new Error(`timed out: ${text}`)), left))),
    ]).finally(() => clearTimeout(timer));
    if (chunk.done) return text;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}
