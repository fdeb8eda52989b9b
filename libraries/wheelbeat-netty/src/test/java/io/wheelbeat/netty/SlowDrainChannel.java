package io.wheelbeat.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.Ticker;

/**
 * An {@code EmbeddedChannel} whose pretend socket takes at most {@link #drainBudget} bytes per
 * flush: flushed messages stay in the outbound buffer, partly written, as with a slow consumer.
 * Their promises complete only when their last byte is taken. Messages must be {@link ByteBuf}s.
 */
public class SlowDrainChannel extends EmbeddedChannel {

    private long drainBudget = Long.MAX_VALUE;

    /** On EmbeddedChannel's own clock (which {@code freezeTime()} and {@code advanceTimeBy} drive). */
    public SlowDrainChannel() {}

    /** On {@code ticker}: the event loop's clock, which the test then drives itself. */
    public SlowDrainChannel(Ticker ticker) {
        super(EmbeddedChannel.builder().ticker(ticker));
    }

    private SlowDrainChannel(boolean register) {
        super(register, false);
    }

    /**
     * Another channel on the event loop of {@code first}, registered and active: channels that
     * share one loop (its scheduler, its wheel, its clock), driven through {@code first}.
     */
    public static SlowDrainChannel onLoopOf(EmbeddedChannel first) {
        SlowDrainChannel ch = new SlowDrainChannel(false);
        first.eventLoop().register(ch).syncUninterruptibly();
        return ch;
    }

    /** Bytes the next flushes take, each; {@code Long.MAX_VALUE} drains everything flushed. */
    public void drainBudget(long bytes) {
        this.drainBudget = bytes;
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) {
        long left = drainBudget;
        Object msg;
        while (left > 0 && (msg = in.current()) != null) {
            int taken = (int) Math.min(((ByteBuf) msg).readableBytes(), left);
            in.removeBytes(taken);
            left -= taken;
        }
    }
}
