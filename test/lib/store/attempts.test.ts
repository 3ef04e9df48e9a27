import { createEmbeddedAttempts } from '../../../lib/store/attempts.js';
import { runAttemptStoreConformance } from './attempts-conformance.js';

runAttemptStoreConformance('embedded', async (clock) => createEmbeddedAttempts(clock));
