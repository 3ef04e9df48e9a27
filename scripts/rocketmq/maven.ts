import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MavenArtifact {
  readonly groupId: string;
  readonly artifactId: string;
  readonly version: string;
}

export interface FetchJarsOptions {
  /** Folder that ends up holding `lib/` (every jar) and a `.complete` marker. */
  readonly dir: string;
  readonly artifacts: readonly MavenArtifact[];
  readonly log: (line: string) => void;
}

/**
 * Resolves the artifacts and their runtime dependencies from Maven Central into
 * `<dir>/lib`. The `.complete` marker is written last, so an interrupted download is
 * redone instead of leaving a half-filled classpath that fails later in odd ways.
 */
export async function fetchJars(opts: FetchJarsOptions): Promise<string> {
  const lib = join(opts.dir, 'lib');
  const marker = join(opts.dir, '.complete');
  if (existsSync(marker)) return lib;
  rmSync(lib, { recursive: true, force: true });
  mkdirSync(opts.dir, { recursive: true });
  writeFileSync(join(opts.dir, 'pom.xml'), pomFor(opts.artifacts));
  const names = opts.artifacts.map((a) => `${a.artifactId}:${a.version}`).join(', ');
  opts.log(`downloading ${names} and dependencies from Maven Central (first run only, can take minutes)`);
  const started = performance.now();
  await runMaven(opts.dir, [
    '-B',
    '-q',
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${lib}`,
  ]);
  writeFileSync(marker, new Date().toISOString() + '\n');
  const count = readdirSync(lib).length;
  opts.log(`downloaded ${count} jars in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return lib;
}

function pomFor(artifacts: readonly MavenArtifact[]): string {
  const deps = artifacts
    .map(
      (a) =>
        `    <dependency><groupId>${a.groupId}</groupId><artifactId>${a.artifactId}</artifactId><version>${a.version}</version></dependency>`,
    )
    .join('\n');
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>sluice.local</groupId>
  <artifactId>runtime-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${deps}
  </dependencies>
</project>
`;
}

function runMaven(cwd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err) => reject(new Error(`cannot run mvn (is Maven installed?): ${err.message}`)));
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`mvn ${args.join(' ')} failed with exit code ${code}:\n${output.slice(-4000)}`));
    });
  });
}
