package io.wheelbeat.netty.internal;

import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.netty.util.internal.ObjectUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Netty 4.2's {@link SingleThreadIoEventLoop} with every scheduled task on the loop's
 * {@link ExecutorDrivenWheel} instead of Netty's binary heap: the loop of
 * {@code WheelIoEventLoopGroup}. The wheel is the one {@code EventLoopWheels} hands wheelbeat's
 * handlers for this loop ({@link LoopWheelOwner}).
 *
 * <h2>How it plugs into Netty's loop</h2>
 * The wheel is driven as on any loop, by one driving task aimed at its earliest deadline; here
 * that task lives in {@link Driver}, a single slot, not in Netty's scheduled-task queue, which
 * stays empty. The hooks Netty's loop already calls read the slot:
 * {@link #fetchFromScheduledTaskQueue} moves the driving task, once due, to the end of the task
 * queue, where Netty moves its due scheduled tasks (so it runs within the loop's task-time
 * quantum, after the tasks already queued); {@link #hasTasks()} says there is work while it is
 * due (the I/O handler then does not block); {@link #delayNanos}/{@link #deadlineNanos()} give
 * its deadline to the select / epoll / park wait. The driving task fires the wheel's due timers
 * (at most the wheel's per-tick bound, the rest at the next turn of the loop, after I/O).
 *
 * <h2>The task-time quantum</h2>
 * Netty's loop runs its tasks, due scheduled tasks included, for at most its task-time quantum
 * per turn ({@code runAllTasks(timeoutNanos)}: the clock read every 64 tasks), then serves I/O.
 * This loop keeps that bound for the tasks it fires: {@link #runAllTasks(long)} notes where the
 * quantum ends, the due tasks read the clock every 64 runs, and once the quantum is spent the
 * wheel's remaining due tasks wait in {@link #overdue}, in order, and run first in the next turn,
 * after I/O. A stalled loop that wakes to thousands of due tasks thus serves its channels between
 * batches, as Netty's does.
 *
 * <h2>Netty's scheduling contract</h2>
 * {@code schedule}, {@code scheduleAtFixedRate} and {@code scheduleWithFixedDelay} check their
 * arguments as Netty does and return a {@link WheelScheduledTask}. On the loop a task goes
 * straight onto the wheel; from another thread it is handed over with {@link #execute} and placed
 * (or, already due, run) when the loop runs it, as Netty's {@code ScheduledFutureTask} does. A
 * cancel from another thread is handed over with {@link #lazyExecute}. Shutdown cancels the
 * pending scheduled tasks ({@link #cancelScheduledTasks()}) and stops driving the wheel, as
 * Netty's loop stops running its scheduled tasks.
 *
 * <p>Thread rules: the scheduling methods from any thread; everything else on the loop.
 */
public final class WheelIoEventLoop extends SingleThreadIoEventLoop implements LoopWheelOwner {

    /** How long the loop waits with nothing scheduled: Netty's {@code SCHEDULE_PURGE_INTERVAL}. */
    private static final long IDLE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The longest stretch one wheel timer spans (146 years, less 1 ns so that a second such hop
     * stays within the wheel's reach); a task due later re-arms on the way ({@link Far}).
     */
    private static final long MAX_WHEEL_DELAY_NANOS = (1L << 62) - 1;
    /** Netty's loop reads its clock once per this many tasks to see whether the quantum is spent. */
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
    /** The quantum of the current {@code runAllTasks(timeout)}, until its first fetch turns it into {@link #quantumEndNanos}. */
    private long quantumNanos = -1;
    /** Where the current turn's quantum ends, a reading of the ticker; valid while {@link #inQuantum}. */
    private long quantumEndNanos;
    private boolean inQuantum;
    private boolean quantumSpent;
    /** Tasks run since the clock was last read for the quantum. */
    private int runsSinceClockRead;
    /** The relays of the tasks due beyond one wheel timer's span, by task: few or none. Loop only. */
    private final IdentityHashMap<WheelScheduledTask<?>, Far> farRelays = new IdentityHashMap<>();
    /** Hands out the order in which the loop receives its tasks: {@code compareTo}'s tie-break. */
    private int nextOrder;
    private final Ticker ticker;
    private final ExecutorDrivenWheel wheel;

    /** A loop as {@code MultiThreadIoEventLoopGroup} makes them, with the wheel's default settings. */
    public WheelIoEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
        this(parent, executor, ioHandlerFactory, Ticker.systemTicker());
    }

    /** A loop whose clock is {@code ticker} (virtual time in tests). */
    public WheelIoEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory,
            Ticker ticker) {
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
        return submit(new WheelScheduledTask.Periodic(this, command, now + unit.toNanos(initialDelay),
                unit.toNanos(period)), now);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        checkPeriodic(command, initialDelay, delay, "delay", unit);
        long now = ticker().nanoTime();
        return submit(new WheelScheduledTask.Periodic(this, command, now + unit.toNanos(initialDelay),
                -unit.toNanos(delay)), now);
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

    /**
     * Hands {@code task} to the loop. Its deadline is Netty's: the delay after {@code now}, up to
     * {@link Long#MAX_VALUE} ns (292 years) as {@code TimeUnit.toNanos} saturates, compared by
     * difference, so the clock may read anything.
     */
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

    /**
     * Puts {@code task} on the wheel; the loop receives it now if not before. {@code now} is a
     * recent reading of the clock. Loop only.
     */
    private void place(WheelScheduledTask<?> task, long now) {
        receive(task);
        if (task.deadlineNanos - now > MAX_WHEEL_DELAY_NANOS) {
            wheel.scheduleAt(new Far(task), now + MAX_WHEEL_DELAY_NANOS);
        } else {
            wheel.scheduleAt(task, task.deadlineNanos);
        }
    }

    /** Gives {@code task} its place among equal deadlines, once, as Netty's loop gives its id. Loop only. */
    private void receive(WheelScheduledTask<?> task) {
        if (task.order == 0) {
            // 0 means not yet received: skipped when the count wraps.
            task.order = ++nextOrder == 0 ? ++nextOrder : nextOrder;
        }
    }

    /**
     * The wheel's timer for a task due further ahead than one wheel timer spans: it re-arms on
     * the way until the task is due. Made only for such tasks (delays beyond 146 years), so the
     * common task is its own timer.
     */
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
     * Puts {@code task} on the wheel, or, during the driving task, when that ends: a task
     * scheduled or re-armed while due tasks run waits for the next turn of the loop even if it is
     * due already, as on Netty's loop, which moves its due tasks to the task queue once per turn.
     * So a periodic task that fell behind runs once per turn, and the order of equal deadlines is
     * Netty's. Loop only.
     */
    void placeOrDefer(WheelScheduledTask<?> task) {
        if (ticking) {
            deferred.add(task);
        } else {
            place(task, ticker().nanoTime());
        }
    }

    /**
     * One run of the driving task: first the tasks left over from the last quantum, then, if the
     * quantum lasts, the wheel's due timers.
     */
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

    /** Counts a task run; every {@value #RUNS_PER_CLOCK_READ} runs reads the clock against the quantum, as Netty's loop does. */
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
            if (task.deadlineNanos - now <= 0) {
                receive(task);
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

    /**
     * Netty's turn of tasks, bounded by {@code timeoutNanos} as Netty bounds it; the fetch that
     * starts it reads the clock once for both the quantum and the wheel's due check.
     */
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

    /**
     * Cancels every scheduled task still pending, as Netty's loop does when it shuts down, and
     * stops driving the wheel: wheelbeat's own timers on it stay unfired, as they do on Netty's
     * loop once its scheduled tasks are cancelled.
     */
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

    /**
     * The wheel's driving task, in one slot: the wheel only ever has one, cancels it before it
     * aims another, and does both on the loop, so one reusable handle serves every aim and
     * re-aiming allocates nothing.
     */
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
