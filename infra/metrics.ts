/**
 * The custom CloudWatch metrics the infrastructure scales and alarms on. The edge and
 * the dispatchers publish them (embedded metric format through the Lambda/awslogs log
 * stream, dimension `Stage`); this file is the contract between them and the CDK code.
 */
export const SLUICE_NAMESPACE = 'Sluice';

export const METRICS = {
  /** Admissions answered admit-with-warning (tier near its limit); dimensions Stage, Tier. */
  admissionWarning: 'AdmissionWarning',
  /** Requests refused with 429; dimensions Stage, Tier. */
  admissionRejected: 'AdmissionRejected',
  /** Envelopes written to the SQS spillover because the broker was unreachable; dimension Stage. */
  spilloverSent: 'SpilloverSent',
  /** Messages waiting in LiteTopics of the consumer group, as last seen by a dispatcher; dimension Stage. */
  dispatcherBacklog: 'DispatcherBacklog',
  /** Upstream requests in flight across the dispatchers; dimension Stage. */
  inflight: 'Inflight',
} as const;
