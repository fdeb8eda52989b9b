package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.VirtualTime;
import io.wheelbeat.netty.idle.WheelIdleStateHandlerDifferentialTest.Loop;
import io.wheelbeat.netty.idle.WheelIdleStateHandlerDifferentialTest.LoopTime;
import io.wheelbeat.netty.idle.WheelIdleStateHandlerDifferentialTest.ManualLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * Runs randomized scripts, from fixed seeds, through Netty's {@link ReadTimeoutHandler} and
 * {@link WriteTimeoutHandler} and through {@link WheelReadTimeoutHandler} and
 * {@link WheelWriteTimeoutHandler} with the same timeout, and requires the same outcome at the
 * same instants: every call of {@code readTimedOut} / {@code writeTimedOut} (recorded by
 * subclasses that do not close, so that the timeouts of every write and every repeated read
 * timeout are compared), and with the handlers as they are, the instant the timeout exception is
 * fired and the channel closed.
 *
 * <p>Read scripts mix read batches, reads left incomplete, completions alone, pauses and loop
 * stalls. Write scripts mix writes left unflushed, flushed through a socket that takes
 * everything, a few bytes, or nothing ({@link SlowDrainChannel}), the socket draining on its own,
 * writes from a handler nearer the head (not timed), writes held there and completed out of
 * order, pauses, stalls and the handler's removal.
 * Loops run their tasks punctually or on a 1 ms or 5 ms step, as {@link WheelIdleStateHandlerDifferentialTest}'s do.
 * The clock-origin runs put the wheel handlers' timers on a wheel driven in virtual time from
 * near {@code Long.MAX_VALUE} (wrapping mid-script), {@code Long.MIN_VALUE}, and across zero.
 */
class WheelTimeoutHandlersDifferentialTest {

    private static final int SCRIPTS = Integer.getInteger("wheelbeat.timeout.scripts", 100);
    private static final long FIRST_SEED = Long.getLong("wheelbeat.timeout.seed", 20_261_125L);
    private static final int MIN_PERIODS = 40;

    private enum Kind {
        PAUSE,
        STALL,
        READ_BATCH,
        READ_WITHOUT_COMPLETE,
        READ_COMPLETE,
        WRITE,
        WRITE_AND_FLUSH,
        SLOW_FLUSH,
        DRAIN,
        HEAD_WRITE,
        REMOVE,
        /** The head handler starts holding the writes that reach it. */
        HOLD,
        /** The head handler completes the newest write it holds: writes complete out of order. */
        COMPLETE_NEWEST_HELD,
        /** The head handler passes the writes it holds on, in order, and stops holding. */
        RELEASE
    }

    private record Step(Kind kind, long arg) {
        @Override
        public String toString() {
            return kind + (arg == 0 ? "" : "(" + arg + ")");
        }
    }

    private record Script(long seed, Loop loop, long timeoutNanos, List<Step> steps) {
        long duration() {
            return steps.stream()
                    .filter(s -> s.kind == Kind.PAUSE || s.kind == Kind.STALL)
                    .mapToLong(Step::arg)
                    .sum();
        }

        @Override
        public String toString() {
            return "seed " + seed + ", loop " + loop + ", timeout " + timeoutNanos + " ns, steps " + steps;
        }
    }

    /** What a run shows: each timed-out call, or the exception fired and the close, in ns after the start. */
    private record Outcome(List<Long> timedOutAt, List<String> fired, long closedAt) {}

    // ---------------------------------------------------------------- the tests

    @Test
    void readTimeoutsFallWhenNettysDoOnEveryLoop() {
        int timeouts = 0;
        for (Loop loop : Loop.values()) {
            for (int i = 0; i < SCRIPTS; i++) {
                Script script = randomScript(FIRST_SEED + loop.ordinal() * (long) SCRIPTS + i, loop, true);
                Outcome netty = runOnEmbeddedLoop(script, recordingNettyRead(script));
                Outcome wheel = runOnEmbeddedLoop(script, recordingWheelRead(script, null));
                assertEquals(netty, wheel, script::toString);
                assertEquals(
                        runOnEmbeddedLoop(script, new ReadTimeoutHandler(script.timeoutNanos, NANOSECONDS)),
                        runOnEmbeddedLoop(script, new WheelReadTimeoutHandler(script.timeoutNanos, NANOSECONDS)),
                        script::toString);
                timeouts += netty.timedOutAt.size();
            }
        }
        // The scripts must exercise something: many timeouts, not a silent pass.
        assertTrue(timeouts > 10 * SCRIPTS, timeouts + " read timeouts");
    }

    @Test
    void writeTimeoutsFallWhenNettysDoOnEveryLoop() {
        int timeouts = 0;
        int closes = 0;
        for (Loop loop : Loop.values()) {
            for (int i = 0; i < SCRIPTS; i++) {
                Script script = randomScript(FIRST_SEED + (3L + loop.ordinal()) * SCRIPTS + i, loop, false);
                Outcome netty = runOnEmbeddedLoop(script, recordingNettyWrite(script));
                Outcome wheel = runOnEmbeddedLoop(script, recordingWheelWrite(script, null));
                assertEquals(netty, wheel, script::toString);
                Outcome closing = runOnEmbeddedLoop(script, new WriteTimeoutHandler(script.timeoutNanos, NANOSECONDS));
                assertEquals(
                        closing,
                        runOnEmbeddedLoop(script, new WheelWriteTimeoutHandler(script.timeoutNanos, NANOSECONDS)),
                        script::toString);
                timeouts += netty.timedOutAt.size();
                closes += closing.closedAt >= 0 ? 1 : 0;
            }
        }
        assertTrue(timeouts > 10 * SCRIPTS && closes > SCRIPTS, timeouts + " write timeouts, " + closes + " closes");
    }

    /**
     * Wherever the clock starts, and across its wrap, the wheel handlers time out when Netty's do
     * on a clock that starts near zero (Netty's scheduler cannot run tasks at negative readings).
     */
    @Test
    void timeoutsFallWhenNettysDoWhereverTheClockStartsAndAcrossItsWrap() {
        int timeouts = 0;
        for (int i = 0; i < SCRIPTS / 4; i++) {
            for (boolean reads : new boolean[] {true, false}) {
                Script script = randomScript(FIRST_SEED + 6L * SCRIPTS + i, Loop.PUNCTUAL, reads);
                Outcome netty =
                        runOnEmbeddedLoop(script, reads ? recordingNettyRead(script) : recordingNettyWrite(script));
                long half = script.duration() / 2;
                for (long origin : new long[] {Long.MAX_VALUE - half, Long.MIN_VALUE, -half}) {
                    ManualLoop loop = new ManualLoop(origin);
                    ExecutorDrivenWheel wheel = Drivers.executorDriven(loop, new WheelSettings().ticker(loop::now));
                    SlowDrainChannel ch = loop.drive(new SlowDrainChannel(loop.ticker));
                    Recording recording =
                            reads ? recordingWheelRead(script, wheel) : recordingWheelWrite(script, wheel);
                    assertEquals(netty, run(script, ch, loop, recording), () -> "origin " + origin + ": " + script);
                    assertEquals(0, wheel.pendingTimers(), () -> "timers left, origin " + origin + ": " + script);
                }
                timeouts += netty.timedOutAt.size();
            }
        }
        assertTrue(timeouts > SCRIPTS, timeouts + " timeouts");
    }

    /**
     * A handler removed from one channel and added to another (another loop with its own clock),
     * then back to the first: Netty's write timeout handler times each write, and calls
     * {@code writeTimedOut} with the context, of the pipeline it was written in (closing once, for
     * the handler's life); its read timeout handler, an {@code IdleStateHandler}, does not start
     * again once removed. The wheel handlers must do the same.
     */
    @Test
    void aHandlerMovedToAnotherChannelTimesOutThereAsNettysDoes() {
        long timeout = MILLISECONDS.toNanos(100);
        List<String> netty = moved(new MovingNettyWrite(timeout), timeout);
        assertEquals(
                List.of(
                        "b: writeTimedOut@100",
                        "b: WriteTimeoutException.INSTANCE@100",
                        "b: closed@100",
                        "a: writeTimedOut@450",
                        "a: closed@650"),
                netty,
                "the reference"); // a closes at the end
        assertEquals(netty, moved(new MovingWheelWrite(timeout), timeout));
        assertEquals(moved(new MovingNettyRead(timeout), timeout), moved(new MovingWheelRead(timeout), timeout));
    }

    // A handler that is not @Sharable can be added to a pipeline once only, even after its removal:
    // these are, and each is in one pipeline at a time.

    @ChannelHandler.Sharable
    private static final class MovingNettyWrite extends WriteTimeoutHandler {
        MovingNettyWrite(long timeoutNanos) {
            super(timeoutNanos, NANOSECONDS);
        }

        @Override
        protected void writeTimedOut(ChannelHandlerContext ctx) throws Exception {
            noteTimedOut(ctx);
            super.writeTimedOut(ctx);
        }
    }

    @ChannelHandler.Sharable
    private static final class MovingWheelWrite extends WheelWriteTimeoutHandler {
        MovingWheelWrite(long timeoutNanos) {
            super(timeoutNanos, NANOSECONDS);
        }

        @Override
        protected void writeTimedOut(ChannelHandlerContext ctx) throws Exception {
            noteTimedOut(ctx);
            super.writeTimedOut(ctx);
        }
    }

    @ChannelHandler.Sharable
    private static final class MovingNettyRead extends ReadTimeoutHandler {
        MovingNettyRead(long timeoutNanos) {
            super(timeoutNanos, NANOSECONDS);
        }
    }

    @ChannelHandler.Sharable
    private static final class MovingWheelRead extends WheelReadTimeoutHandler {
        MovingWheelRead(long timeoutNanos) {
            super(timeoutNanos, NANOSECONDS);
        }
    }

    /** What a {@link #moved} run notes, in order: "channel: what@ms since the channel started". */
    private static final List<String> MOVED_EVENTS = new ArrayList<>();

    private static void note(EmbeddedChannel ch, String what) {
        MOVED_EVENTS.add(ch.attr(NAME).get() + ": " + what + "@"
                + NANOSECONDS.toMillis(VirtualTime.now(ch) - ch.attr(START).get()));
    }

    private static void noteTimedOut(ChannelHandlerContext ctx) {
        note((EmbeddedChannel) ctx.channel(), "writeTimedOut");
    }

    private static final AttributeKey<String> NAME = AttributeKey.valueOf("movedName");
    private static final AttributeKey<Long> START = AttributeKey.valueOf("movedStart");

    private static EmbeddedChannel movedChannel(String name) {
        EmbeddedChannel ch = VirtualTime.frozenChannel(new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                note(
                        (EmbeddedChannel) ctx.channel(),
                        cause == WriteTimeoutException.INSTANCE
                                ? "WriteTimeoutException.INSTANCE"
                                : cause == ReadTimeoutException.INSTANCE
                                        ? "ReadTimeoutException.INSTANCE"
                                        : cause.toString());
            }
        });
        ch.attr(NAME).set(name);
        ch.attr(START).set(VirtualTime.now(ch));
        ch.closeFuture().addListener(f -> note(ch, "closed"));
        return ch;
    }

    /**
     * Channel a: the handler added, a write left pending (never flushed), 50 ms, removed. Channel
     * b (its own loop and clock): added, a write left pending, both clocks 3 timeouts on; removed
     * from b, added back to a, a write there, both clocks 3 timeouts on. No reads anywhere.
     */
    private static List<String> moved(ChannelHandler handler, long timeout) {
        MOVED_EVENTS.clear();
        EmbeddedChannel a = movedChannel("a");
        EmbeddedChannel b = movedChannel("b");
        long stepMillis = NANOSECONDS.toMillis(timeout) / 2;
        a.pipeline().addFirst(handler);
        a.write("a1");
        VirtualTime.advance(a, stepMillis);
        a.pipeline().remove(handler);
        b.pipeline().addFirst(handler);
        b.write("b1");
        for (int i = 0; i < 6; i++) {
            VirtualTime.advance(a, stepMillis);
            VirtualTime.advance(b, stepMillis);
        }
        if (b.pipeline().context(handler) != null) {
            b.pipeline().remove(handler);
        }
        a.pipeline().addFirst(handler);
        a.write("a2");
        for (int i = 0; i < 6; i++) {
            VirtualTime.advance(a, stepMillis);
            VirtualTime.advance(b, stepMillis);
        }
        a.finishAndReleaseAll();
        b.finishAndReleaseAll();
        return List.copyOf(MOVED_EVENTS);
    }

    // ---------------------------------------------------------------- handlers that record instead of closing

    /** The instants of a recording handler's timeouts, on the script's clock. */
    private static final class Timeouts {
        final List<Long> at = new ArrayList<>();
        LongSupplier clock;

        void record() {
            at.add(clock.getAsLong());
        }
    }

    /** Where a recording handler notes the instants of its timeouts. */
    private record Recording(ChannelHandler handler, Timeouts timeouts) {}

    private static Recording recordingNettyRead(Script script) {
        Timeouts timeouts = new Timeouts();
        return new Recording(
                new ReadTimeoutHandler(script.timeoutNanos, NANOSECONDS) {
                    @Override
                    protected void readTimedOut(ChannelHandlerContext ctx) {
                        timeouts.record();
                    }
                },
                timeouts);
    }

    private static Recording recordingWheelRead(Script script, ExecutorDrivenWheel wheel) {
        Timeouts timeouts = new Timeouts();
        return new Recording(
                wheel == null
                        ? new WheelReadTimeoutHandler(script.timeoutNanos, NANOSECONDS) {
                            @Override
                            protected void readTimedOut(ChannelHandlerContext ctx) {
                                timeouts.record();
                            }
                        }
                        : new WheelReadTimeoutHandler(WheelIdleStateHandler.builder()
                                .timer(wheel)
                                .readerIdleTime(Duration.ofNanos(script.timeoutNanos))
                                .build()) {
                            @Override
                            protected void readTimedOut(ChannelHandlerContext ctx) {
                                timeouts.record();
                            }
                        },
                timeouts);
    }

    private static Recording recordingNettyWrite(Script script) {
        Timeouts timeouts = new Timeouts();
        return new Recording(
                new WriteTimeoutHandler(script.timeoutNanos, NANOSECONDS) {
                    @Override
                    protected void writeTimedOut(ChannelHandlerContext ctx) {
                        timeouts.record();
                    }
                },
                timeouts);
    }

    private static Recording recordingWheelWrite(Script script, ExecutorDrivenWheel wheel) {
        Timeouts timeouts = new Timeouts();
        return new Recording(
                new WheelWriteTimeoutHandler(
                        script.timeoutNanos,
                        NANOSECONDS,
                        wheel == null ? EventLoopWheels.shared()::wheelFor : loop -> wheel) {
                    @Override
                    protected void writeTimedOut(ChannelHandlerContext ctx) {
                        timeouts.record();
                    }
                },
                timeouts);
    }

    // ---------------------------------------------------------------- running a script

    /**
     * Lets a script write from a handler nearer the head than the timeout handler, and hold the
     * writes that reach it, completing them out of order (as a multiplexing codec may).
     */
    private static final class HeadWriter extends ChannelOutboundHandlerAdapter {
        ChannelHandlerContext ctx;
        boolean holding;
        final List<Object> heldMessages = new ArrayList<>();
        final List<ChannelPromise> heldPromises = new ArrayList<>();

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (holding) {
                heldMessages.add(msg);
                heldPromises.add(promise);
            } else {
                ctx.write(msg, promise);
            }
        }

        void completeNewest() {
            if (!heldPromises.isEmpty()) {
                ReferenceCountUtil.release(heldMessages.remove(heldMessages.size() - 1));
                heldPromises.remove(heldPromises.size() - 1).trySuccess();
            }
        }

        void release() {
            holding = false;
            for (int i = 0; i < heldMessages.size(); i++) {
                ctx.write(heldMessages.get(i), heldPromises.get(i));
            }
            heldMessages.clear();
            heldPromises.clear();
        }
    }

    /** Records the exceptions that reach the tail, and when. */
    private static final class Tail extends ChannelInboundHandlerAdapter {
        final List<String> fired = new ArrayList<>();
        LongSupplier clock;
        long start;

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            String name = cause == ReadTimeoutException.INSTANCE
                    ? "ReadTimeoutException.INSTANCE"
                    : cause == WriteTimeoutException.INSTANCE ? "WriteTimeoutException.INSTANCE" : cause.toString();
            fired.add(name + "@" + (clock.getAsLong() - start));
        }
    }

    /** Runs a handler as it is: it closes the channel instead of recording. */
    private static Outcome runOnEmbeddedLoop(Script script, ChannelHandler handler) {
        return runOnEmbeddedLoop(script, new Recording(handler, new Timeouts()));
    }

    private static Outcome runOnEmbeddedLoop(Script script, Recording recording) {
        SlowDrainChannel ch = new SlowDrainChannel();
        return run(script, ch, WheelIdleStateHandlerDifferentialTest.embeddedTime(ch, script.loop), recording);
    }

    private static Outcome run(Script script, SlowDrainChannel ch, LoopTime time, Recording recording) {
        long start = time.now();
        ChannelHandler handler = recording.handler;
        Timeouts timeouts = recording.timeouts;
        timeouts.clock = time::now;
        HeadWriter head = new HeadWriter();
        Tail tail = new Tail();
        tail.clock = time::now;
        tail.start = start;
        long[] closedAt = {-1};
        ch.closeFuture().addListener(f -> closedAt[0] = time.now() - start);
        ch.pipeline().addLast(head, handler, tail);
        for (Step step : script.steps) {
            switch (step.kind) {
                case WRITE_AND_FLUSH ->
                    ch.pipeline().writeAndFlush(Unpooled.buffer().writeZero((int) step.arg));
                case HOLD -> head.holding = true;
                case COMPLETE_NEWEST_HELD -> head.completeNewest();
                case RELEASE -> head.release();
                case REMOVE -> {
                    if (ch.pipeline().context(handler) != null) {
                        ch.pipeline().remove(handler);
                    }
                }
                default ->
                    WheelIdleStateHandlerDifferentialTest.traffic(step.kind.name(), step.arg, ch, time, head.ctx);
            }
            ch.inboundMessages().clear();
        }
        long closedBeforeTheEnd = closedAt[0];
        head.release();
        ch.finishAndReleaseAll();
        return new Outcome(timeouts.at.stream().map(at -> at - start).toList(), tail.fired, closedBeforeTheEnd);
    }

    // ---------------------------------------------------------------- script generation

    private static Script randomScript(long seed, Loop loop, boolean reads) {
        SplittableRandom random = new SplittableRandom(seed);
        long timeout = random.nextInt(5) == 0
                ? MILLISECONDS.toNanos(1)
                : MILLISECONDS.toNanos(2) + random.nextLong(MILLISECONDS.toNanos(38));
        List<Step> steps = new ArrayList<>();
        for (long elapsed = 0; elapsed < MIN_PERIODS * timeout; ) {
            Step step = reads ? randomReadStep(random, timeout) : randomWriteStep(random, timeout);
            steps.add(step);
            if (step.kind == Kind.PAUSE || step.kind == Kind.STALL) {
                elapsed += step.arg;
            }
        }
        if (!reads && random.nextInt(8) == 0) {
            steps.add(steps.size() / 2 + random.nextInt(steps.size() - steps.size() / 2), new Step(Kind.REMOVE, 0));
        }
        steps.add(new Step(Kind.PAUSE, 3 * timeout)); // let the last timeouts fall
        return new Script(seed, loop, timeout, List.copyOf(steps));
    }

    private static Step randomTimeStep(SplittableRandom random, long timeout) {
        if (random.nextInt(10) == 0) {
            return new Step(
                    Kind.STALL,
                    random.nextBoolean() ? random.nextLong(MILLISECONDS.toNanos(2)) : random.nextLong(3 * timeout));
        }
        long nanos = switch (random.nextInt(6)) {
            case 0 -> 0; // several steps at one instant
            case 1 -> random.nextLong(MILLISECONDS.toNanos(1));
            case 2 -> random.nextLong(4 * timeout); // long enough for timeouts to repeat
            default -> random.nextLong(2 * timeout);
        };
        return new Step(Kind.PAUSE, nanos);
    }

    private static Step randomReadStep(SplittableRandom random, long timeout) {
        int pick = random.nextInt(10);
        if (pick < 4) {
            return randomTimeStep(random, timeout);
        }
        return new Step(pick < 8 ? Kind.READ_BATCH : pick < 9 ? Kind.READ_WITHOUT_COMPLETE : Kind.READ_COMPLETE, 0);
    }

    private static Step randomWriteStep(SplittableRandom random, long timeout) {
        int pick = random.nextInt(20);
        if (pick < 7) {
            return randomTimeStep(random, timeout);
        }
        int bytes = 1 + random.nextInt(300);
        return switch (pick) {
            case 7, 8 -> new Step(Kind.WRITE, bytes);
            case 9, 10, 11 -> new Step(Kind.WRITE_AND_FLUSH, bytes); // drains at the current budget
            case 12, 13 -> new Step(Kind.SLOW_FLUSH, random.nextInt(4) == 0 ? Long.MAX_VALUE : random.nextInt(400));
            case 14, 15 -> new Step(Kind.DRAIN, random.nextInt(4) == 0 ? Long.MAX_VALUE : random.nextInt(400));
            case 16 ->
                new Step(
                        switch (random.nextInt(3)) {
                            case 0 -> Kind.HOLD;
                            case 1 -> Kind.COMPLETE_NEWEST_HELD;
                            default -> Kind.RELEASE;
                        },
                        0);
            default -> new Step(Kind.HEAD_WRITE, bytes);
        };
    }
}
