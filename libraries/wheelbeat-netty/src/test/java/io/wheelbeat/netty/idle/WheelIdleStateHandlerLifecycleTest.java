package io.wheelbeat.netty.idle;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipelineException;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.TimerWheelMetrics;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Whatever the order of lifecycle events, the handler starts at most once, never after it was
 * stopped, and leaves no timer on the wheel: pending counts go back to zero.
 */
class WheelIdleStateHandlerLifecycleTest {

    private static ExecutorDrivenWheel wheelOf(EmbeddedChannel ch) {
        return EventLoopWheels.shared().wheelFor(ch.eventLoop());
    }

    /** Timers ever scheduled on the wheel, read through its meters. */
    private static double scheduledCount(ExecutorDrivenWheel wheel) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new TimerWheelMetrics(wheel, Tags.empty()).bindTo(registry);
        return registry.get("wheelbeat.timer.scheduled").functionCounter().count();
    }

    private static WheelIdleStateHandler allThree() {
        return new WheelIdleStateHandler(100, 70, 130, MILLISECONDS);
    }

    @Test
    void addedToAnActiveChannelItStartsAtOnce() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline().addLast(allThree());
        assertEquals(3, wheelOf(ch).pendingTimers());
        ch.finishAndReleaseAll();
    }

    @Test
    void closingTheChannelCancelsEveryTimer() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline().addLast(allThree());
        ch.close();
        assertEquals(0, wheelOf(ch).pendingTimers());
    }

    @Test
    void removingTheHandlerCancelsEveryTimerAndStopsEvents() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        WheelIdleStateHandler handler = allThree();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline().addLast(handler, recorder);
        ch.pipeline().remove(handler);
        assertEquals(0, wheelOf(ch).pendingTimers());
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + SECONDS.toNanos(1));
        assertEquals(List.of(), recorder.events());
        ch.finishAndReleaseAll();
    }

    @Test
    void registeredAndActiveBothArrivingStartItOnce() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        ch.pipeline().addLast(allThree());
        ch.register(); // fires channelRegistered on an active channel, then channelActive
        ExecutorDrivenWheel wheel = wheelOf(ch);
        assertEquals(3, wheel.pendingTimers());
        assertEquals(3, scheduledCount(wheel));
        ch.finishAndReleaseAll();
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void removedBeforeTheChannelIsRegisteredItLeavesNothing() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        WheelIdleStateHandler handler = allThree();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline().addLast(handler, recorder);
        ch.pipeline().remove(handler);
        ch.register();
        ch.freezeTime();
        assertEquals(0, wheelOf(ch).pendingTimers());
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + SECONDS.toNanos(1));
        assertEquals(List.of(), recorder.events());
        ch.finishAndReleaseAll();
    }

    @Test
    void closedBeforeRegisteredItNeverStarts() {
        EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 64);
        AtomicInteger wheelsMade = new AtomicInteger();
        wheels.onNewWheel((loop, wheel) -> wheelsMade.incrementAndGet());
        EmbeddedChannel ch = new EmbeddedChannel(false, false);
        ch.pipeline()
                .addLast(WheelIdleStateHandler.builder()
                        .readerIdleTime(Duration.ofMillis(100))
                        .wheels(wheels)
                        .build()
                        .newHandler());
        ch.unsafe().closeForcibly(); // as Bootstrap does when a channel fails before registering
        assertThrows(Exception.class, ch::register); // a closed channel cannot be registered
        assertFalse(ch.isRegistered());
        assertEquals(0, wheelsMade.get()); // no timer was ever scheduled anywhere
    }

    /** Registered but inactive until the test says so, as a channel that is still connecting. */
    private static final class ConnectingChannel extends EmbeddedChannel {
        private boolean connected;

        ConnectingChannel() {
            super(false, false);
        }

        void connect() {
            connected = true;
            pipeline().fireChannelActive();
        }

        @Override
        public boolean isActive() {
            return connected && super.isActive();
        }
    }

    @Test
    void addedToAChannelNotYetActiveItStartsWhenActive() throws Exception {
        ConnectingChannel ch = new ConnectingChannel();
        ch.pipeline().addLast(allThree());
        ch.register();
        assertEquals(0, wheelOf(ch).pendingTimers());
        ch.connect();
        assertEquals(3, wheelOf(ch).pendingTimers());
        ch.finishAndReleaseAll();
    }

    @Test
    void removedBeforeTheChannelIsActiveItNeverStarts() throws Exception {
        ConnectingChannel ch = new ConnectingChannel();
        WheelIdleStateHandler handler = allThree();
        ch.pipeline().addLast(handler);
        ch.register();
        ch.pipeline().remove(handler);
        ch.connect();
        assertEquals(0, scheduledCount(wheelOf(ch)));
        ch.finishAndReleaseAll();
    }

    @Test
    void inactiveBeforeActiveItNeverStarts() throws Exception {
        // Netty issue 143: once stopped, a later channelActive must not start the timers.
        ConnectingChannel ch = new ConnectingChannel();
        ch.pipeline().addLast(allThree());
        ch.register();
        ch.pipeline().fireChannelInactive();
        ch.connect();
        assertEquals(0, scheduledCount(wheelOf(ch)));
        ch.finishAndReleaseAll();
    }

    @Test
    void addingTheSameInstanceTwiceIsRejectedAsForNettysHandler() {
        assertRejectedTwice(new IdleStateHandler(1, 1, 1));
        assertRejectedTwice(allThree());
    }

    private static void assertRejectedTwice(ChannelHandler handler) {
        EmbeddedChannel first = VirtualTime.frozenChannel();
        first.pipeline().addLast(handler);
        EmbeddedChannel second = VirtualTime.frozenChannel();
        assertRefused(second, handler);
        if (handler instanceof WheelIdleStateHandler) {
            assertEquals(3, wheelOf(first).pendingTimers(), "the first channel's checks run on");
        }
        first.pipeline().remove(handler);
        assertRefused(first, handler);
        assertEquals(0, wheelOf(first).pendingTimers());
        assertEquals(0, wheelOf(second).pendingTimers());
        first.finishAndReleaseAll();
        second.finishAndReleaseAll();
    }

    /** Netty's pipeline refuses its adapters in {@code addLast}; ours refuses itself in {@code handlerAdded}. */
    private static void assertRefused(EmbeddedChannel ch, ChannelHandler handler) {
        try {
            ch.pipeline().addLast(handler);
        } catch (ChannelPipelineException refusedByThePipeline) {
            return;
        }
        assertNull(ch.pipeline().context(handler), "removed again");
        assertThrows(ChannelPipelineException.class, ch::checkException);
    }

    @Test
    void removedFromItsOwnIdleEventItLeavesNothing() {
        assertStoppingOnTheFirstEventLeavesNothing(ctx -> ctx.pipeline().remove(ctx.handler()));
    }

    @Test
    void closedFromItsOwnIdleEventItLeavesNothing() {
        assertStoppingOnTheFirstEventLeavesNothing(ChannelHandlerContext::close);
    }

    /** All three checks fall due together; the first event stops the handler. */
    private static void assertStoppingOnTheFirstEventLeavesNothing(Consumer<ChannelHandlerContext> stop) {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline()
                .addLast(
                        new WheelIdleStateHandler(100, 100, 100, MILLISECONDS) {
                            @Override
                            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
                                super.channelIdle(ctx, evt);
                                stop.accept(ctx);
                            }
                        },
                        recorder);
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + MILLISECONDS.toNanos(500));
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        assertEquals(0, wheelOf(ch).pendingTimers());
        ch.finishAndReleaseAll();
    }

    @Test
    void closingAfterTrafficCancelsTheMovedTimers() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline().addLast(allThree());
        ExecutorDrivenWheel wheel = wheelOf(ch);
        ch.advanceTimeBy(10, MILLISECONDS);
        ch.writeInbound("in");
        ch.writeAndFlush("out");
        ch.close();
        assertEquals(0, wheel.pendingTimers());
        assertEquals(3, scheduledCount(wheel));
    }

    /**
     * A handler whose start fails (here its wheel's listener throws; on Netty 4.1 before 0.1.0 it was
     * a NoSuchMethodError for EventExecutor.ticker()) is removed cleanly: handlerRemoved has no
     * deadlines to disarm and must not throw (it threw a NullPointerException).
     */
    @Test
    void aFailedStartLeavesAHandlerThatRemovesCleanly() {
        VirtualTime.assertAFailedStartRemovesCleanly(wheels -> WheelIdleStateHandler.builder()
                .readerIdleTime(Duration.ofMillis(100))
                .wheels(wheels)
                .build()
                .newHandler());
    }

    /** Netty's handler only stamps a time there: called from another thread, a reset never throws. */
    @Test
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    void resetsFromAnotherThreadDoNothingOnceTheLoopHasShutDown() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        WheelIdleStateHandler handler = new WheelIdleStateHandler(1, 1, 1, SECONDS);
        LocalChannel ch = new LocalChannel();
        ch.pipeline().addLast(handler);
        assertTrue(loop.register(ch).await(10, SECONDS));
        assertTrue(loop.shutdownGracefully(0, 0, SECONDS).await(10, SECONDS), "loop terminated");
        assertDoesNotThrow(handler::resetReadTimeout);
        assertDoesNotThrow(handler::resetWriteTimeout);
    }
}
