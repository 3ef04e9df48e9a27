/**
 * Stands in for `@node-rs/crc32` in the edge bundle (esbuild alias, infra/stacks/edge-stack.ts):
 * rocketmq-client-nodejs checks message bodies with its native `crc32`, which cannot be bundled
 * and has no build for the Lambda arm64 image in this repository's lockfile. Node's own zlib
 * computes the same CRC-32 (IEEE), so the whole client bundles and the asset needs no node_modules.
 */
export { crc32 } from 'node:zlib';
