package io.wheelbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.ALL_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.WRITER_IDLE_STATE_EVENT;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelTimer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The behaviours of {@link WheelIdleStateHandler} that Netty's IdleStateHandler defines, in virtual time. */
class WheelIdleStateHandlerTest {

    private static final long TICK = 1L << 20; // the shared wheels' tick
    private static final long R = MILLISECONDS.toNanos(100);
    private static final long W = MILLISECONDS.toNanos(70);
    private static final long A = MILLISECONDS.toNanos(130);

    private final IdleEventRecorder recorder = new IdleEventRecorder();
    private EmbeddedChannel ch;
    private long start;

    @AfterEach
    void close() {
        if (ch != null) {
            ch.finishAndReleaseAll();
        }
    }

    private WheelIdleStateHandler start(WheelIdleStateHandler handler) {
        return start(new EmbeddedChannel(), handler);
    }

    private WheelIdleStateHandler start(EmbeddedChannel channel, WheelIdleStateHandler handler) {
        ch = channel;
        ch.freezeTime();
        start = now();
        ch.pipeline().addLast(handler, recorder);
        return handler;
    }

    private long now() {
        return VirtualTime.now(ch);
    }

    /** Advances virtual time to {@code nanos} after the start, running each task on time. */
    private void advanceTo(long nanos) {
        VirtualTime.advanceTo(ch, start + nanos);
    }

    private void readBatch() {
        ch.pipeline().fireChannelRead("in");
        ch.pipeline().fireChannelReadComplete();
        ch.inboundMessages().clear();
    }

    private TimerWheel wheel() {
        return EventLoopWheels.shared().wheelFor(ch.eventLoop()).wheel();
    }

    private long firedAt(int index) {
        return recorder.fired.get(index).nanoTime() - start;
    }

    // ---------------------------------------------------------------- reader idle

    @Test
    void readerIdleFiresNoSoonerThanTheReaderIdleTimeAndWithinOneTick() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        assertTrue(firedAt(0) >= R && firedAt(0) <= R + TICK, "fired at " + firedAt(0));
    }

    @Test
    void idleEventRepeatsUnflaggedEveryPeriodWithoutDrift() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(50 * R + TICK);
        assertEquals(50, recorder.fired.size());
        assertSame(FIRST_READER_IDLE_STATE_EVENT, recorder.events().get(0));
        for (int k = 1; k < 50; k++) {
            assertSame(READER_IDLE_STATE_EVENT, recorder.events().get(k));
            long due = (k + 1) * R;
            assertTrue(firedAt(k) >= due && firedAt(k) <= due + TICK, "event " + k + " at " + firedAt(k));
        }
    }

    @Test
    void completedReadBatchPostponesReaderIdle() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R / 2);
        readBatch();
        advanceTo(R + TICK);
        assertEquals(List.of(), recorder.events());
        advanceTo(R / 2 + R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readBatchInProgressKeepsTheReaderBusy() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        ch.pipeline().fireChannelRead("in"); // no channelReadComplete yet
        advanceTo(5 * R);
        assertEquals(List.of(), recorder.events());
        ch.pipeline().fireChannelReadComplete();
        advanceTo(6 * R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readMakesTheNextReaderIdleEventFirstAgain() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(2 * R + TICK);
        readBatch();
        advanceTo(3 * R + 2 * TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT, READER_IDLE_STATE_EVENT,
                FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void resetReadTimeoutPostponesReaderIdleAndMakesItFirst() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R + TICK);
        advanceTo(R + 2 * TICK);
        handler.resetReadTimeout();
        advanceTo(2 * R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        advanceTo(2 * R + 3 * TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- writer idle

    @Test
    void writerIdleFiresWhenNoWriteCompletes() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(2 * W + TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void completedWritePostponesWriterIdleAndMakesItFirst() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W + TICK);
        ch.writeAndFlush("out");
        advanceTo(2 * W);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
        advanceTo(2 * W + 2 * TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writeNotYetFlushedDoesNotCountAsWrite() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        ch.write("out");
        advanceTo(W + TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writeWithVoidPromiseCountsAsWrite() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        ch.writeAndFlush("out", ch.voidPromise());
        advanceTo(W + TICK);
        assertEquals(List.of(), recorder.events());
        advanceTo(W / 2 + W + TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void resetWriteTimeoutPostponesWriterIdle() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        handler.resetWriteTimeout();
        advanceTo(W + TICK);
        assertEquals(List.of(), recorder.events());
        advanceTo(W / 2 + W + TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- all idle

    @Test
    void allIdleFiresWhenNeitherReadNorWriteHappens() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(2 * A + TICK);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT, ALL_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readPostponesAllIdle() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A / 2);
        readBatch();
        advanceTo(A + TICK);
        assertEquals(List.of(), recorder.events());
        advanceTo(A / 2 + A + TICK);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writePostponesAllIdle() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A / 2);
        ch.writeAndFlush("out");
        advanceTo(A + TICK);
        assertEquals(List.of(), recorder.events());
        advanceTo(A / 2 + A + TICK);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- settings

    @Test
    void zeroOrNegativeTimeDisablesTheCheck() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(0, -5, 0, SECONDS));
        assertEquals(0, wheel().pendingTimers());
        advanceTo(SECONDS.toNanos(100));
        assertEquals(List.of(), recorder.events());
        assertEquals(0, handler.getReaderIdleTimeInMillis() + handler.getWriterIdleTimeInMillis()
                + handler.getAllIdleTimeInMillis());
    }

    @Test
    void positiveTimeIsFlooredAtOneMillisecond() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(1, 0, 0, NANOSECONDS));
        assertEquals(1, handler.getReaderIdleTimeInMillis());
        advanceTo(MILLISECONDS.toNanos(1) - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(MILLISECONDS.toNanos(1));
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void intConstructorTakesSeconds() {
        WheelIdleStateHandler handler = new WheelIdleStateHandler(60, 30, 90);
        assertEquals(60_000, handler.getReaderIdleTimeInMillis());
        assertEquals(30_000, handler.getWriterIdleTimeInMillis());
        assertEquals(90_000, handler.getAllIdleTimeInMillis());
    }

    @Test
    void eachConstructedHandlerKeepsItsOwnIdleTimesWhateverWasConstructedBefore() {
        // Constructors share settings objects by value: many distinct ones, some colliding.
        List<WheelIdleStateHandler> handlers = new ArrayList<>();
        for (int i = 1; i <= 100; i++) {
            handlers.add(new WheelIdleStateHandler(i, 2 * i, 3 * i, MILLISECONDS));
        }
        for (int i = 1; i <= 100; i++) {
            WheelIdleStateHandler handler = handlers.get(i - 1);
            assertEquals(List.of((long) i, 2L * i, 3L * i), List.of(handler.getReaderIdleTimeInMillis(),
                    handler.getWriterIdleTimeInMillis(), handler.getAllIdleTimeInMillis()));
        }
    }

    @Test
    void changingABuilderDoesNotChangeTheHandlersItBuilt() {
        WheelIdleStateHandler.Builder builder = WheelIdleStateHandler.builder().readerIdleTime(R, NANOSECONDS);
        WheelIdleStateHandler built = builder.build();
        builder.readerIdleTime(2 * R, NANOSECONDS).writerIdleTime(W, NANOSECONDS);
        WheelIdleStateHandler rebuilt = builder.build();
        assertEquals(List.of(NANOSECONDS.toMillis(R), 0L), List.of(built.getReaderIdleTimeInMillis(),
                built.getWriterIdleTimeInMillis()));
        assertEquals(List.of(NANOSECONDS.toMillis(2 * R), NANOSECONDS.toMillis(W)),
                List.of(rebuilt.getReaderIdleTimeInMillis(), rebuilt.getWriterIdleTimeInMillis()));
        start(built);
        advanceTo(R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void hugeIdleTimeNeverFiresAndDoesNotOverflow() {
        start(new WheelIdleStateHandler(Long.MAX_VALUE, Long.MAX_VALUE / 2, Long.MAX_VALUE, TimeUnit.DAYS));
        advanceTo(TimeUnit.DAYS.toNanos(365));
        readBatch();
        ch.writeAndFlush("out");
        advanceTo(TimeUnit.DAYS.toNanos(2 * 365));
        assertEquals(List.of(), recorder.events());
        assertEquals(List.of(), recorder.exceptions);
    }

    @Test
    void nullUnitIsRejected() {
        assertThrows(NullPointerException.class, () -> new WheelIdleStateHandler(1, 1, 1, null));
        assertThrows(NullPointerException.class, () -> new WheelIdleStateHandler(true, 1, 1, 1, null));
        assertThrows(NullPointerException.class, () -> WheelIdleStateHandler.builder().allIdleTime(1, null));
    }

    @Test
    void builderTakesEitherWheelsOrATimerNotBoth() {
        WheelTimer timer = WheelTimer.builder().build();
        try {
            assertThrows(IllegalStateException.class, () -> WheelIdleStateHandler.builder()
                    .wheels(EventLoopWheels.shared()).timer(timer));
            assertThrows(IllegalStateException.class, () -> WheelIdleStateHandler.builder()
                    .timer(timer).wheels(EventLoopWheels.shared()));
        } finally {
            timer.stop();
        }
    }

    @Test
    void builderRejectsNullOptions() {
        assertThrows(NullPointerException.class, () -> WheelIdleStateHandler.builder().wheels(null));
        assertThrows(NullPointerException.class, () -> WheelIdleStateHandler.builder().timer(null));
        assertThrows(NullPointerException.class, () -> WheelIdleStateHandler.builder().metrics(null));
    }

    @Test
    void timersGoToTheWheelsGivenToTheBuilder() {
        EventLoopWheels own = new EventLoopWheels(1, MILLISECONDS, 512);
        start(WheelIdleStateHandler.builder().readerIdleTime(R, NANOSECONDS).allIdleTime(A, NANOSECONDS)
                .wheels(own).build());
        assertEquals(2, own.wheelFor(ch.eventLoop()).wheel().pendingTimers());
        assertEquals(0, wheel().pendingTimers());
        advanceTo(R + TICK);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- ordering and extension points

    @Test
    void deadlinesDueInTheSameTickFireInDeadlineOrder() {
        // Both fall in the tick ending at 10 ticks; the writer's deadline is the earlier one.
        start(new WheelIdleStateHandler(10 * TICK - 100, 10 * TICK - 200, 0, NANOSECONDS));
        advanceTo(10 * TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void closingOnTheEarlierEventOfATickStopsTheLaterOne() {
        start(new WheelIdleStateHandler(10 * TICK - 100, 10 * TICK - 200, 0, NANOSECONDS) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
                super.channelIdle(ctx, evt);
                ctx.close();
            }
        });
        advanceTo(10 * TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void trafficAfterADeadlineTheLoopHasNotRunYetFiresTheEventFirst() {
        start(new WheelIdleStateHandler(10 * TICK - 300, 0, 0, NANOSECONDS));
        ch.advanceTimeBy(10 * TICK - 100, NANOSECONDS); // past the deadline; the loop's task has not run
        assertEquals(List.of(), recorder.events());
        readBatch();
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        assertEquals(10 * TICK - 100, firedAt(0));
    }

    @Test
    void checksDueAtTheSameInstantRunInTheOrderNettyScheduledThem() {
        // Writer and all idle times are equal. After the write at 31 ms, Netty's all task (due at
        // 33 ms) re-arms for 41 ms before its writer task (due at 40 ms) does, so from then on the
        // all check runs first at their common times: 41 and 61 ms (at 51 ms both see the
        // outbound buffer change: the first its new message, the second its flush progress).
        List<IdleStateEvent> expected = List.of(FIRST_WRITER_IDLE_STATE_EVENT, FIRST_ALL_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT, ALL_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT,
                FIRST_ALL_IDLE_STATE_EVENT, FIRST_WRITER_IDLE_STATE_EVENT,
                ALL_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT);
        assertEquals(expected, tieScenario(new IdleStateHandler(true, 0, 10, 10, MILLISECONDS)), "Netty");
        assertEquals(expected, tieScenario(new WheelIdleStateHandler(true, 0, 10, 10, MILLISECONDS)));
    }

    private static List<IdleStateEvent> tieScenario(ChannelHandler handler) {
        SlowDrainChannel channel = new SlowDrainChannel();
        channel.freezeTime();
        long t0 = VirtualTime.now(channel);
        IdleEventRecorder events = new IdleEventRecorder();
        channel.pipeline().addLast(handler, events);
        VirtualTime.advanceTo(channel, t0 + MILLISECONDS.toNanos(3));
        channel.writeInbound("in");
        VirtualTime.advanceTo(channel, t0 + MILLISECONDS.toNanos(31));
        channel.writeAndFlush(Unpooled.buffer().writeZero(10));
        VirtualTime.advanceTo(channel, t0 + MILLISECONDS.toNanos(45));
        channel.drainBudget(10);
        channel.writeAndFlush(Unpooled.buffer().writeZero(1000));
        VirtualTime.advanceTo(channel, t0 + MILLISECONDS.toNanos(61) + TICK);
        channel.finishAndReleaseAll();
        return events.events();
    }

    @Test
    void firesNettysSingletonEvents() {
        start(new WheelIdleStateHandler(R, R, R, NANOSECONDS));
        advanceTo(2 * R + TICK);
        // IdleStateEvent has identity equality: these are Netty's own instances.
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT, FIRST_WRITER_IDLE_STATE_EVENT,
                FIRST_ALL_IDLE_STATE_EVENT, READER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT,
                ALL_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void overriddenNewIdleStateEventIsWhatFires() {
        IdleStateEvent custom = new IdleStateEvent(IdleState.READER_IDLE, true) { };
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS) {
            @Override
            protected IdleStateEvent newIdleStateEvent(IdleState state, boolean first) {
                return custom;
            }
        });
        advanceTo(R + TICK);
        assertSame(custom, recorder.events().get(0));
    }

    @Test
    void overriddenChannelIdleReplacesFiring() {
        List<IdleStateEvent> seen = new java.util.ArrayList<>();
        start(new WheelIdleStateHandler(WheelIdleStateHandler.builder().writerIdleTime(W, NANOSECONDS)) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
                seen.add(evt);
            }
        });
        advanceTo(W + TICK);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), seen);
        assertEquals(List.of(), recorder.events());
    }

    @Test
    void exceptionFromChannelIdleGoesToExceptionCaughtAndTheTimerGoesOn() {
        IllegalStateException boom = new IllegalStateException("boom");
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
                throw boom;
            }
        });
        advanceTo(3 * R + TICK);
        assertEquals(List.of(boom, boom, boom), recorder.exceptions);
    }

    @Test
    void nothingFiresOnceTheChannelIsClosed() {
        start(new WheelIdleStateHandler(R, W, A, NANOSECONDS));
        ch.close();
        advanceTo(10 * A);
        assertEquals(List.of(), recorder.events());
    }

    // ---------------------------------------------------------------- output observation

    private void startSlowDrain(boolean observeOutput) {
        start(new SlowDrainChannel(), WheelIdleStateHandler.builder().observeOutput(observeOutput)
                .writerIdleTime(W, NANOSECONDS).build());
        ((SlowDrainChannel) ch).drainBudget(10);
        ch.writeAndFlush(Unpooled.buffer().writeZero(1000)); // 10 bytes go out, 990 stay
    }

    @Test
    void drainingOutboundBufferSkipsRepeatedWriterIdleWhenObservingOutput() {
        startSlowDrain(true);
        advanceTo(W + TICK);
        for (int period = 2; period <= 5; period++) {
            ch.flush(); // ten more bytes leave: progress
            advanceTo(period * W + TICK);
        }
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void stalledOutboundBufferIsWriterIdleWhenObservingOutput() {
        startSlowDrain(true);
        advanceTo(W + TICK);
        ch.flush();
        advanceTo(2 * W + TICK); // progress seen: skipped
        advanceTo(4 * W + TICK); // no progress since
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void drainingOutboundBufferIsWriterIdleWithoutObservingOutput() {
        startSlowDrain(false);
        advanceTo(W + TICK);
        for (int period = 2; period <= 3; period++) {
            ch.flush();
            advanceTo(period * W + TICK);
        }
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- cost

    @Test
    void connectionThatKeepsTalkingNeverWakesItsTimers() {
        start(new WheelIdleStateHandler(R, W, A, NANOSECONDS));
        for (int i = 1; i <= 100; i++) {
            advanceTo(i * W / 2);
            readBatch();
            ch.writeAndFlush("out");
        }
        ch.outboundMessages().clear();
        assertEquals(0, wheel().expiredCount());
        assertEquals(List.of(), recorder.events());
    }

    @Test
    void trafficMovesTheTimersInsteadOfAddingNewOnes() {
        start(new WheelIdleStateHandler(R, W, A, NANOSECONDS));
        long scheduled = wheel().scheduledCount();
        for (int i = 0; i < 1000; i++) {
            ch.advanceTimeBy(10, TimeUnit.MICROSECONDS);
            readBatch();
            ch.writeAndFlush("out");
        }
        ch.outboundMessages().clear();
        assertEquals(scheduled, wheel().scheduledCount());
        assertEquals(3, wheel().pendingTimers());
        assertEquals(List.of(), recorder.events());
    }
}
