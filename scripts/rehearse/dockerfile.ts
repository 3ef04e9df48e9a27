/**
 * Builds an image's file system the way its Dockerfile says, without a Docker engine
 * (there is none here): each stage gets a directory standing for its root; WORKDIR, ENV,
 * COPY (from the context or `--from` a stage) and RUN (through `sh -c`, in the stage's
 * working directory) are applied in order; CMD is what to start. One deviation, said where
 * it happens: `npm ci` in a stage links the repository's node_modules (the same lockfile's
 * install) instead of installing it again, when the lockfile is the same (an older app's is
 * not: then it runs). Runs only on the commands this format uses.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Image {
  /** Directory of the final stage's working directory. */
  readonly workdir: string;
  readonly env: Record<string, string>;
  readonly cmd: string[];
  /** What was done, step by step, for the log. */
  readonly steps: string[];
}

interface Stage {
  readonly name: string;
  readonly root: string;
  workdir: string;
  env: Record<string, string>;
  cmd: string[];
}

/** Instructions with line continuations joined and comments dropped. */
export function instructions(dockerfile: string): Array<{ op: string; args: string }> {
  const out: Array<{ op: string; args: string }> = [];
  let pending = '';
  for (const raw of dockerfile.split('\n')) {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\w+)\s+(.*)$/s.exec(full);
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** The stack's one Docker image asset: its build context (a directory in cdk.out) and Dockerfile within it. */
export function dockerAsset(out: string, stack: string): { context: string; dockerFile: string } {
  const manifest = JSON.parse(readFileSync(join(out, `${stack}.assets.json`), 'utf8')) as {
    dockerImages?: Record<string, { source: { directory: string; dockerFile?: string } }>;
  };
  const images = Object.values(manifest.dockerImages ?? {});
  if (images.length !== 1) throw new Error(`${stack}: expected one Docker image asset, found ${images.length}`);
  return {
    context: resolve(out, images[0]!.source.directory),
    dockerFile: images[0]!.source.dockerFile ?? 'Dockerfile',
  };
}

export function buildImage(options: {
  dockerfile: string;
  context: string;
  /** The repository whose installed node_modules stands in for `npm ci` of the same package-lock.json. */
  modules: string;
  into: string;
  log: (line: string) => void;
}): Image {
  const stages: Stage[] = [];
  const steps: string[] = [];
  rmSync(options.into, { recursive: true, force: true });
  const inStage = (s: Stage, p: string) => join(s.root, p.startsWith('/') ? p : join(s.workdir, p));
  for (const { op, args } of instructions(readFileSync(options.dockerfile, 'utf8'))) {
    const stage = stages.at(-1);
    if (op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      const name = m[2] ?? String(stages.length);
      const root = join(options.into, `stage-${stages.length}-${name}`);
      mkdirSync(root, { recursive: true });
      stages.push({ name, root, workdir: '/', env: {}, cmd: [] });
      steps.push(`FROM ${m[1]} (base image: this machine's Node.js ${process.version})`);
      continue;
    }
    if (!stage) throw new Error(`${op} before FROM`);
    if (op === 'WORKDIR') {
      stage.workdir = args;
      mkdirSync(join(stage.root, args), { recursive: true });
    } else if (op === 'ENV') {
      for (const m of args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) stage.env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
    } else if (op === 'COPY') {
      const from = /^--from=(\S+)\s+/.exec(args);
      const rest = (from ? args.slice(from[0].length) : args).split(/\s+/);
      const dest = rest.pop()!;
      const source = from ? stages.find((s) => s.name === from[1]) : undefined;
      if (from && !source) throw new Error(`COPY --from=${from[1]}: no such stage`);
      for (const src of rest) {
        const abs = source ? join(source.root, src) : join(options.context, src);
        const target =
          dest.endsWith('/') || rest.length > 1
            ? join(inStage(stage, dest), src.split('/').pop()!)
            : inStage(stage, dest);
        cpSync(abs, target, { recursive: true });
      }
    } else if (op === 'RUN') {
      const cwd = join(stage.root, stage.workdir);
      if (
        /^npm ci\b/.test(args) &&
        sameFile(join(cwd, 'package-lock.json'), join(options.modules, 'package-lock.json'))
      ) {
        // The deviation: the repository's install of the same lockfile stands in for `npm ci`.
        if (!existsSync(join(cwd, 'node_modules')))
          symlinkSync(join(options.modules, 'node_modules'), join(cwd, 'node_modules'));
        steps.push(`RUN ${args}  -> linked the repository's node_modules (same package-lock.json)`);
        continue;
      }
      options.log(`RUN ${args}`);
      execFileSync('sh', ['-c', args], {
        cwd,
        env: { ...process.env, ...stage.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } else if (op === 'CMD') {
      stage.cmd = JSON.parse(args) as string[];
    } else if (!['USER', 'STOPSIGNAL', 'EXPOSE', 'LABEL', 'ARG'].includes(op)) {
      throw new Error(`Dockerfile instruction ${op} is not supported by the rehearsal`);
    }
    steps.push(`${op} ${args}`);
  }
  const last = stages.at(-1);
  if (!last) throw new Error('empty Dockerfile');
  return { workdir: join(last.root, last.workdir), env: last.env, cmd: last.cmd, steps };
}

function sameFile(a: string, b: string): boolean {
  return existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
}
