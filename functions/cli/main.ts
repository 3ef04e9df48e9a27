import { runCli } from './sluice.js';

process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  now: () => Date.now(),
  env: process.env,
});
