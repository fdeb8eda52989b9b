/**
 * Retry backoff with no Netty and no clock: {@link io.wheelbeat.core.backoff.BackoffPolicy}
 * (exponential delays with a cap, the AWS jitters and gRPC's preset, a limit on attempts) and
 * {@link io.wheelbeat.core.backoff.BackoffSchedule} (one connection's run of failures, turned
 * into deadlines for a timer wheel).
 */
package io.wheelbeat.core.backoff;
