package io.wheelbeat.netty.idle;

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

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.internal.TimerWheelMetrics;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.NettyLine;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The behaviours of {@link WheelIdleStateHandler} that Netty's IdleStateHandler defines, in virtual time. */
class WheelIdleStateHandlerTest {

    /** A moment: scenarios look that long after a deadline, or place traffic that long apart. */
    private static final long LATER = MILLISECONDS.toNanos(1);

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

    private long firedAt(int index) {
        return recorder.fired.get(index).nanoTime() - start;
    }

    // ---------------------------------------------------------------- reader idle

    @Test
    void readerIdleFiresExactlyAtTheReaderIdleTime() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(R);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        assertEquals(R, firedAt(0));
    }

    /**
     * The handler keeps its reader idle time in its flags when it is at most 2^22 - 1 whole
     * nanoseconds, microseconds, milliseconds or seconds, else beside its checks: at the edges of
     * each, made by Netty's constructor and by a factory, a read postpones the first event to
     * exactly the read's time plus the idle time.
     */
    @Test
    void readerIdleTimesAtTheEdgesOfWhatTheFlagsHoldFireExactly() {
        long most = (1L << 22) - 1;
        for (long idle : new long[] {
            MILLISECONDS.toNanos(1),
            most,
            most + 1,
            TimeUnit.MICROSECONDS.toNanos(most),
            TimeUnit.MICROSECONDS.toNanos(most + 1),
            MILLISECONDS.toNanos(most),
            TimeUnit.SECONDS.toNanos(most),
            TimeUnit.SECONDS.toNanos(most + 1),
            TimeUnit.SECONDS.toNanos(20) + 1
        }) {
            for (WheelIdleStateHandler handler : List.of(
                    new WheelIdleStateHandler(idle, 0, 0, NANOSECONDS),
                    WheelIdleStateHandler.builder()
                            .readerIdleTime(Duration.ofNanos(idle))
                            .build()
                            .newHandler())) {
                assertEquals(NANOSECONDS.toMillis(idle), handler.getReaderIdleTimeInMillis(), handler::toString);
                IdleEventRecorder events = new IdleEventRecorder();
                EmbeddedChannel channel = new EmbeddedChannel();
                channel.freezeTime();
                long origin = VirtualTime.now(channel);
                channel.pipeline().addLast(handler, events);
                VirtualTime.advanceTo(channel, origin + idle / 2);
                channel.pipeline().fireChannelRead("in");
                channel.pipeline().fireChannelReadComplete();
                VirtualTime.advanceTo(channel, origin + idle / 2 + idle - 1);
                assertEquals(List.of(), events.events(), handler::toString);
                VirtualTime.advanceTo(channel, origin + idle / 2 + idle);
                assertEquals(
                        List.of(new IdleEventRecorder.Fired(FIRST_READER_IDLE_STATE_EVENT, origin + idle / 2 + idle)),
                        events.fired,
                        handler::toString);
                channel.finishAndReleaseAll();
            }
        }
    }

    /**
     * Netty's order among equal deadlines follows when each task was rescheduled, at its old
     * deadline, not when the traffic came (run against Netty's IdleStateHandler: the same list).
     * Reader and all idle 10 ms, a write at 5 ms, a read at 12 ms: the all check moves at 10 ms to
     * 15 and at 15 to 22; the reader fires at 10 and moves at 20 to 22; at 22 the all event comes
     * first. A reader deadline moved in place at the read would have come first.
     */
    @Test
    void equalDeadlinesFireInTheOrderTheirChecksWereRescheduledNotTheOrderOfTheTraffic() {
        long ms = MILLISECONDS.toNanos(1);
        start(new WheelIdleStateHandler(10 * ms, 0, 10 * ms, NANOSECONDS));
        advanceTo(5 * ms);
        ch.writeAndFlush("out");
        advanceTo(12 * ms);
        readBatch();
        advanceTo(22 * ms);
        assertEquals(
                List.of(FIRST_READER_IDLE_STATE_EVENT, FIRST_ALL_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT),
                recorder.events());
        assertEquals(List.of(10 * ms, 22 * ms, 22 * ms), List.of(firedAt(0), firedAt(1), firedAt(2)));
    }

    @Test
    void idleEventRepeatsUnflaggedEveryPeriodWithoutDrift() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(50 * R);
        assertEquals(50, recorder.fired.size());
        assertSame(FIRST_READER_IDLE_STATE_EVENT, recorder.events().get(0));
        for (int k = 1; k < 50; k++) {
            assertSame(READER_IDLE_STATE_EVENT, recorder.events().get(k));
            assertEquals((k + 1) * R, firedAt(k), "event " + k);
        }
    }

    @Test
    void completedReadBatchPostponesReaderIdle() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R / 2);
        readBatch();
        advanceTo(R + LATER);
        assertEquals(List.of(), recorder.events());
        advanceTo(R / 2 + R + LATER);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readBatchInProgressKeepsTheReaderBusy() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        ch.pipeline().fireChannelRead("in"); // no channelReadComplete yet
        advanceTo(5 * R);
        assertEquals(List.of(), recorder.events());
        ch.pipeline().fireChannelReadComplete();
        advanceTo(6 * R + LATER);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readMakesTheNextReaderIdleEventFirstAgain() {
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(2 * R + LATER);
        readBatch();
        advanceTo(3 * R + 2 * LATER);
        assertEquals(
                List.of(FIRST_READER_IDLE_STATE_EVENT, READER_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT),
                recorder.events());
    }

    @Test
    void resetReadTimeoutPostponesReaderIdleAndMakesItFirst() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS));
        advanceTo(R + LATER);
        advanceTo(R + 2 * LATER);
        handler.resetReadTimeout();
        advanceTo(2 * R + LATER);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        advanceTo(2 * R + 3 * LATER);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- writer idle

    @Test
    void writerIdleFiresWhenNoWriteCompletes() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(2 * W + LATER);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void completedWritePostponesWriterIdleAndMakesItFirst() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W + LATER);
        ch.writeAndFlush("out");
        advanceTo(2 * W);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
        advanceTo(2 * W + 2 * LATER);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writeNotYetFlushedDoesNotCountAsWrite() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        ch.write("out");
        advanceTo(W + LATER);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writeWithVoidPromiseCountsAsWrite() {
        start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        ch.writeAndFlush("out", ch.voidPromise());
        advanceTo(W + LATER);
        assertEquals(List.of(), recorder.events());
        advanceTo(W / 2 + W + LATER);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void resetWriteTimeoutPostponesWriterIdle() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(0, W, 0, NANOSECONDS));
        advanceTo(W / 2);
        handler.resetWriteTimeout();
        advanceTo(W + LATER);
        assertEquals(List.of(), recorder.events());
        advanceTo(W / 2 + W + LATER);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- all idle

    @Test
    void allIdleFiresWhenNeitherReadNorWriteHappens() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A - 1);
        assertEquals(List.of(), recorder.events());
        advanceTo(2 * A + LATER);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT, ALL_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void readPostponesAllIdle() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A / 2);
        readBatch();
        advanceTo(A + LATER);
        assertEquals(List.of(), recorder.events());
        advanceTo(A / 2 + A + LATER);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void writePostponesAllIdle() {
        start(new WheelIdleStateHandler(0, 0, A, NANOSECONDS));
        advanceTo(A / 2);
        ch.writeAndFlush("out");
        advanceTo(A + LATER);
        assertEquals(List.of(), recorder.events());
        advanceTo(A / 2 + A + LATER);
        assertEquals(List.of(FIRST_ALL_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- settings

    @Test
    void zeroOrNegativeTimeDisablesTheCheck() {
        WheelIdleStateHandler handler = start(new WheelIdleStateHandler(0, -5, 0, SECONDS));
        assertEquals(0, VirtualTime.pendingTimers(ch));
        advanceTo(SECONDS.toNanos(100));
        assertEquals(List.of(), recorder.events());
        assertEquals(
                0,
                handler.getReaderIdleTimeInMillis()
                        + handler.getWriterIdleTimeInMillis()
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
            assertEquals(
                    List.of((long) i, 2L * i, 3L * i),
                    List.of(
                            handler.getReaderIdleTimeInMillis(),
                            handler.getWriterIdleTimeInMillis(),
                            handler.getAllIdleTimeInMillis()));
        }
    }

    @Test
    void changingABuilderDoesNotChangeTheFactoriesItBuilt() {
        WheelIdleStateHandler.Builder builder = WheelIdleStateHandler.builder().readerIdleTime(Duration.ofNanos(R));
        WheelIdleStateHandler built = builder.build().newHandler();
        builder.readerIdleTime(Duration.ofNanos(2 * R)).writerIdleTime(Duration.ofNanos(W));
        WheelIdleStateHandler rebuilt = builder.build().newHandler();
        assertEquals(
                List.of(NANOSECONDS.toMillis(R), 0L),
                List.of(built.getReaderIdleTimeInMillis(), built.getWriterIdleTimeInMillis()));
        assertEquals(
                List.of(NANOSECONDS.toMillis(2 * R), NANOSECONDS.toMillis(W)),
                List.of(rebuilt.getReaderIdleTimeInMillis(), rebuilt.getWriterIdleTimeInMillis()));
        start(built);
        advanceTo(R + LATER);
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
        assertThrows(
                NullPointerException.class,
                () -> WheelIdleStateHandler.builder().allIdleTime(null));
        assertThrows(
                IllegalArgumentException.class,
                () -> WheelIdleStateHandler.builder().readerIdleTime(Duration.ofNanos(-1)));
    }

    @Test
    void builderWithNoIdleTimeIsRefusedAsTheOtherBuildersRefuseAnEmptySetup() {
        IllegalStateException refused = assertThrows(
                IllegalStateException.class,
                () -> WheelIdleStateHandler.builder().build());
        assertTrue(refused.getMessage().contains("readerIdleTime"), refused.getMessage());
        // Zero is "disabled", so three zeros are still nothing set; one positive time is enough.
        assertThrows(
                IllegalStateException.class,
                () -> WheelIdleStateHandler.builder()
                        .readerIdleTime(Duration.ZERO)
                        .writerIdleTime(Duration.ZERO)
                        .allIdleTime(Duration.ZERO)
                        .observeOutput(true)
                        .build());
        WheelIdleStateHandler.builder().writerIdleTime(Duration.ofSeconds(1)).build();
        // Netty's shape keeps Netty's behaviour: a handler that watches nothing is allowed.
        new WheelIdleStateHandler(0, 0, 0);
    }

    @Test
    void builderTakesEitherWheelsOrATimerNotBoth() {
        WheelTimer timer = WheelTimer.builder().build();
        try {
            assertThrows(
                    IllegalStateException.class,
                    () -> WheelIdleStateHandler.builder()
                            .wheels(EventLoopWheels.shared())
                            .timer(timer));
            assertThrows(
                    IllegalStateException.class,
                    () -> WheelIdleStateHandler.builder().timer(timer).wheels(EventLoopWheels.shared()));
        } finally {
            timer.stop();
        }
    }

    @Test
    void builderRejectsNullOptions() {
        assertThrows(
                NullPointerException.class,
                () -> WheelIdleStateHandler.builder().wheels(null));
        assertThrows(
                NullPointerException.class,
                () -> WheelIdleStateHandler.builder().timer(null));
        assertThrows(
                NullPointerException.class,
                () -> WheelIdleStateHandler.builder().metrics(null));
    }

    @Test
    void timersGoToTheWheelsGivenToTheBuilder() {
        EventLoopWheels own = new EventLoopWheels(Duration.ofMillis(1), 512);
        start(WheelIdleStateHandler.builder()
                .readerIdleTime(Duration.ofNanos(R))
                .allIdleTime(Duration.ofNanos(A))
                .wheels(own)
                .build()
                .newHandler());
        assertEquals(2, own.wheelFor(ch.eventLoop()).pendingTimers());
        assertEquals(0, VirtualTime.pendingTimers(ch));
        advanceTo(R + LATER);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    // ---------------------------------------------------------------- ordering and extension points

    @Test
    void deadlinesNanosecondsApartFireInDeadlineOrderAtTheirOwnInstants() {
        start(new WheelIdleStateHandler(R - 100, R - 200, 0, NANOSECONDS));
        advanceTo(R);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, FIRST_READER_IDLE_STATE_EVENT), recorder.events());
        assertEquals(List.of(R - 200, R - 100), List.of(firedAt(0), firedAt(1)));
    }

    @Test
    void closingOnTheEarlierOfTwoEventsDueTogetherStopsTheLaterOne() {
        start(new WheelIdleStateHandler(R, R, 0, NANOSECONDS) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
                super.channelIdle(ctx, evt);
                ctx.close();
            }
        });
        advanceTo(2 * R);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void checksDueAtTheSameInstantRunInTheOrderNettyScheduledThem() {
        // Writer and all idle times are equal. After the write at 31 ms, Netty's all task (due at
        // 33 ms) re-arms for 41 ms before its writer task (due at 40 ms) does, so from then on the
        // all check runs first at their common times: 41 and 61 ms (at 51 ms both see the
        // outbound buffer change: the first its new message, the second its flush progress).
        List<IdleStateEvent> expected = List.of(
                FIRST_WRITER_IDLE_STATE_EVENT,
                FIRST_ALL_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT,
                ALL_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT,
                FIRST_ALL_IDLE_STATE_EVENT,
                FIRST_WRITER_IDLE_STATE_EVENT,
                ALL_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT);
        if (NettyLine.NETTYS_IDLE_HANDLER_IN_VIRTUAL_TIME) { // on 4.1 it does not see virtual time
            assertEquals(expected, tieScenario(new IdleStateHandler(true, 0, 10, 10, MILLISECONDS)), "Netty");
        }
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
        VirtualTime.advanceTo(channel, t0 + MILLISECONDS.toNanos(61) + LATER);
        channel.finishAndReleaseAll();
        return events.events();
    }

    @Test
    void firesNettysSingletonEvents() {
        start(new WheelIdleStateHandler(R, R, R, NANOSECONDS));
        advanceTo(2 * R + LATER);
        // IdleStateEvent has identity equality: these are Netty's own instances.
        assertEquals(
                List.of(
                        FIRST_READER_IDLE_STATE_EVENT,
                        FIRST_WRITER_IDLE_STATE_EVENT,
                        FIRST_ALL_IDLE_STATE_EVENT,
                        READER_IDLE_STATE_EVENT,
                        WRITER_IDLE_STATE_EVENT,
                        ALL_IDLE_STATE_EVENT),
                recorder.events());
    }

    @Test
    void overriddenNewIdleStateEventIsWhatFires() {
        IdleStateEvent custom = new IdleStateEvent(IdleState.READER_IDLE, true) {};
        start(new WheelIdleStateHandler(R, 0, 0, NANOSECONDS) {
            @Override
            protected IdleStateEvent newIdleStateEvent(IdleState state, boolean first) {
                return custom;
            }
        });
        advanceTo(R + LATER);
        assertSame(custom, recorder.events().get(0));
    }

    @Test
    void overriddenChannelIdleReplacesFiring() {
        List<IdleStateEvent> seen = new java.util.ArrayList<>();
        start(
                new WheelIdleStateHandler(WheelIdleStateHandler.builder()
                        .writerIdleTime(Duration.ofNanos(W))
                        .build()) {
                    @Override
                    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
                        seen.add(evt);
                    }
                });
        advanceTo(W + LATER);
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
        advanceTo(3 * R + LATER);
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
        start(
                new SlowDrainChannel(),
                WheelIdleStateHandler.builder()
                        .observeOutput(observeOutput)
                        .writerIdleTime(Duration.ofNanos(W))
                        .build()
                        .newHandler());
        ((SlowDrainChannel) ch).drainBudget(10);
        ch.writeAndFlush(Unpooled.buffer().writeZero(1000)); // 10 bytes go out, 990 stay
    }

    @Test
    void drainingOutboundBufferSkipsRepeatedWriterIdleWhenObservingOutput() {
        startSlowDrain(true);
        advanceTo(W + LATER);
        for (int period = 2; period <= 5; period++) {
            ch.flush(); // ten more bytes leave: progress
            advanceTo(period * W + LATER);
        }
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), recorder.events());
    }

    @Test
    void stalledOutboundBufferIsWriterIdleWhenObservingOutput() {
        startSlowDrain(true);
        advanceTo(W + LATER);
        ch.flush();
        advanceTo(2 * W + LATER); // progress seen: skipped
        advanceTo(4 * W + LATER); // no progress since
        assertEquals(
                List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT),
                recorder.events());
    }

    @Test
    void drainingOutboundBufferIsWriterIdleWithoutObservingOutput() {
        startSlowDrain(false);
        advanceTo(W + LATER);
        for (int period = 2; period <= 3; period++) {
            ch.flush();
            advanceTo(period * W + LATER);
        }
        assertEquals(
                List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT),
                recorder.events());
    }

    // ---------------------------------------------------------------- cost

    /** The counters of the shared wheel of {@code ch}'s loop, read through its meters. */
    private static SimpleMeterRegistry wheelMeters(EmbeddedChannel ch) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new TimerWheelMetrics(EventLoopWheels.shared().wheelFor(ch.eventLoop()), Tags.empty()).bindTo(registry);
        return registry;
    }

    private static double count(SimpleMeterRegistry meters, String name) {
        return meters.get(name).functionCounter().count();
    }

    @Test
    void trafficOnlyStampsTimesAndLeavesTheWheelAlone() {
        start(new WheelIdleStateHandler(R, W, A, NANOSECONDS));
        SimpleMeterRegistry meters = wheelMeters(ch);
        double scheduled = count(meters, "wheelbeat.timer.scheduled");
        double cancelled = count(meters, "wheelbeat.timer.cancelled");
        for (int i = 0; i < 1000; i++) {
            ch.advanceTimeBy(10, TimeUnit.MICROSECONDS); // 10 ms in all: before the first deadline
            readBatch();
            ch.pipeline().writeAndFlush("out");
        }
        ch.outboundMessages().clear();
        assertEquals(scheduled, count(meters, "wheelbeat.timer.scheduled"));
        assertEquals(cancelled, count(meters, "wheelbeat.timer.cancelled"));
        assertEquals(3, VirtualTime.pendingTimers(ch));
        assertEquals(List.of(), recorder.events());
    }

    @Test
    void aConnectionThatKeepsTalkingWakesEachCheckAboutOncePerIdlePeriodAsNettysTaskDoes() {
        start(new WheelIdleStateHandler(R, W, A, NANOSECONDS));
        SimpleMeterRegistry meters = wheelMeters(ch);
        double expiredBefore = count(meters, "wheelbeat.timer.expired");
        long span = 100 * A;
        for (long t = W / 2; t <= span; t += W / 2) { // traffic every W / 2
            advanceTo(t);
            readBatch();
            ch.pipeline().writeAndFlush("out");
        }
        ch.outboundMessages().clear();
        double wakes = count(meters, "wheelbeat.timer.expired") - expiredBefore;
        // Each check wakes, finds traffic at most one gap old, and waits until the idle time after
        // it: it wakes at least once per idle time and at most once per idle time minus the gap.
        long gap = W / 2;
        double atLeast = (double) span / R + (double) span / W + (double) span / A - 3;
        double atMost = (double) span / (R - gap) + (double) span / (W - gap) + (double) span / (A - gap) + 3;
        assertTrue(wakes >= atLeast && wakes <= atMost, wakes + " wakes, expected " + atLeast + " to " + atMost);
        assertEquals(List.of(), recorder.events());
    }
}
