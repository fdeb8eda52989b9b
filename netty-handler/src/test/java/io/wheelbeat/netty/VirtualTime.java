package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;

/** EmbeddedChannels in virtual time, for the handler tests. */
public final class VirtualTime {

    private VirtualTime() {
    }

    /** An active channel whose time is frozen before {@code handlers} are added (the handlerAdded path). */
    public static EmbeddedChannel frozenChannel(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(handlers);
        return ch;
    }

    /**
     * Moves virtual time forward 1 ms at a time, so that each timer fires within about a
     * millisecond of its deadline and the deadlines it sets next follow from there, as in real time.
     */
    public static void advance(EmbeddedChannel ch, long millis) {
        for (long i = 0; i < millis; i++) {
            ch.advanceTimeBy(1, MILLISECONDS);
            ch.runScheduledPendingTasks();
        }
    }

    /** The number of timers pending on the shared wheel of {@code ch}'s event loop. */
    public static int pendingTimers(Channel ch) {
        return EventLoopWheels.shared().wheelFor(ch.eventLoop()).wheel().pendingTimers();
    }
}
