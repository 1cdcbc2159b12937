// validate needs the SDK's reading of local inputs without its uploads (prepare() uploads).
import { localInputs, rewrite, words } from "../../sdk/src/command";

/**
 * The command as the service will see it once `run` has uploaded its local inputs: each becomes
 * a placeholder https URL, so the policy judges everything else without uploading anything.
 */
export async function withPlaceholderInputs(command: string, cwd: string): Promise<{ command: string; local: Map<string, string> }> {
  const argv = words(command);
  const inputs = argv ? await localInputs(argv, cwd) : [];
  const local = new Map<string, string>();
  const replacements = inputs.map((input, index) => {
    const url = `https://example.com/local-input-${index}/${encodeURIComponent(input.word.value.split(/[\\/]/).pop() || "input")}`;
    local.set(url, input.word.value);
    return { word: input.word, url };
  });
  return { command: rewrite(command, replacements), local };
}
