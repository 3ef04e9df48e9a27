/**
 * The smoke test a new user would run after `cdk deploy`, through the edge URL: add an
 * account (infra/README.md, "First request"), then a sync, a streamed and an async chat
 * completion, a limit changed in SSM that shows in `x-ratelimit-limit-requests`, and
 * a model's `saturation` set in SSM that makes the dispatcher read its GPU's metrics.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface SmokeOptions {
  readonly baseUrl: string;
  /** The function URL called directly, around CloudFront: it must refuse. */
  readonly functionUrl: string;
  /** The admin API's key, as an operator reads it from Secrets Manager; undefined when the edge names no such secret. */
  readonly adminKey: string | undefined;
  readonly model: string;
  /** A model whose GPU answers only after the origin read timeout: a sync request to it must not be cut. */
  readonly slowModel: string;
  readonly originReadTimeoutSeconds: number;
  readonly log: (line: string) => void;
  putParameter(name: string, value: string): Promise<void>;
  getParameter(name: string): Promise<string>;
  /** How soon a changed policy must show (the edge's SSM refresh interval). */
  readonly refreshMs: number;
  /** How many times the model's GPU has served its metrics page (GET /metrics) so far. */
  metricsReads(): number;
  /** How many times the dispatchers have logged a changed policy applied so far. */
  policiesApplied(): number;
}

export interface SmokeResult {
  readonly checks: Array<{ name: string; ok: boolean; detail: string }>;
}

export async function smoke(o: SmokeOptions): Promise<SmokeResult> {
  const checks: SmokeResult['checks'] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  const key = `sk-${randomBytes(16).toString('hex')}`;
  const hash = createHash('sha256').update(key).digest('hex');
  await o.putParameter('tenants', JSON.stringify({ acme: {} }));
  await o.putParameter(
    'accounts',
    JSON.stringify({ 'acme-app': { tenant: 'acme', tier: 'realtime', keyHashes: [hash] } }),
  );
  // The model's slots taken from its GPU's metrics from now on (README, "Slots from the servers' metrics").
  const readsBefore = o.metricsReads();
  const models = JSON.parse(await o.getParameter('models')) as Record<string, Record<string, unknown>>;
  if (Object.hasOwn(models, o.model)) models[o.model]!.saturation = {};
  await o.putParameter('models', JSON.stringify(models));
  // The edge and the dispatchers re-read the policy within the refresh interval; a request sent
  // sooner may reach a dispatcher that does not know the account yet (it answers 404), as in AWS.
  o.log(
    `account added; waiting the policy refresh interval (${o.refreshMs / 1000} s) as infra/README.md tells a user to`,
  );
  const appliedBefore = o.policiesApplied();
  const addedAt = performance.now();
  await sleep(o.refreshMs + 2_000);
  // A dispatcher whose refresh failed (SSM slow on a loaded machine) learns of the account at a
  // later one; its requests would expire meanwhile, which says nothing about the request path.
  for (let waited = 0; o.policiesApplied() === appliedBefore && waited < 2 * o.refreshMs; waited += 1_000)
    await sleep(1_000);
  o.log(
    o.policiesApplied() > appliedBefore
      ? `the dispatcher applied the new policy within ${Math.round((performance.now() - addedAt) / 1000)} s`
      : `the dispatcher has not logged the new policy ${Math.round((performance.now() - addedAt) / 1000)} s after it was put; sending anyway`,
  );
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const chat = (extra: Record<string, unknown>) =>
    JSON.stringify({
      model: o.model,
      messages: [{ role: 'user', content: 'Say hello in a few words.' }],
      max_tokens: 48,
      ...extra,
    });

  // Started first, read last: it waits past CloudFront's origin read timeout while the rest runs.
  const long = longSync(
    o,
    headers,
    JSON.stringify({ model: o.slowModel, messages: [{ role: 'user', content: 'Take your time.' }], max_tokens: 2 }),
  );
  try {
    // sync
    const t0 = performance.now();
    const sync = await fetch(`${o.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: chat({}) });
    const syncBody = await sync.text();
    const content = safeJson(syncBody)?.choices?.[0]?.message?.content;
    check(
      'sync chat completion',
      sync.status === 200 && typeof content === 'string' && content.length > 0,
      `${sync.status} in ${Math.round(performance.now() - t0)} ms: ${syncBody.slice(0, 160)}`,
    );

    // stream: chunks arrive before the answer ends
    const t1 = performance.now();
    const stream = await fetch(`${o.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: chat({ stream: true }),
    });
    const arrivals: number[] = [];
    let text = '';
    if (stream.body) {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        const s = decoder.decode(chunk, { stream: true });
        if (s.includes('data:')) arrivals.push(performance.now() - t1);
        text += s;
      }
    }
    const end = performance.now() - t1;
    const events = text.split('\n').filter((l) => l.startsWith('data:')).length;
    const firstAt = arrivals[0] ?? end;
    check(
      'stream: chunks before the end',
      stream.status === 200 && text.includes('data: [DONE]') && arrivals.length >= 2 && end - firstAt >= 100,
      `${stream.status}, ${events} SSE events in ${arrivals.length} reads; first at ${Math.round(firstAt)} ms, end at ${Math.round(end)} ms`,
    );

    // async
    const asyncRes = await fetch(`${o.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, prefer: 'respond-async' },
      body: chat({}),
    });
    const accepted = safeJson(await asyncRes.text()) as { id?: string; status_url?: string } | undefined;
    let final: { status?: string } | undefined;
    if (asyncRes.status === 202 && accepted?.status_url) {
      // status_url is relative unless SLUICE_PUBLIC_BASE_URL names the public host; the path is what a client follows.
      const path = new URL(accepted.status_url, 'http://sluice.invalid').pathname;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        final = safeJson(await (await fetch(`${o.baseUrl}${path}`, { headers })).text()) as { status?: string };
        if (final?.status && final.status !== 'queued' && final.status !== 'running') break;
        await sleep(250);
      }
    }
    check(
      'async: 202 then the result',
      asyncRes.status === 202 && final?.status === 'completed',
      `${asyncRes.status} ${accepted?.id ?? ''}, then ${JSON.stringify(final ?? {}).slice(0, 160)}`,
    );

    // around CloudFront: refused
    const bypass = await fetch(`${o.functionUrl}/v1/chat/completions`, { method: 'POST', headers, body: chat({}) });
    const bypassBody = await bypass.text();
    check(
      'function URL called directly is refused',
      bypass.status === 403,
      `${bypass.status}: ${bypassBody.slice(0, 160)}`,
    );

    // the admin API, behind its key
    const admin =
      o.adminKey === undefined
        ? undefined
        : await fetch(`${o.baseUrl}/admin/v1/policy`, { headers: { authorization: `Bearer ${o.adminKey}` } });
    const adminBody = admin ? await admin.text() : '';
    const noKey = await fetch(`${o.baseUrl}/admin/v1/policy`, { headers });
    await noKey.text();
    check(
      'admin API: the key from Secrets Manager opens it, a client key does not',
      admin?.status === 200 && adminBody.includes('"tiers"') && noKey.status === 401,
      `${admin ? `with the admin key ${admin.status}` : 'the edge names no admin key secret (SLUICE_ADMIN_SECRET_ID)'}, with a client key ${noKey.status}`,
    );

    // a limit changed in SSM shows within the refresh interval
    const defaults = JSON.parse(await o.getParameter('defaults')) as { accountModel: { rpm: number } };
    const before = await fetch(`${o.baseUrl}/v1/models`, { headers });
    await before.text();
    const rpm = defaults.accountModel.rpm - 1;
    defaults.accountModel.rpm = rpm;
    const changedAt = performance.now();
    await o.putParameter('defaults', JSON.stringify(defaults));
    let shown: string | null = null;
    let waited = 0;
    while (waited < o.refreshMs + 10_000) {
      const r = await fetch(`${o.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...headers, prefer: 'respond-async' },
        body: chat({ max_tokens: 4 }),
      });
      await r.text();
      shown = r.headers.get('x-ratelimit-limit-requests');
      waited = performance.now() - changedAt;
      if (shown === String(rpm)) break;
      await sleep(1_000);
    }
    check(
      'put-parameter shows in x-ratelimit-limit-requests',
      shown === String(rpm) && waited <= o.refreshMs + 2_000,
      `defaults.accountModel.rpm -> ${rpm}: header ${shown} after ${(waited / 1000).toFixed(1)} s (refresh interval ${o.refreshMs / 1000} s)`,
    );
    const readsAfter = o.metricsReads();
    check(
      `the dispatcher reads the ${o.model} GPU's metrics once the policy sets its saturation`,
      readsBefore === 0 && readsAfter > 0,
      `GET /metrics answered by the GPU: ${readsBefore} before models.${o.model}.saturation was put, ${readsAfter} since`,
    );
  } catch (err) {
    check('smoke requests', false, err instanceof Error ? err.message : String(err));
  }
  const l = await long;
  check(
    `sync request waiting past the origin read timeout (${o.originReadTimeoutSeconds} s) is kept alive`,
    l.status === 200 && l.object === 'chat.completion' && l.seconds > o.originReadTimeoutSeconds,
    `${l.status} after ${l.seconds.toFixed(1)} s, keepalive ${l.keepalive}, ${l.leading} leading whitespace bytes: ${l.text.trim().slice(0, 120)}`,
  );
  return { checks };
}

/** A sync chat completion that takes longer than the origin read timeout, as an OpenAI client reads it (JSON.parse of the body). */
async function longSync(o: SmokeOptions, headers: Record<string, string>, body: string) {
  const t0 = performance.now();
  try {
    const res = await fetch(`${o.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body });
    const text = await res.text();
    const seconds = (performance.now() - t0) / 1000;
    return {
      status: res.status,
      text,
      seconds,
      keepalive: res.headers.get('x-sluice-keepalive'),
      leading: /^\s*/.exec(text)![0].length,
      object: safeJson(text)?.object,
    };
  } catch (err) {
    return {
      status: 0,
      text: String(err),
      seconds: (performance.now() - t0) / 1000,
      keepalive: null,
      leading: 0,
      object: undefined,
    };
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
