/**
 * The broker.conf and proxy settings the Broker stack deploys, read back from its template:
 * the heredocs its broker and proxy containers write at start. `$RMQ_USER`/`$RMQ_PASSWORD`
 * (ECS secrets in AWS) become the values the rehearsal read from the stand-in secret.
 */
import { parseProps } from '../../infra/rocketmq/broker-conf.ts';
import type { Assembly } from './templates.ts';

export interface DeployedRocketMQConf {
  readonly broker: Record<string, string>;
  readonly proxy: Record<string, unknown>;
  /** The secret the RocketMQ containers' RMQ_USER/RMQ_PASSWORD come from, when ACL is on. */
  readonly credentialsSecret?: unknown;
  /** The proxy JVM's `-D` system properties (its JAVA_OPT_EXT), e.g. `-Dtls.server.mode=enforcing`. */
  readonly proxySystemProperties: string[];
  /** The proxy container's secrets (env name -> ECS reference), e.g. its TLS certificate and key. */
  readonly proxySecrets: Record<string, unknown>;
}

export function deployedRocketMQConf(app: Assembly): DeployedRocketMQConf {
  const broker = app.stack('Broker');
  type Env = Array<{ Name: string; Value: unknown }>;
  const scripts = new Map<string, { script: string; secrets: Array<{ Name: string; ValueFrom: unknown }>; env: Env }>();
  for (const [, td] of app.resources(broker, 'AWS::ECS::TaskDefinition')) {
    for (const c of td.Properties.ContainerDefinitions as Array<{
      Name: string;
      Command?: string[];
      Secrets?: Array<{ Name: string; ValueFrom: unknown }>;
      Environment?: Env;
    }>) {
      if (c.Command)
        scripts.set(c.Name, { script: c.Command.join(' '), secrets: c.Secrets ?? [], env: c.Environment ?? [] });
    }
  }
  const brokerScript = must(scripts.get('broker'), `no broker container in ${broker.stack}`);
  const proxyScript = must(scripts.get('proxy'), `no proxy container in ${broker.stack}`);
  return {
    broker: parseProps(heredoc(brokerScript.script, 'broker.conf')),
    proxy: JSON.parse(heredoc(proxyScript.script, 'rmq-proxy.json')) as Record<string, unknown>,
    credentialsSecret: brokerScript.secrets.find((s) => s.Name === 'RMQ_USER')?.ValueFrom,
    // Heap sizes are the task's; system properties are behaviour.
    proxySystemProperties: String(proxyScript.env.find((e) => e.Name === 'JAVA_OPT_EXT')?.Value ?? '')
      .split(/\s+/)
      .filter((o) => o.startsWith('-D')),
    proxySecrets: Object.fromEntries(proxyScript.secrets.map((s) => [s.Name, s.ValueFrom])),
  };
}

/** `$RMQ_USER`/`$RMQ_PASSWORD` as the shell's unquoted heredoc would expand them. */
export function expandCredentials<T>(value: T, user: string, password: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll('$RMQ_USER', user).replaceAll('$RMQ_PASSWORD', password)) as T;
}

function heredoc(script: string, file: string): string {
  const m = new RegExp(`cat > \\S*${file.replace('.', '\\.')} <<EOF\\n([\\s\\S]*?)\\nEOF`).exec(script);
  if (!m) throw new Error(`no heredoc writing ${file} in: ${script.slice(0, 200)}`);
  return m[1]!;
}

function must<T>(v: T | undefined, message: string): T {
  if (v === undefined) throw new Error(message);
  return v;
}
