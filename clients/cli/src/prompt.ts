import { Interrupted } from "./errors";

/** A secret from the terminal without echo, or the first line of piped stdin (`echo $KEY | ffedge login`). */
export async function readSecret(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = "";
    for await (const chunk of stdin) text += String(chunk);
    return text.split("\n")[0] ?? "";
  }
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let secret = "";
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === "\r" || char === "\n" || char === "\u0004") {
            stdin.off("data", onData);
            return resolve(secret);
          }
          if (char === "\u0003") {
            stdin.off("data", onData);
            return reject(new Interrupted("ffedge: Interrupted: nothing was saved"));
          }
          if (char === "\u007f" || char === "\b") secret = secret.slice(0, -1);
          else if (char >= " ") secret += char;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}
