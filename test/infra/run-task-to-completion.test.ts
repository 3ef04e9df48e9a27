/**
 * The init custom resource's handler (inline Node.js code): run with a stand-in ECS client and
 * CloudFormation response URL, it reports SUCCESS only after the task stopped with exit 0, and
 * FAILED (so the deploy fails) when the task fails or never starts.
 */
import * as vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HANDLER_SOURCE } from '../../infra/constructs/run-task-to-completion.ts';

type Task = { lastStatus: string; containers?: { exitCode?: number; reason?: string }[]; stoppedReason?: string };

function load(
  describeAnswers: Task[],
  runAnswer: { tasks?: { taskArn: string }[]; failures?: unknown[] } = { tasks: [{ taskArn: 'arn:task/1' }] },
) {
  const sent: Array<{ command: string; input: unknown }> = [];
  const responses: Array<Record<string, unknown>> = [];
  class RunTaskCommand {
    constructor(readonly input: unknown) {}
  }
  class DescribeTasksCommand {
    constructor(readonly input: unknown) {}
  }
  const ecs = {
    ECSClient: class {
      async send(cmd: { input: unknown }) {
        sent.push({ command: cmd.constructor.name, input: cmd.input });
        if (cmd instanceof RunTaskCommand) return runAnswer;
        return { tasks: [describeAnswers.shift() ?? { lastStatus: 'RUNNING' }] };
      }
    },
    RunTaskCommand,
    DescribeTasksCommand,
  };
  const https = {
    request(
      _url: string,
      _opts: unknown,
      onRes: (res: { resume(): void; on(e: string, f: () => void): void }) => void,
    ) {
      let body = '';
      return {
        on() {},
        end(b: string) {
          body = b;
          responses.push(JSON.parse(body) as Record<string, unknown>);
          onRes({ resume() {}, on: (_e, f) => f() });
        },
      };
    },
  };
  const module = { exports: {} as { handler?: (e: unknown) => Promise<void> } };
  const context = vm.createContext({
    require: (name: string) => ({ 'node:https': https, '@aws-sdk/client-ecs': ecs })[name],
    module,
    exports: module.exports,
    console: { error() {} },
    setTimeout: (f: () => void) => f(),
    Buffer,
    Date,
    JSON,
    Promise,
  });
  new vm.Script(HANDLER_SOURCE).runInContext(context);
  return { handler: module.exports.handler!, sent, responses };
}

const event = (type: string) => ({
  RequestType: type,
  ResponseURL: 'https://cloudformation-custom-resource-response.example/x',
  StackId: 'stack',
  RequestId: 'req',
  LogicalResourceId: 'Init',
  PhysicalResourceId: 'run-task-old',
  ResourceProperties: {
    Cluster: 'c',
    TaskDefinition: 'td',
    Subnets: ['s'],
    SecurityGroups: ['g'],
    TimeoutSeconds: '60',
    RunId: 'abc',
  },
});

describe('the init custom resource handler', () => {
  it('answers SUCCESS only once the task stopped with exit 0', async () => {
    const h = load([
      { lastStatus: 'PENDING' },
      { lastStatus: 'RUNNING' },
      { lastStatus: 'STOPPED', containers: [{ exitCode: 0 }] },
    ]);
    await h.handler(event('Create'));
    expect(h.sent.filter((s) => s.command === 'DescribeTasksCommand')).toHaveLength(3);
    expect(h.responses).toHaveLength(1);
    expect(h.responses[0]).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'run-task-abc',
      Data: { TaskArn: 'arn:task/1' },
    });
  });

  it('answers FAILED with the exit code when mqadmin fails, so the deploy fails', async () => {
    const h = load([
      { lastStatus: 'STOPPED', containers: [{ exitCode: 1 }], stoppedReason: 'Essential container in task exited' },
    ]);
    await h.handler(event('Update'));
    expect(h.responses[0]).toMatchObject({ Status: 'FAILED' });
    expect(String(h.responses[0]!.Reason)).toContain('exit 1');
  });

  it('answers FAILED when no task starts', async () => {
    const h = load([], { tasks: [], failures: [{ reason: 'RESOURCE:ENI' }] });
    await h.handler(event('Create'));
    expect(h.responses[0]).toMatchObject({ Status: 'FAILED' });
    expect(String(h.responses[0]!.Reason)).toContain('RESOURCE:ENI');
  });

  it('does nothing on delete', async () => {
    const h = load([]);
    await h.handler(event('Delete'));
    expect(h.sent).toHaveLength(0);
    expect(h.responses[0]).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: 'run-task-old' });
  });
});
