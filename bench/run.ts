/**
 * `npm run bench -- <name> [options]`: runs one benchmark of the local stack by name.
 * A benchmark is a module exporting `(argv) => Promise<void>`; add new ones to BENCHMARKS.
 */
const BENCHMARKS: Record<string, () => Promise<(argv: string[]) => Promise<void>>> = {
  upload: async () => (await import("./upload")).runUploadBenchmark,
  tasks: async () => (await import("./tasks")).runTasksBenchmark,
  load: async () => (await import("./load")).runLoadBenchmark,
  ops: async () => (await import("./ops")).runOpsBenchmark,
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const load = name ? BENCHMARKS[name] : undefined;
  if (!load) {
    process.stderr.write(`usage: npm run bench -- <${Object.keys(BENCHMARKS).join("|")}> [options]\n`);
    process.exit(2);
  }
  await (await load())(rest);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
