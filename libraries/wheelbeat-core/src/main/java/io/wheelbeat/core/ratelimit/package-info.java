/**
 * Per-key rate limits decided locally in O(1): use it to limit connections per address or
 * messages per user. {@link io.wheelbeat.core.ratelimit.KeyedRateLimiter} (thread-safe) applies a
 * {@link io.wheelbeat.core.ratelimit.RateLimit} (sliding window or token bucket) to each key and
 * forgets idle keys with timers on a wheel; {@link io.wheelbeat.core.ratelimit.LeaseStore} shares
 * the limit across processes (module ratelimit-redis implements it on Redis);
 * {@link io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics} binds its meters (needs Micrometer).
 */
package io.wheelbeat.core.ratelimit;
