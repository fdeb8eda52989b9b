package io.wheelbeat.netty;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.frozenChannel;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipelineException;
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

    /** Not a ChannelHandlerAdapter, so the pipeline does not check: the handler refuses a second pipeline itself. */
    @Test
    void addedToASecondPipelineItIsRefusedAndKeepsTimingTheFirst() {
        Recording handler = new Recording();
        EmbeddedChannel first = frozenChannel(handler);
        EmbeddedChannel second = frozenChannel();
        second.pipeline().addLast(handler);
        assertNull(second.pipeline().context(handler), "removed again");
        assertThrows(ChannelPipelineException.class, second::checkException);
        assertTrue(handler.running());
        assertSame(first.pipeline().context(handler), handler.ctx());
        advance(first, 1001);
        assertEquals(List.of("start", "expired"), handler.calls);
        first.pipeline().remove(handler);
        first.pipeline().addLast(handler);
        assertThrows(ChannelPipelineException.class, first::checkException, "once removed, it is not added again");
    }

    /** A handler with one timer arms itself: no other object. */
    @Test
    void aHandlerArmedAsItsOwnTimerExpires() {
        List<Long> expired = new ArrayList<>();
        ChannelTimerHandler handler = new ChannelTimerHandler(EventLoopWheels.shared()) {
            @Override
            protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
                expired.add(nowNanos);
                schedule(this, TimeUnit.MILLISECONDS.toNanos(5));
            }

            @Override
            protected void onStop() {
                cancel(this);
            }

            @Override
            protected void expire() {
                expired.add(now());
            }
        };
        EmbeddedChannel ch = frozenChannel(handler);
        assertTrue(handler.isPending());
        advance(ch, 5);
        long start = expired.get(0);
        assertEquals(List.of(start, start + TimeUnit.MILLISECONDS.toNanos(5)), expired, "started, expired");
        assertFalse(handler.isPending());
        ch.finishAndReleaseAll();
    }

    /** What it does not override passes on, as through Netty's ChannelDuplexHandler. */
    @Test
    void everyEventItDoesNotHandlePassesOn() {
        List<Object> seen = new ArrayList<>();
        EmbeddedChannel ch = frozenChannel(new Recording(), new ChannelDuplexHandler() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                seen.add(evt);
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                seen.add(cause.getMessage());
            }
        });
        ch.pipeline().fireUserEventTriggered("event");
        ch.pipeline().fireExceptionCaught(new IllegalStateException("failure"));
        ch.writeInbound("in");
        ch.writeOutbound("out");
        assertEquals(List.of("event", "failure"), seen);
        assertEquals("in", ch.readInbound());
        assertEquals("out", ch.readOutbound());
        ch.close();
        assertFalse(ch.isOpen(), "close passed on to the head");
    }
}
