package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.VirtualTicker;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Runs randomized traffic scripts, from fixed seeds, through Netty's {@link IdleStateHandler} and
 * through {@link WheelIdleStateHandler} with the same settings, and requires the very same events
 * (state and first flag, in order) at the very same instants.
 *
 * <p>Each script spans at least {@value #MIN_PERIODS} periods of its longest idle time, with
 * silences long enough for events to repeat many times, and mixes read batches, reads left
 * incomplete, completions alone, writes that are flushed, left unflushed, or flushed through a
 * pretend socket that takes only a few bytes ({@link SlowDrainChannel}), progress of the outbound
 * buffer made outside the handler (the socket draining, as on {@code OP_WRITE}; writes from a
 * handler nearer the head), resets, loop stalls (time passes and no task runs), and sometimes a
 * close or the handler's removal. Pauses and idle times are random to the nanosecond, and idle
 * times are sometimes equal, so that checks of different kinds fall due at the same instant.
 *
 * <p>The event loop runs its tasks either punctually (each at its deadline) or on a fixed step of
 * 1 ms or 5 ms (each at the first step at or after its deadline), as a busy loop does: what Netty's
 * handler does then depends on when its tasks run, and the wheel's handler must do the same.
 */
class WheelIdleStateHandlerDifferentialTest {

    /** Scripts per loop kind, and the seed of the first; override to explore: -Dwheelbeat.idle.scripts=5000. */
    private static final int SCRIPTS = Integer.getInteger("wheelbeat.idle.scripts", 1000);

    private static final long FIRST_SEED = Long.getLong("wheelbeat.idle.seed", 20_251_122L);
    private static final int MIN_PERIODS = 60;
    private static final int ORIGIN_SCRIPTS = SCRIPTS / 5;

    /** How the event loop runs its scheduled tasks: at their deadlines, or on a fixed step. */
    enum Loop {
        PUNCTUAL(0),
        EVERY_MILLISECOND(MILLISECONDS.toNanos(1)),
        EVERY_5_MILLISECONDS(MILLISECONDS.toNanos(5));

        final long stepNanos;

        Loop(long stepNanos) {
            this.stepNanos = stepNanos;
        }
    }

    /** One step of a script. */
    private record Step(Kind kind, long arg) {
        @Override
        public String toString() {
            return kind + (arg == 0 ? "" : "(" + arg + ")");
        }
    }

    private enum Kind {
        /** arg: nanoseconds of virtual time, tasks running as the loop runs them. */
        PAUSE,
        /** arg: nanoseconds of virtual time with no task running (a stalled loop). */
        STALL,
        READ_BATCH,
        READ_WITHOUT_COMPLETE,
        READ_COMPLETE,
        /** arg: bytes, written and flushed through a socket that takes everything. */
        WRITE_AND_FLUSH,
        /** arg: bytes, written and left unflushed. */
        WRITE,
        /** arg: bytes the socket takes in this flush. */
        SLOW_FLUSH,
        /** arg: bytes the socket takes, flushed by the transport (not through the pipeline). */
        DRAIN,
        /** arg: bytes written and flushed by a handler nearer the head (not through the idle handler). */
        HEAD_WRITE,
        RESET_READ,
        RESET_WRITE,
        CLOSE,
        REMOVE
    }

    private record Script(
            long seed,
            Loop loop,
            boolean observeOutput,
            long readerNanos,
            long writerNanos,
            long allNanos,
            List<Step> steps) {
        /** Virtual time the script spans: its pauses and stalls. */
        long duration() {
            return steps.stream()
                    .filter(s -> s.kind == Kind.PAUSE || s.kind == Kind.STALL)
                    .mapToLong(Step::arg)
                    .sum();
        }

        @Override
        public String toString() {
            return "seed " + seed + ", loop " + loop + ": observeOutput=" + observeOutput + " reader=" + readerNanos
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
    void firesNettysEventsAtNettysInstantsOnAPunctualLoop() {
        compareScripts(Loop.PUNCTUAL, FIRST_SEED);
    }

    @Test
    void firesNettysEventsAtNettysInstantsOnALoopThatRunsItsTasksEveryMillisecond() {
        compareScripts(Loop.EVERY_MILLISECOND, FIRST_SEED + SCRIPTS);
    }

    @Test
    void firesNettysEventsAtNettysInstantsOnALoopThatRunsItsTasksEvery5Milliseconds() {
        compareScripts(Loop.EVERY_5_MILLISECONDS, FIRST_SEED + 2L * SCRIPTS);
    }

    /**
     * The handler's clock arithmetic holds wherever the clock starts: near {@code Long.MAX_VALUE},
     * wrapping to negative readings in the middle of each script, at {@code Long.MIN_VALUE}, and
     * crossing zero. Netty's scheduler cannot run tasks there (it saturates deadlines that are
     * negative), so these runs put the handler's timers on a wheel used as a shared timer and
     * driven in the same virtual time ({@link ManualLoop}); the events must still be Netty's, as
     * Netty's handler fires them on a clock that starts near zero.
     */
    @Test
    void firesNettysEventsWhereverTheClockStartsAndAcrossItsWrap() {
        int events = 0;
        for (int i = 0; i < ORIGIN_SCRIPTS; i++) {
            Script script = randomScript(FIRST_SEED + 3L * SCRIPTS + i, Loop.PUNCTUAL);
            List<Event> netty = run(
                    script,
                    new IdleStateHandler(
                            script.observeOutput,
                            script.readerNanos,
                            script.writerNanos,
                            script.allNanos,
                            NANOSECONDS));
            long half = script.duration() / 2;
            for (long origin : new long[] {Long.MAX_VALUE - half, Long.MIN_VALUE, -half}) {
                ManualLoop loop = new ManualLoop(origin);
                ExecutorDrivenWheel timer = Drivers.executorDriven(loop, new WheelSettings().ticker(loop::now));
                SlowDrainChannel ch = loop.drive(new SlowDrainChannel(loop.ticker));
                List<Event> wheel = run(
                        script,
                        ch,
                        loop,
                        WheelIdleStateHandler.builder()
                                .timer(timer)
                                .observeOutput(script.observeOutput)
                                .readerIdleTime(Duration.ofNanos(script.readerNanos))
                                .writerIdleTime(Duration.ofNanos(script.writerNanos))
                                .allIdleTime(Duration.ofNanos(script.allNanos))
                                .build()
                                .newHandler());
                assertEquals(
                        0, timer.pendingTimers(), () -> "timers left after close, origin " + origin + ": " + script);
                compare(script, netty, wheel);
            }
            events += netty.size();
        }
        assertTrue(events > 100 * ORIGIN_SCRIPTS, events + " events in " + ORIGIN_SCRIPTS + " scripts");
    }

    /**
     * A loop clock that reads {@code origin} first and moves only when told, and the executor that
     * drives a wheel on it: scheduled tasks run punctually, then the channel's pending tasks (the
     * expiries the wheel handed over to it), compared by difference as the clock may wrap.
     */
    static final class ManualLoop implements WheelExecutor, LoopTime {
        private record Scheduled(long due, Runnable task, CompletableFuture<Void> done) {}

        final VirtualTicker ticker;
        private final List<Scheduled> scheduled = new ArrayList<>();
        private EmbeddedChannel channel;

        ManualLoop(long origin) {
            this.ticker = new VirtualTicker(origin);
        }

        /** Also runs the pending tasks of {@code ch}, whose loop reads this clock. */
        <C extends EmbeddedChannel> C drive(C ch) {
            this.channel = ch;
            return ch;
        }

        @Override
        public long now() {
            return ticker.nanoTime();
        }

        @Override
        public boolean inOwnerThread() {
            return true;
        }

        @Override
        public void execute(Runnable task) {
            schedule(task, 0);
        }

        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
            Scheduled s = new Scheduled(now() + delayNanos, task, new CompletableFuture<>());
            scheduled.add(s);
            return s.done;
        }

        @Override
        public void advanceTo(long nanoTime) {
            Scheduled next;
            while ((next = earliest()) != null && next.due - nanoTime <= 0) {
                ticker.advance(Math.max(0, next.due - now()));
                runDue();
            }
            ticker.advance(nanoTime - now());
            runDue();
        }

        @Override
        public void stall(long nanos) {
            ticker.advance(nanos);
            runDue();
        }

        private void runDue() {
            Scheduled next;
            for (int ran = 0; (next = earliest()) != null && next.due - now() <= 0; ran++) {
                if (ran == 1_000_000) {
                    throw new AssertionError("tasks keep falling due at " + now());
                }
                scheduled.remove(next);
                next.task.run();
                next.done.complete(null);
                channel.runPendingTasks();
            }
            channel.runPendingTasks();
        }

        private Scheduled earliest() {
            scheduled.removeIf(s -> s.done.isDone());
            Scheduled earliest = null;
            for (Scheduled s : scheduled) {
                if (earliest == null || s.due - earliest.due < 0) {
                    earliest = s;
                }
            }
            return earliest;
        }
    }

    private static void compareScripts(Loop loop, long firstSeed) {
        int events = 0;
        int repeated = 0;
        for (int i = 0; i < SCRIPTS; i++) {
            Script script = randomScript(firstSeed + i, loop);
            List<Event> netty = run(
                    script,
                    new IdleStateHandler(
                            script.observeOutput,
                            script.readerNanos,
                            script.writerNanos,
                            script.allNanos,
                            NANOSECONDS));
            SlowDrainChannel ch = new SlowDrainChannel();
            List<Event> wheel = run(
                    script,
                    ch,
                    embeddedTime(ch, loop),
                    new WheelIdleStateHandler(
                            script.observeOutput,
                            script.readerNanos,
                            script.writerNanos,
                            script.allNanos,
                            NANOSECONDS));
            assertEquals(0, VirtualTime.pendingTimers(ch), () -> "timers left after close: " + script);
            compare(script, netty, wheel);
            events += netty.size();
            repeated += (int) netty.stream().filter(e -> !e.event().isFirst()).count();
        }
        // The scripts must exercise something: many events, most of them repeats, not a silent pass.
        assertTrue(
                events > 100 * SCRIPTS && repeated > events / 2,
                events + " events, " + repeated + " repeated, in " + SCRIPTS + " scripts");
        System.out.printf(
                "differential, %s loop: %d scripts from seed %d, %d events (%d repeated), all as Netty's%n",
                loop, SCRIPTS, firstSeed, events, repeated);
    }

    private static void compare(Object script, List<?> netty, List<?> wheel) {
        for (int i = 0; i < Math.min(netty.size(), wheel.size()); i++) {
            if (!netty.get(i).equals(wheel.get(i))) {
                fail("event " + i + ": Netty " + netty.get(i) + ", wheel " + wheel.get(i)
                        + around(i, netty, wheel, script));
            }
        }
        if (netty.size() != wheel.size()) {
            fail("Netty fired " + netty.size() + " events, the wheel " + wheel.size()
                    + around(Math.min(netty.size(), wheel.size()), netty, wheel, script));
        }
    }

    private static String around(int index, List<?> netty, List<?> wheel, Object script) {
        int from = Math.max(0, index - 4);
        return "\n" + script + "\nNetty from event " + from + ": "
                + netty.subList(Math.min(from, netty.size()), Math.min(index + 3, netty.size())) + "\nwheel from event "
                + from + ": "
                + wheel.subList(Math.min(from, wheel.size()), Math.min(index + 3, wheel.size()));
    }

    /** Lets a script write from a handler nearer the head than the idle handler. */
    private static final class HeadWriter extends ChannelOutboundHandlerAdapter {
        ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }
    }

    /** The clock of the loop a script runs on, and how it runs its tasks. */
    interface LoopTime {
        long now();

        /** Moves time forward to {@code nanoTime}, running tasks as the loop runs them. */
        void advanceTo(long nanoTime);

        /** Moves time forward {@code nanos} while no task runs (a stalled loop). */
        void stall(long nanos);
    }

    /** EmbeddedChannel's own clock, frozen, with tasks run punctually or on the loop's step. */
    static LoopTime embeddedTime(SlowDrainChannel ch, Loop loop) {
        ch.freezeTime();
        long origin = VirtualTime.now(ch);
        return new LoopTime() {
            @Override
            public long now() {
                return VirtualTime.now(ch);
            }

            @Override
            public void advanceTo(long nanoTime) {
                if (loop == Loop.PUNCTUAL) {
                    VirtualTime.advanceTo(ch, nanoTime);
                } else {
                    VirtualTime.advanceOnStep(ch, origin, loop.stepNanos, nanoTime);
                }
            }

            @Override
            public void stall(long nanos) {
                if (loop == Loop.PUNCTUAL) {
                    VirtualTime.stall(ch, nanos);
                } else {
                    ch.advanceTimeBy(nanos, NANOSECONDS); // the next step runs what fell due
                }
            }
        };
    }

    private static List<Event> run(Script script, ChannelHandler handler) {
        SlowDrainChannel ch = new SlowDrainChannel();
        return run(script, ch, embeddedTime(ch, script.loop), handler);
    }

    private static List<Event> run(Script script, SlowDrainChannel ch, LoopTime time, ChannelHandler handler) {
        long start = time.now();
        HeadWriter head = new HeadWriter();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline().addLast(head, handler, recorder);
        for (Step step : script.steps) {
            apply(step, ch, head, handler, time);
        }
        assertEquals(List.of(), recorder.exceptions, script::toString);
        ch.finishAndReleaseAll();
        return recorder.fired.stream()
                .map(f -> new Event(f.event(), f.nanoTime() - start))
                .toList();
    }

    /** Applies one step to {@code ch}, whose idle handler (the one resets and removal act on) is {@code handler}. */
    private static void apply(Step step, SlowDrainChannel ch, HeadWriter head, ChannelHandler handler, LoopTime time) {
        switch (step.kind) {
            case WRITE_AND_FLUSH -> {
                ch.drainBudget(Long.MAX_VALUE);
                ch.pipeline().writeAndFlush(Unpooled.buffer().writeZero((int) step.arg));
            }
            case RESET_READ -> resetRead(handler);
            case RESET_WRITE -> resetWrite(handler);
            case CLOSE -> ch.pipeline().close();
            case REMOVE -> {
                if (ch.pipeline().context(handler) != null) {
                    ch.pipeline().remove(handler);
                }
            }
            default -> traffic(step.kind.name(), step.arg, ch, time, head.ctx);
        }
        ch.inboundMessages().clear();
    }

    /**
     * Runs a script step shared by the differential tests (this one and
     * {@link WheelTimeoutHandlersDifferentialTest}), named as in their {@code Kind}s: time passing
     * (PAUSE, STALL), reads (READ_BATCH, READ_WITHOUT_COMPLETE, READ_COMPLETE), writes and flushes
     * (WRITE, SLOW_FLUSH, DRAIN, and HEAD_WRITE from {@code head}, a handler nearer the head). Pipeline
     * operations, not EmbeddedChannel's own, which would also run due tasks.
     */
    static void traffic(String kind, long arg, SlowDrainChannel ch, LoopTime time, ChannelHandlerContext head) {
        switch (kind) {
            case "PAUSE" -> time.advanceTo(time.now() + arg);
            case "STALL" -> time.stall(arg);
            case "READ_BATCH" -> {
                ch.pipeline().fireChannelRead("in");
                ch.pipeline().fireChannelReadComplete();
            }
            case "READ_WITHOUT_COMPLETE" -> ch.pipeline().fireChannelRead("in");
            case "READ_COMPLETE" -> ch.pipeline().fireChannelReadComplete();
            case "WRITE" -> ch.pipeline().write(Unpooled.buffer().writeZero((int) arg));
            case "SLOW_FLUSH" -> {
                ch.drainBudget(arg);
                ch.pipeline().flush();
            }
            case "DRAIN" -> {
                ch.drainBudget(arg);
                ch.unsafe().flush();
            }
            case "HEAD_WRITE" -> head.writeAndFlush(Unpooled.buffer().writeZero((int) arg));
            default -> throw new IllegalArgumentException("not a shared step: " + kind);
        }
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

    // ---------------------------------------------------------------- several handlers and channels on one loop

    /** Shared-loop scripts; override to explore: -Dwheelbeat.idle.sharedScripts=4000. */
    private static final int SHARED_SCRIPTS = Integer.getInteger("wheelbeat.idle.sharedScripts", 450);

    private static final int SHARED_MIN_PERIODS = 20;

    /** An idle handler of a shared-loop script: its channel and its settings. */
    private record HandlerSpec(int channel, boolean observeOutput, long readerNanos, long writerNanos, long allNanos) {
        ChannelHandler netty() {
            return new IdleStateHandler(observeOutput, readerNanos, writerNanos, allNanos, NANOSECONDS);
        }

        ChannelHandler wheel() {
            return new WheelIdleStateHandler(observeOutput, readerNanos, writerNanos, allNanos, NANOSECONDS);
        }
    }

    /** A step of a shared-loop script on the channel of handler {@code handler} (which resets and removal act on). */
    private record SharedStep(Step step, int handler) {
        @Override
        public String toString() {
            return step + "@" + handler;
        }
    }

    /**
     * A shared-loop script; with {@code appWrites}, the application writes and flushes from every
     * idle event (on {@code EmbeddedChannel} a flush runs the loop's due tasks inside the event).
     */
    private record SharedScript(
            long seed, Loop loop, int channels, List<HandlerSpec> handlers, List<SharedStep> steps, boolean appWrites) {
        @Override
        public String toString() {
            return "seed " + seed + ", loop " + loop + ", " + channels + " channels, app writes " + appWrites
                    + ", handlers " + handlers + ", steps " + steps;
        }
    }

    /** An event as compared on a shared loop: the handler that fired it (index), state and first flag, when. */
    private record SharedEvent(int handler, IdleStateEvent event, long at) {
        @Override
        public String toString() {
            return "#" + handler + ":" + event.state() + (event.isFirst() ? "(first)" : "") + "@" + at;
        }
    }

    /** Records, in one list for the whole loop, the idle events of the handler just before it, and swallows them. */
    private static final class Tagger extends ChannelInboundHandlerAdapter {
        private final int handler;
        private final long start;
        private final List<SharedEvent> events;
        private final List<Throwable> exceptions;
        private final boolean writes;

        Tagger(int handler, long start, List<SharedEvent> events, List<Throwable> exceptions, boolean writes) {
            this.handler = handler;
            this.start = start;
            this.events = events;
            this.exceptions = exceptions;
            this.writes = writes;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent event) {
                events.add(
                        new SharedEvent(handler, event, ctx.executor().ticker().nanoTime() - start));
                if (writes && ctx.channel().isActive()) {
                    ctx.writeAndFlush(Unpooled.buffer().writeZero(8));
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            exceptions.add(cause);
        }
    }

    /**
     * Issue 21 item 8: handler A (reader idle 5.4 ms) added first, B (5.3 ms) second, both on one
     * channel, and a 7 ms loop stall: Netty fires B's event, then A's (deadline order); the wheel
     * used to fire A's first (the order their timers reached the wheel's slot).
     */
    @Test
    void twoHandlersOnOneLoopFireInDeadlineOrderAfterAStall() {
        long a = 5_400_000;
        long b = 5_300_000;
        SharedScript script = new SharedScript(
                0,
                Loop.PUNCTUAL,
                1,
                List.of(new HandlerSpec(0, false, a, 0, 0), new HandlerSpec(0, false, b, 0, 0)),
                List.of(new SharedStep(new Step(Kind.STALL, MILLISECONDS.toNanos(7)), 0)),
                false);
        List<SharedEvent> netty = runShared(script, HandlerSpec::netty);
        assertEquals(
                List.of(
                        new SharedEvent(1, IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, MILLISECONDS.toNanos(7)),
                        new SharedEvent(0, IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, MILLISECONDS.toNanos(7))),
                netty);
        compare(script, netty, runShared(script, HandlerSpec::wheel));
    }

    /**
     * Several idle handlers on several channels of one event loop (one scheduler, one wheel, one
     * clock), some with equal idle times so that checks of different handlers fall due at the same
     * instant, with traffic on each channel and loop stalls: the events of all handlers, in the
     * order they fire across the loop, must be Netty's, at Netty's instants. Netty orders its tasks
     * by deadline, then by scheduling order (task ids per loop); the wheel must give the same order.
     */
    @Test
    void firesNettysEventsInNettysOrderAcrossHandlersAndChannelsSharingALoop() {
        int events = 0;
        int interleaved = 0;
        for (int i = 0; i < SHARED_SCRIPTS; i++) {
            SharedScript script =
                    randomSharedScript(FIRST_SEED + 4L * SCRIPTS + i, Loop.values()[i % Loop.values().length]);
            List<SharedEvent> netty = runShared(script, HandlerSpec::netty);
            compare(script, netty, runShared(script, HandlerSpec::wheel));
            events += netty.size();
            for (int e = 1; e < netty.size(); e++) {
                if (netty.get(e).at == netty.get(e - 1).at && netty.get(e).handler != netty.get(e - 1).handler) {
                    interleaved++;
                }
            }
        }
        // Not a silent pass: many events, and many instants where handlers' events meet.
        assertTrue(
                events > 100 * SHARED_SCRIPTS && interleaved > SHARED_SCRIPTS,
                events + " events, " + interleaved + " of different handlers at one instant, in " + SHARED_SCRIPTS
                        + " scripts");
        System.out.printf(
                "differential, shared loop: %d scripts, %d events, %d of different handlers at one instant, all as Netty's%n",
                SHARED_SCRIPTS, events, interleaved);
    }

    /**
     * Issue 21 item 10, pinned (docs/idle.md, "EmbeddedChannel"): on {@code EmbeddedChannel} a
     * flush runs the loop's due scheduled tasks before it returns, so when the application writes
     * and flushes from an idle event, Netty's handler runs its other due idle tasks inside that
     * write, while the wheel's handler runs its due checks from the wheel's one task, one after
     * the other. With writes that do not complete at once (a slow socket), the sequences part:
     * here handler #2 (writer and all idle 1 ms) gives Netty a writer-idle event at 2 ms that the
     * wheel's handler does not give. A real event loop runs no task inside a flush.
     */
    @Test
    void onEmbeddedChannelAnAppWritingFromIdleEventsSeesNettysNestedTasksDiffer() {
        SharedScript random = randomSharedScript(20_255_132L, Loop.EVERY_MILLISECOND);
        SharedScript script =
                new SharedScript(random.seed, random.loop, random.channels, random.handlers, random.steps, true);
        long ms = MILLISECONDS.toNanos(1);
        List<SharedEvent> netty = runShared(script, HandlerSpec::netty);
        List<SharedEvent> wheel = runShared(script, HandlerSpec::wheel);
        assertEquals(
                List.of(
                        new SharedEvent(2, IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT, ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 2 * ms),
                        new SharedEvent(2, IdleStateEvent.WRITER_IDLE_STATE_EVENT, 2 * ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 3 * ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT, 3 * ms)),
                netty.subList(0, 5));
        assertEquals(
                List.of(
                        new SharedEvent(2, IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT, ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 2 * ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 3 * ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 4 * ms),
                        new SharedEvent(2, IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT, 5 * ms)),
                wheel.subList(0, 5));
        // Without the application's writes the two agree on the same script.
        compare(random, runShared(random, HandlerSpec::netty), runShared(random, HandlerSpec::wheel));
    }

    private static List<SharedEvent> runShared(
            SharedScript script, java.util.function.Function<HandlerSpec, ChannelHandler> make) {
        SlowDrainChannel first = new SlowDrainChannel();
        LoopTime time = embeddedTime(first, script.loop);
        long start = time.now();
        List<SharedEvent> events = new ArrayList<>();
        List<Throwable> exceptions = new ArrayList<>();
        SlowDrainChannel[] channels = new SlowDrainChannel[script.channels];
        HeadWriter[] heads = new HeadWriter[script.channels];
        for (int c = 0; c < script.channels; c++) {
            channels[c] = c == 0 ? first : SlowDrainChannel.onLoopOf(first);
            heads[c] = new HeadWriter();
            channels[c].pipeline().addLast(heads[c]);
        }
        ChannelHandler[] handlers = new ChannelHandler[script.handlers.size()];
        for (int h = 0; h < handlers.length; h++) {
            HandlerSpec spec = script.handlers.get(h);
            handlers[h] = make.apply(spec);
            channels[spec.channel]
                    .pipeline()
                    .addLast(handlers[h], new Tagger(h, start, events, exceptions, script.appWrites));
        }
        for (SharedStep step : script.steps) {
            int c = script.handlers.get(step.handler).channel;
            apply(step.step, channels[c], heads[c], handlers[step.handler], time);
        }
        assertEquals(List.of(), exceptions, script::toString);
        for (SlowDrainChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        first.runPendingTasks();
        if (handlers[0] instanceof WheelIdleStateHandler) {
            assertEquals(0, VirtualTime.pendingTimers(first), () -> "timers left after close: " + script);
        }
        return events;
    }

    private static SharedScript randomSharedScript(long seed, Loop loop) {
        SplittableRandom random = new SplittableRandom(seed);
        int channels = 1 + random.nextInt(3);
        int count = channels + 1 + random.nextInt(3);
        List<HandlerSpec> handlers = new ArrayList<>();
        long longest = 0;
        for (int h = 0; h < count; h++) {
            int channel = h < channels ? h : random.nextInt(channels);
            HandlerSpec spec;
            if (h > 0 && random.nextInt(3) == 0) {
                // The settings of an earlier handler: their checks fall due at the same instants.
                HandlerSpec same = handlers.get(random.nextInt(h));
                spec = new HandlerSpec(channel, same.observeOutput, same.readerNanos, same.writerNanos, same.allNanos);
            } else {
                long reader = randomIdleTime(random);
                long writer = random.nextInt(6) == 0 ? reader : randomIdleTime(random);
                long all = random.nextInt(6) == 0 ? Math.max(reader, writer) : randomIdleTime(random);
                if (reader == 0 && writer == 0 && all == 0) {
                    reader = MILLISECONDS.toNanos(5) + random.nextLong(MILLISECONDS.toNanos(1));
                }
                spec = new HandlerSpec(channel, random.nextBoolean(), reader, writer, all);
            }
            handlers.add(spec);
            longest = Math.max(longest, Math.max(spec.readerNanos, Math.max(spec.writerNanos, spec.allNanos)));
        }
        List<SharedStep> steps = new ArrayList<>();
        for (long elapsed = 0; elapsed < SHARED_MIN_PERIODS * longest; ) {
            Step step = randomStep(random, longest);
            steps.add(new SharedStep(step, random.nextInt(count)));
            if (step.kind == Kind.PAUSE || step.kind == Kind.STALL) {
                elapsed += step.arg;
            }
        }
        if (random.nextInt(4) == 0) {
            int at = steps.size() / 2 + random.nextInt(steps.size() - steps.size() / 2);
            steps.add(
                    at,
                    new SharedStep(
                            new Step(random.nextBoolean() ? Kind.CLOSE : Kind.REMOVE, 0), random.nextInt(count)));
        }
        steps.add(new SharedStep(new Step(Kind.PAUSE, 3 * longest), 0));
        return new SharedScript(seed, loop, channels, List.copyOf(handlers), List.copyOf(steps), false);
    }

    // ---------------------------------------------------------------- script generation

    private static Script randomScript(long seed, Loop loop) {
        SplittableRandom random = new SplittableRandom(seed);
        long reader = randomIdleTime(random);
        long writer = random.nextInt(6) == 0 ? reader : randomIdleTime(random);
        long all = random.nextInt(6) == 0 ? Math.max(reader, writer) : randomIdleTime(random);
        if (reader == 0 && writer == 0 && all == 0) {
            all = MILLISECONDS.toNanos(7) + random.nextLong(MILLISECONDS.toNanos(1));
        }
        long longest = Math.max(reader, Math.max(writer, all));
        List<Step> steps = new ArrayList<>();
        for (long elapsed = 0; elapsed < MIN_PERIODS * longest; ) {
            Step step = randomStep(random, longest);
            steps.add(step);
            if (step.kind == Kind.PAUSE || step.kind == Kind.STALL) {
                elapsed += step.arg;
            }
        }
        if (random.nextInt(8) == 0) {
            // A close or a removal somewhere in the second half; the steps after it change nothing.
            int at = steps.size() / 2 + random.nextInt(steps.size() - steps.size() / 2);
            steps.add(at, new Step(random.nextBoolean() ? Kind.CLOSE : Kind.REMOVE, 0));
        }
        steps.add(new Step(Kind.PAUSE, 3 * longest)); // let the last periods play out
        return new Script(seed, loop, random.nextBoolean(), reader, writer, all, List.copyOf(steps));
    }

    /** Zero (disabled), Netty's 1 ms floor, or 2 to 40 ms to the nanosecond. */
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
        if (pick < 33) {
            long nanos = switch (random.nextInt(10)) {
                case 0 -> random.nextLong(6 * longest); // long enough for repeated events
                case 1 -> 0; // several steps at one instant
                case 2 -> random.nextLong(MILLISECONDS.toNanos(1)); // within a millisecond
                default -> random.nextLong(2 * longest);
            };
            return new Step(Kind.PAUSE, nanos);
        }
        if (pick < 36) {
            return new Step(
                    Kind.STALL,
                    random.nextBoolean() ? random.nextLong(MILLISECONDS.toNanos(2)) : random.nextLong(3 * longest));
        }
        if (pick < 50) {
            return new Step(Kind.READ_BATCH, 0);
        }
        if (pick < 54) {
            return new Step(Kind.READ_WITHOUT_COMPLETE, 0);
        }
        if (pick < 58) {
            return new Step(Kind.READ_COMPLETE, 0);
        }
        if (pick < 66) {
            return new Step(Kind.WRITE_AND_FLUSH, 1 + random.nextInt(500));
        }
        if (pick < 72) {
            return new Step(Kind.WRITE, 1 + random.nextInt(500));
        }
        if (pick < 82) {
            return new Step(Kind.SLOW_FLUSH, 1 + random.nextInt(200));
        }
        if (pick < 88) {
            return new Step(Kind.DRAIN, 1 + random.nextInt(200));
        }
        if (pick < 92) {
            return new Step(Kind.HEAD_WRITE, 1 + random.nextInt(300));
        }
        return new Step(random.nextBoolean() ? Kind.RESET_READ : Kind.RESET_WRITE, 0);
    }
}
