package io.wheelbeat.netty;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.netty.internal.LoopClocks;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * One shared {@link ExecutorDrivenWheel} per Netty event loop, driven by one scheduled task of the
 * loop: every handler of the loop puts its timers there, and callbacks run on the loop. A loop of a
 * {@code WheelIoEventLoopGroup} hands out its own wheel. Each wheel reads the loop's clock, so
 * {@code EmbeddedChannel}'s {@code freezeTime()}/{@code advanceTimeBy()} drive it.
 *
 * <p>A wheel references its loop weakly and is dropped when the loop terminates; its pending
 * timers then never fire. Thread-safe.
 */
public final class EventLoopWheels {

    private static final EventLoopWheels SHARED = new EventLoopWheels(Duration.ofMillis(1), 4096);

    private final Duration tick;
    private final int slots;
    private final Map<EventExecutor, ExecutorDrivenWheel> wheels = new WeakHashMap<>();
    /** The loops with a wheel of their own ({@link LoopWheelOwner}) whose wheel was announced. */
    private final Map<EventExecutor, Boolean> ownWheelsAnnounced = new WeakHashMap<>();

    private BiConsumer<EventExecutor, ExecutorDrivenWheel> onNewWheel = (loop, wheel) -> {};

    /**
     * Per thread: the wheel of the loop it looked up last from that loop's own thread. A loop's
     * thread asks only for its own loop, so this answers the handlers without the map's lock; a
     * loop's thread ends with the loop, and with it what this pins.
     */
    private final FastThreadLocal<LastWheel> lastWheel = new FastThreadLocal<>() {
        @Override
        protected LastWheel initialValue() {
            return new LastWheel();
        }
    };

    private static final class LastWheel {
        EventExecutor loop;
        ExecutorDrivenWheel wheel;
    }

    /**
     * Wheels with the given tick (rounded up to a power of two nanoseconds) and number of slots.
     *
     * @param tick the tick before rounding
     * @param slots the number of slots before rounding
     * @throws IllegalArgumentException if {@code tick} is outside 1 us to 2^36 ns or {@code slots} outside
     *     64 to 4096
     */
    public EventLoopWheels(Duration tick, int slots) {
        // Validates now, so that a bad setting fails here and not on some channel's first timer.
        new WheelSettings().tick(tick).slots(slots);
        this.tick = tick;
        this.slots = slots;
    }

    /**
     * The process-wide wheels: a 1.05 ms tick (2^20 ns) and 4096 slots, a 4.3 s turn.
     *
     * @return the shared wheels
     */
    public static EventLoopWheels shared() {
        return SHARED;
    }

    /**
     * @param loop the event loop
     * @return the wheel of {@code loop}, creating it on first use
     */
    public ExecutorDrivenWheel wheelFor(EventExecutor loop) {
        Objects.requireNonNull(loop, "loop");
        BiConsumer<EventExecutor, ExecutorDrivenWheel> announce;
        ExecutorDrivenWheel wheel;
        synchronized (wheels) {
            if (loop instanceof LoopWheelOwner) {
                // A WheelIoEventLoopGroup's loop: its scheduled tasks are on its wheel already. Not
                // kept in the map: that wheel holds its loop, which would keep the weak key alive.
                wheel = ((LoopWheelOwner) loop).wheel();
                if (ownWheelsAnnounced.put(loop, Boolean.TRUE) != null) {
                    return wheel;
                }
            } else {
                wheel = wheels.get(loop);
                if (wheel != null) {
                    return wheel;
                }
                wheel = Drivers.executorDriven(
                        new LoopExecutor(loop),
                        new WheelSettings().tick(tick).slots(slots).ticker(LoopClocks.of(loop)));
                wheels.put(loop, wheel);
            }
            announce = onNewWheel;
        }
        // Pending timers hold their callbacks, which may hold the loop (a handler, its channel):
        // the weak key alone would not let such a loop go.
        try {
            loop.terminationFuture().addListener(terminated -> forget(loop));
        } catch (UnsupportedOperationException neverTerminates) {
            // EmbeddedChannel's loop: it has no termination; its wheel goes with its weak key.
        }
        announce.accept(loop, wheel);
        return wheel;
    }

    /**
     * {@link #wheelFor}, without a lock when called again from the loop's thread: for the handlers,
     * which find their wheel from their executor each time they need it instead of keeping it.
     */
    ExecutorDrivenWheel wheelOn(EventExecutor loop) {
        if (loop instanceof LoopWheelOwner owner) {
            return owner.wheel();
        }
        LastWheel last = lastWheel.get();
        if (last.loop == loop) {
            return last.wheel;
        }
        ExecutorDrivenWheel wheel = wheelFor(loop);
        if (loop.inEventLoop()) {
            last.loop = loop;
            last.wheel = wheel;
        }
        return wheel;
    }

    private void forget(EventExecutor loop) {
        synchronized (wheels) {
            wheels.remove(loop);
        }
    }

    /**
     * Calls {@code listener} for every wheel created from now on (for example to bind its
     * metrics), on the thread that created it.
     *
     * @param listener what to call
     */
    public void onNewWheel(BiConsumer<EventExecutor, ExecutorDrivenWheel> listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (wheels) {
            onNewWheel = onNewWheel.andThen(listener);
        }
    }

    /**
     * Adapts an event loop. Holds it weakly so that the map's weak key can be collected: the
     * loop's task queue holds the wheel, never the other way round.
     */
    private static final class LoopExecutor implements WheelExecutor {
        private final WeakReference<EventExecutor> loop;
        private final String name;

        LoopExecutor(EventExecutor loop) {
            this.loop = new WeakReference<>(loop);
            this.name = loop.toString();
        }

        @Override
        public boolean inOwnerThread() {
            EventExecutor executor = loop.get();
            return executor != null && executor.inEventLoop();
        }

        @Override
        public void execute(Runnable task) {
            loop().execute(task);
        }

        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
            return new WeaklyHeldFuture(loop().schedule(task, delayNanos, TimeUnit.NANOSECONDS));
        }

        private EventExecutor loop() {
            EventExecutor executor = loop.get();
            if (executor == null) {
                throw new RejectedExecutionException("event loop " + name + " is gone");
            }
            return executor;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * A loop's scheduled future, held weakly: Netty's future references its loop, which the wheel
     * must not pin. While pending, the loop's queue holds it; a collected future counts as done.
     */
    private static final class WeaklyHeldFuture implements Future<Object> {
        private final WeakReference<Future<?>> future;

        WeaklyHeldFuture(Future<?> future) {
            this.future = new WeakReference<>(future);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            Future<?> f = future.get();
            return f != null && f.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean isCancelled() {
            Future<?> f = future.get();
            return f != null && f.isCancelled();
        }

        @Override
        public boolean isDone() {
            Future<?> f = future.get();
            return f == null || f.isDone();
        }

        @Override
        public Object get() throws InterruptedException, ExecutionException {
            Future<?> f = future.get();
            return f == null ? null : f.get();
        }

        @Override
        public Object get(long timeout, TimeUnit unit)
                throws InterruptedException, ExecutionException, TimeoutException {
            Future<?> f = future.get();
            return f == null ? null : f.get(timeout, unit);
        }
    }
}
