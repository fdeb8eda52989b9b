package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.TimerWheel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Runs randomized traffic scripts, from fixed seeds, through Netty's {@link IdleStateHandler} and
 * through {@link WheelIdleStateHandler} with the same settings, and requires the same events (state
 * and first flag, in order), each fired no sooner than Netty's and at most one wheel tick later.
 *
 * <p>Scripts mix read batches, reads left incomplete, completions alone, writes that are flushed,
 * left unflushed, or flushed through a pretend socket that takes only a few bytes
 * ({@link SlowDrainChannel}: the outbound buffer does not drain, for {@code observeOutput}), resets,
 * and pauses of random lengths. Both channels run in virtual time as a punctual event loop would
 * ({@link VirtualTime#advanceTo}).
 *
 * <p>Pauses are random to the nanosecond, so traffic lands anywhere within the wheel's ticks,
 * including between a deadline and the tick that fires it, and idle times are random to the
 * nanosecond too, so deadlines fall anywhere within ticks. Idle times are sometimes equal, so
 * that checks of different kinds fall due at the very same nanosecond, where Netty's order
 * (which its tasks were scheduled first) decides which of the writer and all checks sees an
 * outbound buffer change first.
 */
class WheelIdleStateHandlerDifferentialTest {

    private static final long TICK = 1L << 20; // the shared wheels' tick
    /** How many scripts, and the seed of the first; override to explore: -Dwheelbeat.idle.scripts=30000. */
    private static final int SCRIPTS = Integer.getInteger("wheelbeat.idle.scripts", 1200);
    private static final long FIRST_SEED = Long.getLong("wheelbeat.idle.seed", 20_250_611L);

    /** One step of a script. */
    private record Step(Kind kind, long arg) {
        @Override
        public String toString() {
            return kind + (arg == 0 ? "" : "(" + arg + ")");
        }
    }

    private enum Kind {
        /** arg: nanoseconds of virtual time. */
        PAUSE,
        READ_BATCH,
        READ_WITHOUT_COMPLETE,
        READ_COMPLETE,
        /** arg: bytes, written and flushed through a socket that takes everything. */
        WRITE_AND_FLUSH,
        /** arg: bytes, written and left unflushed. */
        WRITE,
        /** arg: bytes the socket takes in this flush. */
        SLOW_FLUSH,
        RESET_READ,
        RESET_WRITE
    }

    private record Script(long seed, boolean observeOutput, long readerNanos, long writerNanos,
                          long allNanos, List<Step> steps) {
        @Override
        public String toString() {
            return "seed " + seed + ": observeOutput=" + observeOutput + " reader=" + readerNanos
                    + " writer=" + writerNanos + " all=" + allNanos + " ns, steps " + steps;
        }
    }

    /** An event as compared: state, first flag, and when it fired, in ns after the start. */
    private record Event(IdleStateEvent event, long at) {
        @Override
        public String toString() {
            return event.state() + (event.isFirst() ? "(first)" : "") + "@" + at;
        }
    }

    @Test
    void firesTheEventsOfNettysIdleStateHandlerWithinOneTick() {
        int events = 0;
        for (int i = 0; i < SCRIPTS; i++) {
            Script script = randomScript(FIRST_SEED + i);
            Run netty = run(script, new IdleStateHandler(script.observeOutput, script.readerNanos,
                    script.writerNanos, script.allNanos, NANOSECONDS));
            Run wheel = run(script, new WheelIdleStateHandler(script.observeOutput, script.readerNanos,
                    script.writerNanos, script.allNanos, NANOSECONDS));
            compare(script, netty, wheel);
            events += netty.events.size();
        }
        // The scripts must exercise something: thousands of events, not a silent pass.
        assertTrue(events > 20 * SCRIPTS, "only " + events + " events in " + SCRIPTS + " scripts");
        System.out.printf("differential: %d scripts from seed %d, %d events, all as Netty's%n", SCRIPTS, FIRST_SEED, events);
    }

    /**
     * Compares the events Netty fired by the script's end with the wheel's, which ran one tick
     * longer to catch up with the last of them.
     */
    private static void compare(Script script, Run netty, Run wheel) {
        List<Event> expected = netty.events.stream().filter(e -> e.at() <= netty.end).toList();
        for (int i = 0; i < Math.min(expected.size(), wheel.events.size()); i++) {
            Event want = expected.get(i);
            Event got = wheel.events.get(i);
            long late = got.at() - want.at();
            if (want.event() != got.event() || late < 0 || late > TICK) {
                fail("event " + i + ": Netty " + want + ", wheel " + got + around(i, expected, wheel.events, script));
            }
        }
        boolean wheelFiredMore = wheel.events.size() > expected.size()
                && wheel.events.get(expected.size()).at() <= netty.end;
        if (wheel.events.size() < expected.size() || wheelFiredMore) {
            fail("Netty fired " + expected.size() + " events by the end, the wheel " + wheel.events.size()
                    + around(Math.min(expected.size(), wheel.events.size()), expected, wheel.events, script));
        }
    }

    private static String around(int index, List<Event> netty, List<Event> wheel, Script script) {
        int from = Math.max(0, index - 4);
        return "\n" + script + "\nNetty from event " + from + ": " + netty.subList(Math.min(from, netty.size()),
                Math.min(index + 3, netty.size())) + "\nwheel from event " + from + ": "
                + wheel.subList(Math.min(from, wheel.size()), Math.min(index + 3, wheel.size()));
    }

    /** The events of one run, and when its script ended (ns after the start). */
    private record Run(List<Event> events, long end) {
    }

    private static Run run(Script script, ChannelHandler handler) {
        SlowDrainChannel ch = new SlowDrainChannel();
        ch.freezeTime();
        long start = VirtualTime.now(ch);
        TimerWheel wheel = EventLoopWheels.shared().wheelFor(ch.eventLoop()).wheel();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline().addLast(handler, recorder);
        for (Step step : script.steps) {
            switch (step.kind) {
                case PAUSE -> VirtualTime.advanceTo(ch, VirtualTime.now(ch) + step.arg);
                case READ_BATCH -> {
                    ch.pipeline().fireChannelRead("in");
                    ch.pipeline().fireChannelReadComplete();
                }
                case READ_WITHOUT_COMPLETE -> ch.pipeline().fireChannelRead("in");
                case READ_COMPLETE -> ch.pipeline().fireChannelReadComplete();
                case WRITE_AND_FLUSH -> {
                    ch.drainBudget(Long.MAX_VALUE);
                    ch.writeAndFlush(Unpooled.buffer().writeZero((int) step.arg));
                }
                case WRITE -> ch.write(Unpooled.buffer().writeZero((int) step.arg));
                case SLOW_FLUSH -> {
                    ch.drainBudget(step.arg);
                    ch.flush();
                }
                case RESET_READ -> resetRead(handler);
                case RESET_WRITE -> resetWrite(handler);
            }
            ch.inboundMessages().clear();
        }
        long end = VirtualTime.now(ch) - start;
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + TICK);
        assertEquals(List.of(), recorder.exceptions, script::toString);
        ch.finishAndReleaseAll();
        if (handler instanceof WheelIdleStateHandler) {
            assertEquals(0, wheel.pendingTimers(), () -> "timers left after close: " + script);
        }
        return new Run(recorder.fired.stream().map(f -> new Event(f.event(), f.nanoTime() - start)).toList(), end);
    }

    private static void resetRead(ChannelHandler handler) {
        if (handler instanceof IdleStateHandler netty) {
            netty.resetReadTimeout();
        } else {
            ((WheelIdleStateHandler) handler).resetReadTimeout();
        }
    }

    private static void resetWrite(ChannelHandler handler) {
        if (handler instanceof IdleStateHandler netty) {
            netty.resetWriteTimeout();
        } else {
            ((WheelIdleStateHandler) handler).resetWriteTimeout();
        }
    }

    // ---------------------------------------------------------------- script generation

    private static Script randomScript(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long reader = randomIdleTime(random);
        long writer = random.nextInt(6) == 0 ? reader : randomIdleTime(random);
        long all = random.nextInt(6) == 0 ? Math.max(reader, writer) : randomIdleTime(random);
        if (reader == 0 && writer == 0 && all == 0) {
            all = MILLISECONDS.toNanos(7) + random.nextLong(TICK);
        }
        long longest = Math.max(reader, Math.max(writer, all));
        List<Step> steps = new ArrayList<>();
        int count = 30 + random.nextInt(50);
        for (int i = 0; i < count; i++) {
            steps.add(randomStep(random, longest));
        }
        steps.add(new Step(Kind.PAUSE, 3 * longest + TICK)); // let the last periods play out
        return new Script(seed, random.nextBoolean(), reader, writer, all, List.copyOf(steps));
    }

    /** Zero (disabled), Netty's 1 ms floor (below one tick), or 2 to 40 ms to the nanosecond. */
    private static long randomIdleTime(SplittableRandom random) {
        int pick = random.nextInt(10);
        if (pick < 3) {
            return 0;
        }
        if (pick == 3) {
            return MILLISECONDS.toNanos(1);
        }
        return MILLISECONDS.toNanos(2) + random.nextLong(MILLISECONDS.toNanos(38));
    }

    private static Step randomStep(SplittableRandom random, long longest) {
        int pick = random.nextInt(100);
        if (pick < 35) {
            long nanos = switch (random.nextInt(10)) {
                case 0 -> random.nextLong(6 * longest); // long enough for repeated events
                case 1 -> 0; // several steps at one instant
                case 2 -> random.nextLong(TICK); // within a tick
                default -> random.nextLong(2 * longest);
            };
            return new Step(Kind.PAUSE, nanos);
        }
        if (pick < 50) {
            return new Step(Kind.READ_BATCH, 0);
        }
        if (pick < 55) {
            return new Step(Kind.READ_WITHOUT_COMPLETE, 0);
        }
        if (pick < 60) {
            return new Step(Kind.READ_COMPLETE, 0);
        }
        if (pick < 70) {
            return new Step(Kind.WRITE_AND_FLUSH, 1 + random.nextInt(500));
        }
        if (pick < 78) {
            return new Step(Kind.WRITE, 1 + random.nextInt(500));
        }
        if (pick < 92) {
            return new Step(Kind.SLOW_FLUSH, 1 + random.nextInt(200));
        }
        return new Step(random.nextBoolean() ? Kind.RESET_READ : Kind.RESET_WRITE, 0);
    }
}
