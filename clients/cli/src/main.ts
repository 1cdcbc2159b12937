import { CommanderError } from "commander";
import { EXIT, describeFailure } from "./errors";
import { buildProgram } from "./program";

const program = buildProgram();
try {
  await program.parseAsync(process.argv);
  process.exitCode = process.exitCode ?? EXIT.ok;
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has already printed the message (or the help, or the version).
    process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else {
    const { line, exitCode } = describeFailure(error);
    process.stderr.write(`${line}\n`);
    if (program.opts().debug || process.env.FFEDGE_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = exitCode;
  }
}
