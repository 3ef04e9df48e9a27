/** `npm run bench -- chaos [--size small|full] [--faults a,b]`: see bench/chaos.ts. */
import { chaosMain } from '../chaos.js';

try {
  await chaosMain(process.argv.slice(2));
  process.exit(0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
