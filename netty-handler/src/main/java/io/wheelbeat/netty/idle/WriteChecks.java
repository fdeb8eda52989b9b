package io.wheelbeat.netty.idle;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.timeout.IdleState;
import io.wheelbeat.core.ExecutorDrivenWheel;

/**
 * The state of a {@link WheelIdleStateHandler}'s writer and all checks and the write traffic they
 * count from, kept only by a handler that watches one of them. It is also the listener of every
 * write, one for all of them as in Netty, so that writes allocate no listener.
 *
 * <p>Every method is for the handler's executor thread only, except {@link #operationComplete},
 * which runs where the write completes (the channel's loop), as Netty's write listener does.
 */
class WriteChecks implements ChannelFutureListener {
    private final WheelIdleStateHandler handler;
    private long lastWriteTime;
    private boolean firstWriterIdleEvent = true;
    /** Also set by reads: the handler's. */
    boolean firstAllIdleEvent = true;
    private long writerTimer = ExecutorDrivenWheel.NO_TIMER;
    private long allTimer = ExecutorDrivenWheel.NO_TIMER;

    private WriteChecks(WheelIdleStateHandler handler) {
        this.handler = handler;
    }

    /** The write state of a handler with {@code settings}; null when it watches neither writer nor all idleness. */
    static WriteChecks of(IdleSettings settings, WheelIdleStateHandler handler) {
        return !settings.watchesWrites ? null
                : settings.observeOutput ? new ObservingOutput(handler) : new WriteChecks(handler);
    }

    /** The handler starts at {@code now}: Netty's {@code initialize}. */
    void start(ChannelHandlerContext ctx, long now) {
        lastWriteTime = now;
    }

    /** A write completed: Netty's write listener. */
    @Override
    public void operationComplete(ChannelFuture future) {
        writeObserved();
    }

    /** A write completed, or the write timeout was reset: stamps the time, as Netty does. */
    final void writeObserved() {
        IdleDeadlines clock = handler.deadlines();
        if (clock != null) {
            lastWriteTime = clock.ticker.nanoTime();
        }
        firstWriterIdleEvent = firstAllIdleEvent = true;
    }

    /**
     * Whether the next event of the writer or all check ({@code state}) is the first of its idle
     * period; the one after it is not, unless a write comes between.
     */
    final boolean takeFirst(IdleState state) {
        boolean first;
        if (state == IdleState.WRITER_IDLE) {
            first = firstWriterIdleEvent;
            firstWriterIdleEvent = false;
        } else {
            first = firstAllIdleEvent;
            firstAllIdleEvent = false;
        }
        return first;
    }

    /**
     * The last traffic the writer or all check ({@code state}) counts from: the last write, or
     * for the all check the later of it and {@code lastReadTime}.
     */
    final long lastTraffic(IdleState state, long lastReadTime) {
        return state == IdleState.WRITER_IDLE || lastWriteTime - lastReadTime > 0 ? lastWriteTime : lastReadTime;
    }

    /** The loop-wheel timer of the writer or all check, or {@link ExecutorDrivenWheel#NO_TIMER}. */
    final long timer(IdleState state) {
        return state == IdleState.WRITER_IDLE ? writerTimer : allTimer;
    }

    final void setTimer(IdleState state, long timer) {
        if (state == IdleState.WRITER_IDLE) {
            writerTimer = timer;
        } else {
            allTimer = timer;
        }
    }

    /**
     * Whether a non-first writer or all event is skipped because the outbound buffer made
     * progress; never without observeOutput.
     */
    boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first) {
        return false;
    }

    /** The writer and all checks with observeOutput: what they compare against, as Netty keeps it. */
    private static final class ObservingOutput extends WriteChecks {
        private long lastChangeCheckTimeStamp;
        private int lastMessageHashCode;
        private long lastPendingWriteBytes;
        private long lastFlushProgress;

        ObservingOutput(WheelIdleStateHandler handler) {
            super(handler);
        }

        /** Also records the outbound buffer as it is when the handler starts. */
        @Override
        void start(ChannelHandlerContext ctx, long now) {
            super.start(ctx, now);
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf != null) {
                lastMessageHashCode = System.identityHashCode(buf.current());
                lastPendingWriteBytes = buf.totalPendingWriteBytes();
                lastFlushProgress = buf.currentProgress();
            }
        }

        /**
         * Whether the outbound buffer changed since the last call (Netty issue 6150): a completed
         * write, another message at the head, other pending bytes, or flush progress. A first call
         * only records; it never reports a change, so first events are never skipped.
         */
        @Override
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first) {
            if (lastChangeCheckTimeStamp != super.lastWriteTime) {
                // Writes complete: a change at the message level, assumed at the byte level too.
                lastChangeCheckTimeStamp = super.lastWriteTime;
                if (!first) {
                    return true;
                }
            }
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf == null) {
                return false;
            }
            int messageHashCode = System.identityHashCode(buf.current());
            long pendingWriteBytes = buf.totalPendingWriteBytes();
            if (messageHashCode != lastMessageHashCode || pendingWriteBytes != lastPendingWriteBytes) {
                lastMessageHashCode = messageHashCode;
                lastPendingWriteBytes = pendingWriteBytes;
                if (!first) {
                    return true;
                }
            }
            long flushProgress = buf.currentProgress();
            if (flushProgress != lastFlushProgress) {
                lastFlushProgress = flushProgress;
                return !first;
            }
            return false;
        }
    }
}
