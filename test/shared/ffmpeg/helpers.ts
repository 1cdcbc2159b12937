import { AppError } from "../../../shared/errors";
import { buildArgv, checkCommand, type PolicyLimits } from "../../../shared/ffmpeg/index";

export interface Refusal {
  code: string;
  status: number;
  token: unknown;
  detail: string;
}

/** The AppError a refused command throws, as plain data; fails the test if the command is accepted. */
export function refusalOf(command: string, limits?: Partial<PolicyLimits>): Refusal {
  try {
    checkCommand(command, { limits });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, status: error.status, token: error.extra.token, detail: error.detail };
  }
  throw new Error(`expected the command to be refused: ${command}`);
}

/** The argv a command runs with, inputs at /job/in/N and outputs in /job/out. */
export function argvOf(command: string, limits?: Partial<PolicyLimits>): string[] {
  const parsed = checkCommand(command, { limits });
  return buildArgv(parsed, { inputPaths: parsed.inputs.map((_, index) => `/job/in/${index}`), outputDir: "/job/out" });
}

export const SERVICE_PREFIX = ["-nostdin", "-hide_banner", "-nostats", "-y", "-progress", "pipe:1"];
export const IN = "https://example.com/video.mp4";
