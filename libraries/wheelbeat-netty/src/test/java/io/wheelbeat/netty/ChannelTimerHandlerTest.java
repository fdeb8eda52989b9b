package io.wheelbeat.netty;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.frozenChannel;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.core.TimerNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The one lifecycle of the per-channel handlers: start once when active and registered, stop once. */
class ChannelTimerHandlerTest {

    /** Records its starts and stops and arms one 1 s timer at the start. */
    static final class Recording extends ChannelTimerHandler {
        final List<String> calls = new ArrayList<>();
        final TimerNode timer = new TimerNode() {
            @Override
            protected void expire() {
                calls.add("expired");
            }
        };
        ChannelHandlerContext startedWith;

        Recording() {
            super(EventLoopWheels.shared());
        }

        @Override
        protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
            calls.add("start");
            startedWith = ctx;
            assertEquals(now(), nowNanos);
            assertTrue(running());
            schedule(timer, TimeUnit.SECONDS.toNanos(1));
        }

        @Override
        protected void onStop() {
            calls.add("stop");
            cancel(timer);
        }
    }

    @Test
    void addedToAnActiveChannelStartsAtOnceAndTheTimerFires() {
        Recording handler = new Recording();
        EmbeddedChannel ch = frozenChannel(handler);
        assertEquals(List.of("start"), handler.calls);
        assertSame(ch.pipeline().context(handler), handler.ctx());
        assertSame(handler.ctx(), handler.startedWith);
        advance(ch, 1001);
        assertEquals(List.of("start", "expired"), handler.calls);
    }

    /** A registered channel that is not active: closed, so handlerAdded starts nothing. */
    private static EmbeddedChannel inactiveChannel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.close();
        return ch;
    }

    @Test
    void addedBeforeActivationStartsOnceOnChannelActive() {
        Recording handler = new Recording();
        EmbeddedChannel ch = inactiveChannel();
        ch.pipeline().addLast(handler);
        assertEquals(List.of(), handler.calls, "not active: no start");
        ch.pipeline().fireChannelActive();
        ch.pipeline().fireChannelRegistered();
        ch.pipeline().fireChannelActive();
        assertEquals(List.of("start"), handler.calls, "started once");
        ch.pipeline().fireChannelInactive();
        assertEquals(List.of("start", "stop"), handler.calls);
    }

    @Test
    void inactiveThenRemovedStopsOnceAndCancelsTheTimer() {
        Recording handler = new Recording();
        EmbeddedChannel ch = frozenChannel(handler);
        assertEquals(1, pendingTimers(ch));
        ch.pipeline().fireChannelInactive();
        ch.pipeline().remove(handler);
        assertEquals(List.of("start", "stop"), handler.calls);
        assertEquals(0, pendingTimers(ch));
        assertFalse(handler.running());
    }

    @Test
    void removedBeforeItStartedNeverStops() {
        Recording handler = new Recording();
        EmbeddedChannel ch = inactiveChannel();
        ch.pipeline().addLast(handler);
        ch.pipeline().remove(handler);
        assertEquals(List.of(), handler.calls);
    }

    @Test
    void stoppedBeforeItStartedNeverStarts() {
        Recording handler = new Recording();
        EmbeddedChannel ch = inactiveChannel();
        ch.pipeline().addLast(handler);
        ch.pipeline().fireChannelInactive();
        ch.pipeline().fireChannelActive();
        assertEquals(List.of(), handler.calls);
        assertFalse(handler.running());
    }

    @Test
    void aHandlerWhoseStartThrowsIsRemovedCleanly() {
        VirtualTime.assertAFailedStartRemovesCleanly(wheels -> new ChannelTimerHandler(wheels) {
            @Override
            protected void onStart(ChannelHandlerContext ctx, long nowNanos) {}

            @Override
            protected void onStop() {}
        });
    }
}
