/**
 * Per-key rate limits shared across processes through Redis: use
 * {@link io.wheelbeat.ratelimit.redis.RedisLeaseStore} with
 * {@code KeyedRateLimiter.Builder.sharedThrough(...)} when several servers must hold one limit.
 * Decisions stay local, from leases drawn ahead of use (docs/rate-limits.md).
 */
package io.wheelbeat.ratelimit.redis;
