package io.wheelbeat.netty.ratelimit;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.netty.ratelimit.RateLimitExceededEvent.Limited;
import java.util.Objects;

/**
 * Applies a {@link KeyedRateLimiter} to a channel's connections or messages, keyed by the remote
 * IP ({@link #builder(KeyedRateLimiter)}) or by a {@link KeyExtractor}:
 * <ul>
 *   <li>{@link Builder#perConnection()}: first in the child pipeline; a connection over the limit
 *       is closed before later handlers see it active; an admitted one removes the handler.</li>
 *   <li>{@link Builder#perMessage()} (default): after the frame decoder; a message over the limit
 *       is dropped, handed to an {@link OverLimitCallback}, or closes the connection.</li>
 * </ul>
 * Each refusal fires a {@link RateLimitExceededEvent} first. Admitting allocates nothing.
 *
 * <p>{@code @Sharable} and stateless per channel: add one instance to every channel so that an
 * address shares one limit; put the limiter on a wheel the server drives, such as
 * {@code EventLoopWheels.shared().wheelFor(bossGroup.next())}.
 */
@Sharable
public final class RateLimitHandler extends ChannelInboundHandlerAdapter {

    /** Takes the keys {@link #keys} finds; erased to Object, see {@link #builder(KeyedRateLimiter, KeyExtractor)}. */
    private final KeyedRateLimiter<Object> limiter;

    private final KeyExtractor<?> keys;
    private final Limited limited;
    private final OverLimitAction action;
    private final OverLimitCallback callback;

    private RateLimitHandler(
            KeyedRateLimiter<Object> limiter,
            KeyExtractor<?> keys,
            Limited limited,
            OverLimitAction action,
            OverLimitCallback callback) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.limited = limited;
        this.action = action;
        this.callback = callback;
    }

    /**
     * Returns a builder of a limit keyed by the remote IP ({@link KeyExtractor#remoteIp()}); a
     * channel without a remote address is not limited.
     *
     * @param limiter the limiter, keyed by remote IP
     * @return a new builder
     * @throws NullPointerException if {@code limiter} is null
     */
    public static Builder builder(KeyedRateLimiter<Object> limiter) {
        return builder(limiter, KeyExtractor.remoteIp());
    }

    /**
     * Returns a builder of a limit keyed by {@code keys}: a user id in the message, say (for
     * {@link Builder#perConnection()}, {@code keys} is asked with a null message). A null key is
     * not limited.
     *
     * @param <K> the type of the keys
     * @param limiter the limiter
     * @param keys finds the key of a channel or message
     * @return a new builder
     * @throws NullPointerException if an argument is null
     */
    @SuppressWarnings("unchecked") // keys yields a K (or null) and the limiter takes a K: the erasure is safe
    public static <K> Builder builder(KeyedRateLimiter<K> limiter, KeyExtractor<? extends K> keys) {
        return new Builder(
                (KeyedRateLimiter<Object>) Objects.requireNonNull(limiter, "limiter"),
                Objects.requireNonNull(keys, "keys"));
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (limited != Limited.CONNECTION) {
            ctx.fireChannelActive();
            return;
        }
        long result = tryAcquire(ctx.channel(), null);
        if (result == KeyedRateLimiter.ADMITTED) {
            ctx.pipeline().remove(this);
            ctx.fireChannelActive();
            return;
        }
        ctx.fireUserEventTriggered(new RateLimitExceededEvent(limiter.name(), limited, action, result));
        ctx.close();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (limited != Limited.MESSAGE) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (action == OverLimitAction.CLOSE && !ctx.channel().isOpen()) {
            // Closed for the limit; a decoder may still hand over the rest of its batch.
            ReferenceCountUtil.release(msg);
            return;
        }
        long result;
        try {
            result = tryAcquire(ctx.channel(), msg);
        } catch (RuntimeException | Error e) {
            ReferenceCountUtil.release(msg);
            throw e;
        }
        if (result == KeyedRateLimiter.ADMITTED) {
            ctx.fireChannelRead(msg);
            return;
        }
        RateLimitExceededEvent event = new RateLimitExceededEvent(limiter.name(), limited, action, result);
        if (action == OverLimitAction.CALLBACK) {
            ctx.fireUserEventTriggered(event);
            callback.onOverLimit(ctx, msg, event);
            return;
        }
        ReferenceCountUtil.release(msg);
        ctx.fireUserEventTriggered(event);
        if (action == OverLimitAction.CLOSE) {
            ctx.close();
        }
    }

    /** Counts a connection ({@code msg == null}) or a message; a null key is not counted. */
    private long tryAcquire(Channel channel, Object msg) {
        Object key = keys.keyOf(channel, msg);
        return key == null ? KeyedRateLimiter.ADMITTED : limiter.tryAcquire(key);
    }

    @Override
    public String toString() {
        return "RateLimitHandler(" + limited + ", " + limiter.name() + ", " + action + ")";
    }

    /**
     * Settings of a {@link RateLimitHandler}: by default each message takes a permit and a message
     * over the limit is dropped. Not thread-safe.
     */
    public static final class Builder {
        private final KeyedRateLimiter<Object> limiter;
        private final KeyExtractor<?> keys;
        private Limited limited = Limited.MESSAGE;
        private OverLimitAction action = OverLimitAction.DROP;
        private OverLimitCallback callback;
        private boolean actionSet;

        private Builder(KeyedRateLimiter<Object> limiter, KeyExtractor<?> keys) {
            this.limiter = limiter;
            this.keys = keys;
        }

        /**
         * Each new connection takes a permit; a connection over the limit is closed at once. Put the
         * handler first in the accepted channels' pipeline.
         *
         * @return this builder
         */
        public Builder perConnection() {
            this.limited = Limited.CONNECTION;
            return this;
        }

        /**
         * Each message takes a permit (the default). Put the handler after the frame decoder.
         *
         * @return this builder
         */
        public Builder perMessage() {
            this.limited = Limited.MESSAGE;
            return this;
        }

        /**
         * Over the limit, release the message and read on. The default for messages.
         *
         * @return this builder
         */
        public Builder dropWhenOver() {
            return action(OverLimitAction.DROP, null);
        }

        /**
         * Over the limit, release the message and close the connection.
         *
         * @return this builder
         */
        public Builder closeWhenOver() {
            return action(OverLimitAction.CLOSE, null);
        }

        /**
         * Over the limit, hand the message to {@code callback}, which then owns it.
         *
         * @param callback what to do with a message over the limit
         * @return this builder
         */
        public Builder whenOver(OverLimitCallback callback) {
            return action(OverLimitAction.CALLBACK, Objects.requireNonNull(callback, "callback"));
        }

        /**
         * Builds the handler; one instance serves every channel ({@code @Sharable}).
         *
         * @return the handler, {@code @Sharable}
         * @throws IllegalStateException if {@link #perConnection()} is combined with
         *     {@link #dropWhenOver()} or {@link #whenOver}: a connection over the limit is always closed
         */
        public RateLimitHandler build() {
            if (limited == Limited.CONNECTION) {
                if (actionSet && action != OverLimitAction.CLOSE) {
                    throw new IllegalStateException("a connection over the limit is closed: "
                            + "perConnection() takes no dropWhenOver() or whenOver(...)");
                }
                return new RateLimitHandler(limiter, keys, Limited.CONNECTION, OverLimitAction.CLOSE, null);
            }
            return new RateLimitHandler(limiter, keys, Limited.MESSAGE, action, callback);
        }

        private Builder action(OverLimitAction action, OverLimitCallback callback) {
            this.action = action;
            this.callback = callback;
            this.actionSet = true;
            return this;
        }
    }
}
