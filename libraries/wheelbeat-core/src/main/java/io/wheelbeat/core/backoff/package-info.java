/**
 * Retry backoff without a clock: {@link io.wheelbeat.core.backoff.BackoffPolicy} (delays) and
 * {@link io.wheelbeat.core.backoff.BackoffSchedule} (one connection's deadlines).
 */
package io.wheelbeat.core.backoff;
