/**
 * RocketMQ ACL 2.0 users of Sluice and what each may do (least privilege). The broker's super
 * user (initAuthenticationUser in broker.conf) serves only the RocketMQ processes themselves and
 * the init task, which creates these users and their ACLs with mqadmin.
 */
import { ROCKETMQ } from '../config.ts';

export interface RocketMQRole {
  readonly username: string;
  /** Shell variable names the init task reads the user's name and password from (ECS secrets). */
  readonly env: { readonly user: string; readonly password: string };
  /** `mqadmin createAcl` rules: resources (`Topic:x`, `Group:y`) and actions (`Pub`, `Sub`). */
  readonly acls: ReadonlyArray<{ readonly resources: string; readonly actions: string }>;
}

export const ROCKETMQ_ROLES = {
  /** Sends envelopes to the parent topic, nothing else: it cannot read prompts back. */
  edge: {
    username: 'sluice-edge',
    env: { user: 'EDGE_USER', password: 'EDGE_PASSWORD' },
    acls: [{ resources: `Topic:${ROCKETMQ.parentTopic}`, actions: 'Pub' }],
  },
  /**
   * Consumes the wildcard group (receive, ack, Suspend = change invisible duration); also sends to
   * the parent topic, as its redrive worker moves spilled envelopes from SQS into their LiteTopics.
   */
  dispatchers: {
    username: 'sluice-dispatcher',
    env: { user: 'DISPATCHER_USER', password: 'DISPATCHER_PASSWORD' },
    acls: [
      { resources: `Topic:${ROCKETMQ.parentTopic}`, actions: 'Pub,Sub' },
      { resources: `Group:${ROCKETMQ.consumerGroup}`, actions: 'Sub' },
    ],
  },
} as const satisfies Record<string, RocketMQRole>;
