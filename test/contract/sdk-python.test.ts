/** The official Python `openai` SDK, unchanged, against a local Sluice (see sdk_python.py). */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../functions/local/sluice.js';
import { KEYS, startTestSluice } from '../support/local-sluice.js';
import { pythonWithOpenAi } from '../support/python-openai.js';

let sluice: LocalSluice;
let python: string;
beforeAll(async () => {
  python = pythonWithOpenAi();
  sluice = await startTestSluice();
}, 600_000);
afterAll(() => sluice?.close());

describe('Python openai SDK against Sluice', () => {
  it('chat (with a choices[0] loop), completions, embeddings, models, responses sync and stream', async () => {
    const script = fileURLToPath(new URL('./sdk_python.py', import.meta.url));
    const { stdout } = await promisify(execFile)(python, [script, `${sluice.url}/v1`, KEYS.a1], {
      timeout: 60_000,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`sdk_python.py failed:\n${error.stdout ?? ''}\n${error.stderr ?? String(error)}`);
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(seen.models).toEqual(['m']);
    expect(seen.chat_stream_chunks).toBeGreaterThan(2);
    expect(seen.responses_stream_events).toBeGreaterThan(4);
  });
});
