/**
 * A Python with the official `openai` SDK for the SDK contract test: the system's, when
 * it has the package, else a venv under .cache/ (gitignored) installed from PyPI on
 * first use. Throws when neither works: the test then fails, it is never skipped.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const VENV = fileURLToPath(new URL('../../.cache/sdk-python/', import.meta.url));
const venvPython = `${VENV}bin/python`;

function hasOpenAi(python: string): boolean {
  try {
    execFileSync(python, ['-c', 'import openai'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function pythonWithOpenAi(): string {
  if (hasOpenAi('python3')) return 'python3';
  if (existsSync(venvPython) && hasOpenAi(venvPython)) return venvPython;
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  try {
    run('python3', ['-m', 'venv', VENV]);
    run(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'openai']);
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`could not install the Python openai SDK into ${VENV}: ${stderr.slice(-2000)}`);
  }
  if (!hasOpenAi(venvPython)) throw new Error(`the Python openai SDK is not importable from ${venvPython}`);
  return venvPython;
}
