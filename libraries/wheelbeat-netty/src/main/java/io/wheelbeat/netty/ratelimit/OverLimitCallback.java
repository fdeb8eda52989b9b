package io.wheelbeat.netty.ratelimit;

import io.netty.channel.ChannelHandlerContext;

/**
 * Receives the messages over a {@link RateLimitHandler}'s limit, for instance to answer
 * "slow down" with the event's retry-after hint.
 *
 * <p>Called on the channel's event loop, after the {@link RateLimitExceededEvent} has been fired.
 */
@FunctionalInterface
public interface OverLimitCallback {

    /**
     * Handles a message over the limit. The callback owns {@code msg}: it must release it or pass
     * it on, even if it throws (an exception goes to the pipeline's {@code exceptionCaught}).
     *
     * @throws Exception anything: it goes to the pipeline's {@code exceptionCaught}
     * @param ctx the context of the {@link RateLimitHandler}
     * @param msg the message refused
     * @param event what was exceeded and when a permit will be available
     */
    void onOverLimit(ChannelHandlerContext ctx, Object msg, RateLimitExceededEvent event) throws Exception;
}
