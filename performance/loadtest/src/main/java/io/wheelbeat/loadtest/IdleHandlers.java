package io.wheelbeat.loadtest;

import io.netty.channel.ChannelHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.util.concurrent.TimeUnit;

/**
 * Builds the idle handler under test. The one place that knows the handlers' types, so the two
 * server pipelines differ in this handler and nothing else. Both take the same arguments as
 * Netty's {@code IdleStateHandler(long, long, long, TimeUnit)} and fire Netty's
 * {@code IdleStateEvent}s.
 */
final class IdleHandlers {

    private IdleHandlers() {}

    /**
     * A new handler of {@code kind}, for one channel.
     *
     * @throws IllegalArgumentException for {@link IdleHandlerKind#NONE}, which has no handler
     */
    static ChannelHandler create(IdleHandlerKind kind, long readerIdle, long writerIdle, long allIdle, TimeUnit unit) {
        switch (kind) {
            case WHEEL:
                return new WheelIdleStateHandler(readerIdle, writerIdle, allIdle, unit);
            case NETTY:
                return new IdleStateHandler(readerIdle, writerIdle, allIdle, unit);
            default:
                throw new IllegalArgumentException(kind + " has no idle handler");
        }
    }
}
