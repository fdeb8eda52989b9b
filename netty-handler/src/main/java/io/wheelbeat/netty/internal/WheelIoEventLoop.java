package io.wheelbeat.netty.internal;

import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.netty.util.internal.ObjectUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.WheelExecutor;
import io.wheelbeat.core.WheelSettings;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import java.util.ArrayDeque;
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
    /** Delays saturate here, as the wheel's do (146 years). */
    private static final long MAX_DELAY_NANOS = 1L << 62;

    private final Driver driver = new Driver();
    /** Runs the wheel's driving task; what the task queue gets when the wheel is due. */
    private final Runnable runTick = this::runTick;
    /** Tasks scheduled or re-armed during the driving task, placed when it ends. */
    private final ArrayDeque<WheelScheduledTask<?>> deferred = new ArrayDeque<>();
    private boolean ticking;
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
        this.wheel = new ExecutorDrivenWheel(driver, new WheelSettings().ticker(ticker::nanoTime));
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
        return submit(new WheelScheduledTask<Void>(this, command, deadlineAfter(Math.max(0, delay), unit)));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        ObjectUtil.checkNotNull(callable, "callable");
        ObjectUtil.checkNotNull(unit, "unit");
        return submit(new WheelScheduledTask<V>(this, callable, deadlineAfter(Math.max(0, delay), unit)));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        checkPeriodic(command, initialDelay, period, "period", unit);
        return submit(new WheelScheduledTask.Periodic(this, command, deadlineAfter(initialDelay, unit),
                unit.toNanos(period)));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        checkPeriodic(command, initialDelay, delay, "delay", unit);
        return submit(new WheelScheduledTask.Periodic(this, command, deadlineAfter(initialDelay, unit),
                -unit.toNanos(delay)));
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

    private long deadlineAfter(long delay, TimeUnit unit) {
        return ticker().nanoTime() + Math.min(unit.toNanos(delay), MAX_DELAY_NANOS);
    }

    private <V> ScheduledFuture<V> submit(WheelScheduledTask<V> task) {
        if (inEventLoop()) {
            placeOrDefer(task);
        } else {
            // Placed when the loop runs it (WheelScheduledTask.run), as Netty hands tasks over.
            execute(task);
        }
        return task;
    }

    /** Puts {@code task} on the wheel. Loop only. */
    void place(WheelScheduledTask<?> task) {
        wheel.scheduleAt(task.timer, task.deadlineNanos);
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
            place(task);
        }
    }

    private void runTick() {
        ticking = true;
        try {
            driver.tick.run();
        } finally {
            ticking = false;
            WheelScheduledTask<?> task;
            while ((task = deferred.poll()) != null) {
                if (!task.isCancelled()) {
                    place(task);
                }
            }
        }
    }

    /** A schedule or cancel handed over from another thread, now on the loop. */
    void arrived(WheelScheduledTask<?> task) {
        if (task.isCancelled()) {
            unplace(task);
        } else if (!task.timer.isPending() && !task.isDone()) {
            if (task.deadlineNanos - ticker().nanoTime() <= 0) {
                task.fire();
            } else {
                place(task);
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
        wheel.cancel(task.timer);
    }

    // ------------------------------------------------------------ Netty's loop hooks

    @Override
    protected boolean fetchFromScheduledTaskQueue(Queue<Runnable> taskQueue) {
        if (driverDue()) {
            if (!taskQueue.offer(runTick)) {
                return false;
            }
            driver.armed = false;
        }
        return true;
    }

    @Override
    protected boolean hasTasks() {
        return super.hasTasks() || driverDue();
    }

    @Override
    protected long delayNanos(long currentTimeNanos) {
        if (!driverArmed()) {
            return IDLE_WAIT_NANOS;
        }
        return Math.max(0, driver.deadlineNanos - (currentTimeNanos - ticker().initialNanoTime()));
    }

    @Override
    protected long deadlineNanos() {
        return driverArmed() ? driver.deadlineNanos : ticker().nanoTime() + IDLE_WAIT_NANOS;
    }

    @Override
    protected boolean canSuspend(int state) {
        return super.canSuspend(state) && wheel.pendingTimers() == 0;
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
            if (node instanceof WheelScheduledTask<?>.Timer timer) {
                timer.task().cancel(false);
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
