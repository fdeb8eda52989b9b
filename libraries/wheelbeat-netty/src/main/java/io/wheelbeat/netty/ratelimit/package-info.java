/**
 * Rate limits in the pipeline: use {@link io.wheelbeat.netty.ratelimit.RateLimitHandler} to limit
 * connections per source address or messages per key with a heartbeat-core
 * {@code KeyedRateLimiter}; over the limit it drops, calls your
 * {@link io.wheelbeat.netty.ratelimit.OverLimitCallback} or closes
 * ({@link io.wheelbeat.netty.ratelimit.OverLimitAction}), firing a
 * {@link io.wheelbeat.netty.ratelimit.RateLimitExceededEvent}.
 */
package io.wheelbeat.netty.ratelimit;
