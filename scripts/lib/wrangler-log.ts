import { stripVTControlCharacters } from "node:util";

/**
 * The path `npm start` checks the edge on. Nothing serves it, so the Worker answers a cheap 404,
 * which proves workerd is alive (wrangler's own proxy outlives a killed workerd and answers 5xx).
 */
export const EDGE_HEALTH_PATH = "/npm-start-health-check";

const TABLE_TITLE = "Your Worker has access to the following bindings:";
const CONTAINERS_TITLE = "The following containers are available:";
/** A block that never ends with its blank line is printed rather than held forever. */
const MAX_BLOCK_LINES = 200;

interface WranglerLogOptions {
  /** Request paths whose log lines are the supervisor's own polling. */
  ownPaths: string[];
  /** False in `npm start`, which never runs containers although wrangler.toml declares them. */
  showContainers: boolean;
}

/**
 * Filters `wrangler dev`'s output for `npm start`: drops the request lines of our own polling,
 * prints the bindings table once (wrangler prints it again on every start and reload, unchanged)
 * and, when no containers run, its list of containers. Returns the lines to print for each line read.
 */
export function wranglerLogFilter(options: WranglerLogOptions): (line: string) => string[] {
  const ownRequest = new RegExp(`^\\[wrangler:info\\] (?:GET|HEAD) (?:${options.ownPaths.map(escapeRegExp).join("|")}) \\d{3}\\b`);
  let block: string[] | undefined;
  let lastTable: string | undefined;
  const endBlock = (): string[] => {
    const lines = block ?? [];
    block = undefined;
    const text = lines.map((line) => stripVTControlCharacters(line)).join("\n");
    if (text.startsWith(CONTAINERS_TITLE)) return options.showContainers ? lines : [];
    if (text === lastTable) return [];
    lastTable = text;
    return lines;
  };
  return (line) => {
    const plain = stripVTControlCharacters(line).trimEnd();
    if (block) {
      block.push(line);
      return plain === "" || block.length >= MAX_BLOCK_LINES ? endBlock() : [];
    }
    if (plain === TABLE_TITLE || plain === CONTAINERS_TITLE) {
      block = [line];
      return [];
    }
    return ownRequest.test(plain) ? [] : [line];
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
