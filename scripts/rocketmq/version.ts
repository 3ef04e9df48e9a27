/**
 * The RocketMQ release the local cluster runs. See README.md in this folder for why
 * 5.5.0 and not 5.5.1 (Maven Central availability and apache/rocketmq#11163).
 */
export const ROCKETMQ_VERSION = '5.5.0';

export const ROCKETMQ_ARTIFACTS = ['rocketmq-namesrv', 'rocketmq-broker', 'rocketmq-proxy', 'rocketmq-tools'].map(
  (artifactId) => ({ groupId: 'org.apache.rocketmq', artifactId, version: ROCKETMQ_VERSION }),
);
