package io.wheelbeat.netty.ratelimit;

/**
 * What a {@link RateLimitHandler} does with a connection or message over its limit.
 */
public enum OverLimitAction {

    /** Release the message ({@code ReferenceCountUtil.release}) and read on. */
    DROP,

    /** Hand the message to the user's {@link OverLimitCallback}, which then owns it. */
    CALLBACK,

    /** Close the connection; the message, and any read after it, is released. */
    CLOSE
}
