import { createServer } from "node:http";

/**
 * An origin that accepts connections and never answers: a task whose input is its URL stays
 * running (downloading) for as long as a test needs, with no timing to tune.
 */
export async function startStalledOrigin(): Promise<{ url: string; close: () => void }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/never.mp4`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
