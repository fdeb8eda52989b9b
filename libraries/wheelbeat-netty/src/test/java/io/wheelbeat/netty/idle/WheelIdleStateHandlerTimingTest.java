package io.wheelbeat.netty.idle;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.WRITER_IDLE_STATE_EVENT;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.netty.NettyLine;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.VirtualTime;
import java.util.List;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * The moments at which a late or quantized timer would part from Netty's handler, each pinned in
 * one scenario: the expected events are written out, and Netty's {@link IdleStateHandler} and
 * {@link WheelIdleStateHandler} must both fire exactly them. The loop runs each task at its
 * deadline except during the stalls that a scenario makes.
 */
class WheelIdleStateHandlerTimingTest {

    /** An event and when it fired, in ns after the handler started. */
    private record Event(IdleStateEvent event, long at) {
        @Override
        public String toString() {
            return event.state() + (event.isFirst() ? "(first)" : "") + "@" + at;
        }
    }

    private static Event at(IdleStateEvent event, double millis) {
        return new Event(event, Math.round(millis * 1_000_000));
    }

    private static long ms(double millis) {
        return Math.round(millis * 1_000_000);
    }

    /** One channel in virtual time with the handler under test between a head writer and a recorder. */
    private static final class Run {
        final SlowDrainChannel ch = new SlowDrainChannel();
        final ChannelHandler handler;
        final IdleEventRecorder recorder = new IdleEventRecorder();
        ChannelHandlerContext headCtx;
        final long start;

        Run(ChannelHandler handler) {
            this.handler = handler;
            ch.freezeTime();
            start = VirtualTime.now(ch);
            ch.pipeline()
                    .addLast(
                            new ChannelOutboundHandlerAdapter() {
                                @Override
                                public void handlerAdded(ChannelHandlerContext ctx) {
                                    headCtx = ctx;
                                }
                            },
                            handler,
                            recorder);
        }

        void advanceTo(double millis) {
            VirtualTime.advanceTo(ch, start + ms(millis));
        }

        void stall(double millis) {
            VirtualTime.stall(ch, ms(millis));
        }

        List<Event> events() {
            assertEquals(List.of(), recorder.exceptions);
            ch.finishAndReleaseAll();
            return recorder.fired.stream()
                    .map(f -> new Event(f.event(), f.nanoTime() - start))
                    .toList();
        }
    }

    /** Runs {@code scenario} with Netty's handler and with ours, both built from the same arguments. */
    private static void assertBothFire(
            List<Event> expected,
            boolean observeOutput,
            double readerMs,
            double writerMs,
            double allMs,
            BiConsumer<Run, ChannelHandler> scenario) {
        // On Netty 4.1 only ours is checked: Netty's handler there does not see virtual time.
        if (NettyLine.NETTYS_IDLE_HANDLER_IN_VIRTUAL_TIME) {
            Run netty =
                    new Run(new IdleStateHandler(observeOutput, ms(readerMs), ms(writerMs), ms(allMs), NANOSECONDS));
            scenario.accept(netty, netty.handler);
            assertEquals(expected, netty.events(), "Netty's handler");
        }
        Run wheel =
                new Run(new WheelIdleStateHandler(observeOutput, ms(readerMs), ms(writerMs), ms(allMs), NANOSECONDS));
        scenario.accept(wheel, wheel.handler);
        assertEquals(expected, wheel.events(), "WheelIdleStateHandler");
        assertEquals(0, VirtualTime.pendingTimers(wheel.ch));
    }

    // ---------------------------------------------------------------- a close or removal just after a deadline

    @Test
    void anEventDueJustBeforeTheChannelClosesFires() {
        assertBothFire(List.of(at(FIRST_READER_IDLE_STATE_EVENT, 10)), false, 10, 0, 0, (run, handler) -> {
            run.advanceTo(10.2);
            run.ch.close();
            run.advanceTo(50);
        });
    }

    @Test
    void anEventDueJustBeforeTheHandlerIsRemovedFires() {
        assertBothFire(List.of(at(FIRST_READER_IDLE_STATE_EVENT, 10)), false, 10, 0, 0, (run, handler) -> {
            run.advanceTo(10.2);
            run.ch.pipeline().remove(handler);
            run.advanceTo(50);
        });
    }

    // ---------------------------------------------------------------- observeOutput: progress made outside the handler

    /**
     * 1000 bytes go to a consumer that takes 10 per flush, so the outbound buffer never drains.
     * The writer is idle at 10 and 20 ms; progress made 0.2 ms after the 20 ms check (by the
     * transport, or by a handler nearer the head) skips only the 30 ms event.
     */
    private static void slowConsumerProgressingAt20Point2(Run run, Runnable progress) {
        run.ch.drainBudget(10);
        run.ch.pipeline().writeAndFlush(Unpooled.buffer().writeZero(1000));
        run.advanceTo(20.2);
        progress.run();
        run.advanceTo(35);
    }

    @Test
    void outputProgressByTheTransportCountsFromWhenItHappened() {
        assertBothFire(
                List.of(at(FIRST_WRITER_IDLE_STATE_EVENT, 10), at(WRITER_IDLE_STATE_EVENT, 20)),
                true,
                0,
                10,
                0,
                (run, handler) -> slowConsumerProgressingAt20Point2(
                        run, () -> run.ch.unsafe().flush()));
    }

    @Test
    void outputProgressByAHandlerNearerTheHeadCountsFromWhenItHappened() {
        assertBothFire(
                List.of(at(FIRST_WRITER_IDLE_STATE_EVENT, 10), at(WRITER_IDLE_STATE_EVENT, 20)),
                true,
                0,
                10,
                0,
                (run, handler) -> slowConsumerProgressingAt20Point2(
                        run, () -> run.headCtx.writeAndFlush(Unpooled.buffer().writeZero(100))));
    }

    // ---------------------------------------------------------------- event-loop stalls

    @Test
    void anEventFiredJustBeforeAStallIsNotMergedWithTheOneAfterIt() {
        // The 20 ms check ran on time; the stall from 20.5 to 30.5 ms delays only the 30 ms one.
        assertBothFire(
                List.of(
                        at(FIRST_READER_IDLE_STATE_EVENT, 10),
                        at(READER_IDLE_STATE_EVENT, 20),
                        at(READER_IDLE_STATE_EVENT, 30.5),
                        at(READER_IDLE_STATE_EVENT, 40.5)),
                false,
                10,
                0,
                0,
                (run, handler) -> {
                    run.advanceTo(20.5);
                    run.stall(10);
                    run.advanceTo(41);
                });
    }

    @Test
    void checksOverdueAfterAStallRunInDeadlineOrder() {
        // A write at 1.1 ms; then the loop stalls until 4.3 ms. The all check (due at 3 ms) runs
        // first and finds 3.2 ms without traffic, then the reader check (due at 4 ms); the writer
        // check, due at 4 ms too, waits until 4 ms after the write.
        assertBothFire(
                List.of(
                        at(FIRST_ALL_IDLE_STATE_EVENT, 4.3),
                        at(FIRST_READER_IDLE_STATE_EVENT, 4.3),
                        at(FIRST_WRITER_IDLE_STATE_EVENT, 5.1)),
                false,
                4,
                4,
                3,
                (run, handler) -> {
                    run.stall(1.1);
                    run.ch.pipeline().writeAndFlush(Unpooled.buffer().writeZero(1));
                    run.stall(3.2);
                    run.advanceTo(6);
                });
    }

    @Test
    void aStallOfTwoIdleTimesFiresOneEventThenRepeatsFromItsEnd() {
        assertBothFire(
                List.of(at(FIRST_READER_IDLE_STATE_EVENT, 2), at(READER_IDLE_STATE_EVENT, 3)),
                false,
                1,
                0,
                0,
                (run, handler) -> {
                    run.stall(2);
                    run.advanceTo(3.5);
                });
    }
}
