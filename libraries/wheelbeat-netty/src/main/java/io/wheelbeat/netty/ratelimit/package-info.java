/**
 * Rate limits in the pipeline: {@link io.wheelbeat.netty.ratelimit.RateLimitHandler}, per source
 * address or per message key.
 */
package io.wheelbeat.netty.ratelimit;
