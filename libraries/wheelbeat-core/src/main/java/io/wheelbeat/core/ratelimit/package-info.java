/**
 * Per-key rate limits decided locally in O(1): {@link io.wheelbeat.core.ratelimit.KeyedRateLimiter}
 * applies a {@link io.wheelbeat.core.ratelimit.RateLimit} to each key; a
 * {@link io.wheelbeat.core.ratelimit.LeaseStore} shares it across processes.
 */
package io.wheelbeat.core.ratelimit;
