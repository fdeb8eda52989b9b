package io.wheelbeat.netty.loop;

import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.netty.util.internal.ObjectUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Netty 4.2's {@link SingleThreadIoEventLoop} with every scheduled task on the loop's
 * {@link ExecutorDrivenWheel} instead of Netty's heap; the loop of {@link WheelIoEventLoopGroup}.
 *
 * <p>The wheel's one driving task lives in {@link Driver}, not in Netty's scheduled-task queue
 * (which stays empty); the hooks Netty's loop already calls ({@link #fetchFromScheduledTaskQueue},
 * {@link #hasTasks()}, {@link #delayNanos}, {@link #deadlineNanos()}) read it.
 *
 * <p>Task-time quantum: as Netty's {@code runAllTasks(timeoutNanos)}, due tasks read the clock
 * every 64 runs; once the quantum is spent the wheel's remaining due tasks wait in
 * {@link #overdue}, in order, and run first next turn, after I/O.
 *
 * <p>Scheduling: Netty's argument checks; on the loop a task goes straight onto the wheel, from
 * another thread it is handed over with {@link #execute} (a cancel with {@link #lazyExecute}).
 * Shutdown cancels the pending tasks and stops driving the wheel.
 *
 * <p>Thread rules: the scheduling methods from any thread; everything else on the loop.
 */
final class WheelIoEventLoop extends SingleThreadIoEventLoop implements LoopWheelOwner {

    /** Netty's {@code SCHEDULE_PURGE_INTERVAL}: the wait with nothing scheduled. */
    private static final long IDLE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The wheel's reach less 1 ns (146 years); a task due later hops there first ({@link Far}). */
    private static final long MAX_WHEEL_DELAY_NANOS = (1L << 62) - 1;
    /** As Netty's loop: the clock is read against the quantum once per this many tasks. */
    private static final int RUNS_PER_CLOCK_READ = 64;

    private final Driver driver = new Driver();
    /** Runs the wheel's driving task; what the task queue gets when the wheel is due. */
    private final Runnable runTick = this::runTick;
    /** Tasks scheduled or re-armed during the driving task, placed when it ends. */
    private final ArrayDeque<WheelScheduledTask<?>> deferred = new ArrayDeque<>();

    private boolean ticking;
    /** Whether {@link #runTick} waits in the task queue (at most once). */
    private boolean tickQueued;
    /** Due tasks the wheel fired after the quantum was spent: they run first in the next turn. */
    private final ArrayDeque<WheelScheduledTask<?>> overdue = new ArrayDeque<>();
    /** The quantum of the current {@code runAllTasks(timeout)}, until its first fetch; else -1. */
    private long quantumNanos = -1;
    /** Where the current quantum ends (a ticker reading), while {@link #inQuantum}. */
    private long quantumEndNanos;

    private boolean inQuantum;
    private boolean quantumSpent;
    /** Tasks run since the clock was last read for the quantum. */
    private int runsSinceClockRead;
    /** Relays of tasks due beyond the wheel's reach: few or none. */
    private final IdentityHashMap<WheelScheduledTask<?>, Far> farRelays = new IdentityHashMap<>();

    private final Ticker ticker;
    private final ExecutorDrivenWheel wheel;

    /** A loop as {@code MultiThreadIoEventLoopGroup} makes them, with the wheel's default settings. */
    WheelIoEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
        this(parent, executor, ioHandlerFactory, Ticker.systemTicker());
    }

    /** A loop whose clock is {@code ticker} (virtual time in tests). */
    WheelIoEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory, Ticker ticker) {
        super(parent, executor, ioHandlerFactory);
        this.ticker = ObjectUtil.checkNotNull(ticker, "ticker");
        this.wheel = Drivers.executorDriven(driver, new WheelSettings().ticker(ticker::nanoTime));
    }

    @Override
    public Ticker ticker() {
        // Netty's constructor reads the clock once (its activity stamp) before this field is set.
        Ticker clock = ticker;
        return clock != null ? clock : Ticker.systemTicker();
    }

    @Override
    public ExecutorDrivenWheel wheel() {
        return wheel;
    }

    // ------------------------------------------------------------ Netty's scheduling API

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        ObjectUtil.checkNotNull(command, "command");
        ObjectUtil.checkNotNull(unit, "unit");
        long now = ticker().nanoTime();
        return submit(new WheelScheduledTask<Void>(this, command, now + unit.toNanos(Math.max(0, delay))), now);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        ObjectUtil.checkNotNull(callable, "callable");
        ObjectUtil.checkNotNull(unit, "unit");
        long now = ticker().nanoTime();
        return submit(new WheelScheduledTask<V>(this, callable, now + unit.toNanos(Math.max(0, delay))), now);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        checkPeriodic(command, initialDelay, period, "period", unit);
        long now = ticker().nanoTime();
        return submit(
                new WheelScheduledTask.Periodic(this, command, now + unit.toNanos(initialDelay), unit.toNanos(period)),
                now);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        checkPeriodic(command, initialDelay, delay, "delay", unit);
        long now = ticker().nanoTime();
        return submit(
                new WheelScheduledTask.Periodic(this, command, now + unit.toNanos(initialDelay), -unit.toNanos(delay)),
                now);
    }

    /** Netty's checks and messages ({@code AbstractScheduledEventExecutor}). */
    private static void checkPeriodic(Runnable command, long initialDelay, long period, String name, TimeUnit unit) {
        ObjectUtil.checkNotNull(command, "command");
        ObjectUtil.checkNotNull(unit, "unit");
        if (initialDelay < 0) {
            throw new IllegalArgumentException(String.format("initialDelay: %d (expected: >= 0)", initialDelay));
        }
        if (period <= 0) {
            throw new IllegalArgumentException(String.format("%s: %d (expected: > 0)", name, period));
        }
    }

    /** Hands {@code task} to the loop; its deadline is compared by difference, so the clock may read anything. */
    private <V> ScheduledFuture<V> submit(WheelScheduledTask<V> task, long now) {
        if (!inEventLoop()) {
            // Placed when the loop runs it (WheelScheduledTask.run), as Netty hands tasks over.
            execute(task);
        } else if (ticking) {
            deferred.add(task);
        } else {
            place(task, now);
        }
        return task;
    }

    /** Puts {@code task} on the wheel; its order (Netty's task id) is kept when a periodic task re-arms. Loop only. */
    private void place(WheelScheduledTask<?> task, long now) {
        if (task.deadlineNanos() - now > MAX_WHEEL_DELAY_NANOS) {
            wheel.scheduleAt(new Far(task), now + MAX_WHEEL_DELAY_NANOS);
        } else if (task.placedBefore()) {
            wheel.rescheduleAt(task, task.deadlineNanos());
        } else {
            wheel.scheduleAt(task, task.deadlineNanos());
            task.placed();
        }
    }

    /** The timer of a task due beyond the wheel's reach (146 years): it places the task when in reach. */
    private final class Far extends TimerNode {
        final WheelScheduledTask<?> task;

        Far(WheelScheduledTask<?> task) {
            this.task = task;
            farRelays.put(task, this);
        }

        @Override
        protected void expire() {
            farRelays.remove(task);
            placeOrDefer(task);
        }
    }

    /**
     * Puts {@code task} on the wheel, or, during the driving task, when that ends: as Netty's loop
     * moves due tasks once per turn, a task scheduled while due tasks run waits for the next turn.
     */
    void placeOrDefer(WheelScheduledTask<?> task) {
        if (ticking) {
            deferred.add(task);
        } else {
            place(task, ticker().nanoTime());
        }
    }

    /** The driving task: tasks left from the last quantum, then, while the quantum lasts, the wheel's due timers. */
    private void runTick() {
        tickQueued = false;
        ticking = true;
        try {
            WheelScheduledTask<?> task;
            while (!quantumSpent && (task = overdue.poll()) != null) {
                task.fire();
                countRun();
            }
            if (!quantumSpent && driverArmed()) {
                driver.armed = false;
                driver.tick.run();
            }
        } finally {
            ticking = false;
            if (!deferred.isEmpty()) {
                long now = ticker().nanoTime();
                WheelScheduledTask<?> task;
                while ((task = deferred.poll()) != null) {
                    if (!task.isCancelled()) {
                        place(task, now);
                    }
                }
            }
        }
    }

    /** The wheel fired {@code task}'s timer: runs it, or keeps it for the next turn once the quantum is spent. */
    void due(WheelScheduledTask<?> task) {
        if (quantumSpent) {
            overdue.add(task);
        } else {
            task.fire();
            countRun();
        }
    }

    /** Counts a run; every {@value #RUNS_PER_CLOCK_READ} runs reads the clock against the quantum. */
    private void countRun() {
        if (++runsSinceClockRead == RUNS_PER_CLOCK_READ) {
            runsSinceClockRead = 0;
            quantumSpent = inQuantum && ticker().nanoTime() - quantumEndNanos >= 0;
        }
    }

    /** A schedule or cancel handed over from another thread, now on the loop. */
    void arrived(WheelScheduledTask<?> task) {
        if (task.isCancelled()) {
            unplace(task);
        } else if (!task.isPending() && !farRelays.containsKey(task) && !task.isDone()) {
            long now = ticker().nanoTime();
            if (task.deadlineNanos() - now <= 0) {
                task.fire();
            } else {
                place(task, now);
            }
        }
    }

    /** Called by a task just cancelled, on any thread. */
    void removeCancelled(WheelScheduledTask<?> task) {
        if (inEventLoop()) {
            unplace(task);
        } else {
            lazyExecute(task);
        }
    }

    private void unplace(WheelScheduledTask<?> task) {
        if (!wheel.cancel(task) && !farRelays.isEmpty()) {
            Far relay = farRelays.remove(task);
            if (relay != null) {
                wheel.cancel(relay);
            }
        }
    }

    // ------------------------------------------------------------ Netty's loop hooks

    /** Netty's bounded turn of tasks; its first fetch reads the clock once for the quantum and the wheel. */
    @Override
    protected boolean runAllTasks(long timeoutNanos) {
        quantumNanos = Math.max(0, timeoutNanos);
        try {
            return super.runAllTasks(timeoutNanos);
        } finally {
            quantumNanos = -1;
            inQuantum = false;
            quantumSpent = false;
        }
    }

    @Override
    protected boolean fetchFromScheduledTaskQueue(Queue<Runnable> taskQueue) {
        boolean armed = driverArmed();
        long now = 0;
        if (armed || quantumNanos >= 0) {
            now = ticker().nanoTime();
        }
        if (quantumNanos >= 0) {
            quantumEndNanos = now + quantumNanos;
            quantumNanos = -1;
            inQuantum = true;
            quantumSpent = false;
            runsSinceClockRead = 0;
        }
        if (!tickQueued && (!overdue.isEmpty() || armed && driver.deadlineNanos - now <= 0)) {
            if (!taskQueue.offer(runTick)) {
                return false;
            }
            tickQueued = true;
        }
        return true;
    }

    @Override
    protected boolean hasTasks() {
        return super.hasTasks() || !overdue.isEmpty() || driverDue();
    }

    @Override
    protected long delayNanos(long currentTimeNanos) {
        if (!overdue.isEmpty()) {
            return 0;
        }
        if (!driverArmed()) {
            return IDLE_WAIT_NANOS;
        }
        return Math.max(0, driver.deadlineNanos - (currentTimeNanos - ticker().initialNanoTime()));
    }

    @Override
    protected long deadlineNanos() {
        if (!overdue.isEmpty()) {
            return ticker().nanoTime();
        }
        return driverArmed() ? driver.deadlineNanos : ticker().nanoTime() + IDLE_WAIT_NANOS;
    }

    @Override
    protected boolean canSuspend(int state) {
        return super.canSuspend(state) && wheel.pendingTimers() == 0 && overdue.isEmpty();
    }

    /** As Netty's loop at shutdown: cancels pending tasks; wheelbeat's own timers stay unfired. */
    @Override
    protected void cancelScheduledTasks() {
        driver.armed = false;
        if (wheel.pendingTimers() == 0) {
            return;
        }
        wheel.forEachPending(node -> {
            if (node instanceof WheelScheduledTask) {
                ((WheelScheduledTask<?>) node).cancel(false);
            } else if (node instanceof Far) {
                ((Far) node).task.cancel(false);
            }
        });
    }

    private boolean driverArmed() {
        return driver.armed && !isShuttingDown();
    }

    private boolean driverDue() {
        return driverArmed() && driver.deadlineNanos - ticker().nanoTime() <= 0;
    }

    /** The wheel's only driving task, aimed and cancelled on the loop: one reusable handle, no allocation. */
    private final class Driver implements WheelExecutor, Future<Object> {
        Runnable tick;
        long deadlineNanos;
        boolean armed;

        @Override
        public boolean inOwnerThread() {
            return inEventLoop();
        }

        @Override
        public void execute(Runnable task) {
            WheelIoEventLoop.this.execute(task);
        }

        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
            tick = task;
            deadlineNanos = ticker().nanoTime() + delayNanos;
            armed = true;
            return this;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            armed = false;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return !armed;
        }

        @Override
        public boolean isDone() {
            return !armed;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException("the wheel's driving task is not awaited");
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("the wheel's driving task is not awaited");
        }
    }
}
