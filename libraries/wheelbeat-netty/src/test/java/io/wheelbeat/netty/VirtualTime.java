package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.internal.LoopClocks;
import java.time.Duration;
import java.util.function.Function;
import org.junit.jupiter.api.Assertions;

/** EmbeddedChannels in virtual time, for the handler tests. */
public final class VirtualTime {

    private VirtualTime() {}

    /** An active channel whose time is frozen before {@code handlers} are added (the handlerAdded path). */
    public static EmbeddedChannel frozenChannel(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(handlers);
        return ch;
    }

    /**
     * Adds the handler that {@code handlerOn} makes for wheels whose creation throws, and checks
     * that Netty reports the failed {@code handlerAdded} and removes the handler cleanly (no
     * second exception from {@code handlerRemoved}), leaving the channel open.
     */
    public static void assertAFailedStartRemovesCleanly(Function<EventLoopWheels, ChannelHandler> handlerOn) {
        EventLoopWheels failing = new EventLoopWheels(Duration.ofMillis(1), 64);
        failing.onNewWheel((loop, wheel) -> {
            throw new IllegalStateException("wheel refused");
        });
        EmbeddedChannel ch = frozenChannel();
        ch.pipeline().addLast(handlerOn.apply(failing));
        Throwable failure = Assertions.assertThrows(Throwable.class, ch::checkException);
        Assertions.assertTrue(
                failure.getMessage().endsWith("handlerAdded() has thrown an exception; removed."),
                failure.getMessage());
        Assertions.assertEquals("wheel refused", failure.getCause().getMessage());
        Assertions.assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
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
        return EventLoopWheels.shared().wheelFor(ch.eventLoop()).pendingTimers();
    }

    /** Returns the channel's clock reading (its loop's clock, on Netty 4.1 as on 4.2). */
    public static long now(Channel ch) {
        return LoopClocks.of(ch.eventLoop()).getAsLong();
    }

    /**
     * Moves virtual time forward to {@code nanoTime}, stopping at every scheduled task on the way
     * and running it at its own deadline, so each task sees the time it was scheduled for.
     */
    public static void advanceTo(EmbeddedChannel ch, long nanoTime) {
        for (int steps = 0; steps < 10_000_000; steps++) {
            long next = ch.runScheduledPendingTasks(); // delay to the next task, or -1 if none
            long left = nanoTime - now(ch);
            if (next < 0 || next > left) {
                ch.advanceTimeBy(Math.max(0, left), NANOSECONDS);
                ch.runScheduledPendingTasks();
                return;
            }
            ch.advanceTimeBy(next, NANOSECONDS);
        }
        throw new AssertionError("scheduled tasks keep falling due at the same instant");
    }

    /**
     * Moves virtual time forward to {@code nanoTime} as a loop that runs its scheduled tasks only
     * on a fixed step: at every instant {@code origin + k * stepNanos} on the way (up to and
     * including {@code nanoTime}) it runs the tasks due by then, and at no other instant.
     */
    public static void advanceOnStep(EmbeddedChannel ch, long origin, long stepNanos, long nanoTime) {
        long next = origin + (Math.floorDiv(now(ch) - origin, stepNanos) + 1) * stepNanos;
        for (; next - nanoTime <= 0; next += stepNanos) {
            ch.advanceTimeBy(next - now(ch), NANOSECONDS);
            ch.runScheduledPendingTasks();
        }
        ch.advanceTimeBy(nanoTime - now(ch), NANOSECONDS);
    }

    /**
     * A loop stall: virtual time moves forward {@code nanos} while no task runs, then the tasks
     * that fell due run, once, as a loop catching up does.
     */
    public static void stall(EmbeddedChannel ch, long nanos) {
        ch.advanceTimeBy(nanos, NANOSECONDS);
        ch.runScheduledPendingTasks();
    }
}
