/**
 * The Broker stack's one-off init task, run here: its container command read from the
 * template (the same mqadmin script the deploy runs) against the local RocketMQ, with an
 * `$ROCKETMQ_HOME/bin/mqadmin` that starts the tools' main class from the Maven jars the local
 * broker runs on. The Cloud Map namesrv names stand for the local namesrv.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JDK17_OPENS } from '../rocketmq/jvm.ts';
import { ROCKETMQ_VERSION } from '../rocketmq/version.ts';
import type { Assembly } from './templates.ts';

export async function runBrokerInit(options: {
  app: Assembly;
  cacheDir: string;
  namesrv: string;
  log: (line: string) => void;
  /** The value of one of the init container's ECS secret references (`ValueFrom`). */
  secret: (valueFrom: unknown) => string;
}): Promise<{ ok: boolean; detail: string }> {
  const broker = options.app.stack('Broker');
  const commands: string[] = [];
  // The container's secrets, as ECS injects them (the super user, the users it creates).
  const secretEnv: Record<string, string> = {};
  for (const [, td] of options.app.resources(broker, 'AWS::ECS::TaskDefinition')) {
    for (const c of td.Properties.ContainerDefinitions as Array<{
      Name: string;
      Command?: string[];
      Secrets?: Array<{ Name: string; ValueFrom: unknown }>;
    }>) {
      if (c.Name !== 'mqadmin' || !c.Command) continue;
      commands.push(c.Command.join(' '));
      for (const s of c.Secrets ?? []) secretEnv[s.Name] = options.secret(s.ValueFrom);
    }
  }
  if (commands.length !== 1)
    return { ok: false, detail: `expected one mqadmin init container in ${broker.stack}, found ${commands.length}` };
  // -n '<namesrv-a>;<namesrv-b>' -> the local namesrv
  const script = commands[0]!.replace(/-n '[^']*'/g, `-n '${options.namesrv}'`);
  options.log(`broker init: secrets ${Object.keys(secretEnv).sort().join(', ')} from the stand-in`);
  const home = mkdtempSync(join(tmpdir(), 'sluice-rocketmq-home-'));
  mkdirSync(join(home, 'bin'));
  mkdirSync(join(home, 'conf'));
  const lib = join(options.cacheDir, `rocketmq-${ROCKETMQ_VERSION}`, 'lib');
  const mqadmin = join(home, 'bin', 'mqadmin');
  writeFileSync(
    mqadmin,
    `#!/bin/sh\nexec java -Xms64m -Xmx256m ${JDK17_OPENS.join(' ')} -cp '${lib}/*' org.apache.rocketmq.tools.command.MQAdminStartup "$@"\n`,
  );
  chmodSync(mqadmin, 0o755);
  options.log(`broker init: the stack's mqadmin script, ROCKETMQ_HOME=${home}`);
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script], {
      env: { ...process.env, ...secretEnv, ROCKETMQ_HOME: home, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const collect = (d: Buffer) => {
      out += d.toString();
      for (const line of d.toString().split('\n').filter(Boolean)) options.log(`[mqadmin] ${line.slice(0, 200)}`);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const ready = out.includes('sluice: topic and group ready');
      resolve({
        ok: code === 0 && ready,
        detail: `exit ${code}${ready ? ', "sluice: topic and group ready"' : `: ${out.slice(-400)}`}`,
      });
    });
  });
}
