package io.wheelbeat.netty.loop;

import io.netty.util.concurrent.BlockingOperationException;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.InternalThreadLocalMap;
import io.netty.util.internal.ObjectUtil;
import io.netty.util.internal.PlatformDependent;
import io.wheelbeat.core.TimerNode;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task scheduled on a {@link WheelIoEventLoop}, in one object: the wheel's timer node, the
 * {@link ScheduledFuture} the caller holds, and the task the loop runs when a schedule or a
 * cancel is handed over from another thread. The contract is Netty's {@code ScheduledFutureTask}
 * and {@code DefaultPromise}: a one-shot task becomes uncancellable as it starts; a periodic one
 * ({@link Periodic}) runs until cancelled, until it throws (the future fails) or until the loop
 * shuts down; listeners are told on the loop, in the order added; {@code await} and {@code sync}
 * block any thread but the loop's ({@link BlockingOperationException}).
 *
 * <h2>One field of state</h2>
 * {@link #state}, changed by compare-and-set, holds the {@link Runnable} or {@link Callable} while
 * pending and no one listens, a {@link Listened} once someone does, and an {@link Outcome} when
 * done; a pending task without listeners carries nothing more.
 *
 * <p>Thread rules: the future's methods, {@link #cancel}, {@link #getDelay} and
 * {@link #compareTo} from any thread; the node and {@link #deadlineNanos} are written on the
 * loop only.
 */
class WheelScheduledTask<V> extends TimerNode implements ScheduledFuture<V>, Runnable {

    private static final Logger log = LoggerFactory.getLogger(WheelScheduledTask.class);
    /** Netty's {@code DefaultPromise} limit on listeners notified in nested calls on the loop. */
    private static final int MAX_LISTENER_STACK_DEPTH = 8;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WheelScheduledTask.class, "state", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** In place of the task once a one-shot task has started: it can no longer be cancelled. */
    private static final Object RUNNING = new Object();
    /** Among the listeners while a thread waits: completion wakes the waiters. */
    private static final Object WAITER = new Object();

    private static final Outcome SUCCESS = new Outcome(null, null);
    /** Cancelled; {@link #cause()} makes the exception on first asking, as Netty's promise does. */
    private static final Outcome CANCELLED = new Outcome(null, null);

    final WheelIoEventLoop loop;
    /** The task, a {@link Listened} or an {@link Outcome}: see the class comment. */
    private volatile Object state;

    WheelScheduledTask(WheelIoEventLoop loop, Object task, long deadlineNanos) {
        this.loop = loop;
        deadline(deadlineNanos);
        this.state = task;
    }

    /** A pending task that someone listens to or waits for. Immutable: a change is a new one. */
    private static final class Listened {
        final Object task;
        final Object[] listeners;

        Listened(Object task, Object[] listeners) {
            this.task = task;
            this.listeners = listeners;
        }
    }

    /** A done task: its value or its cause. */
    private static final class Outcome {
        final Object value;
        final Throwable cause;

        Outcome(Object value, Throwable cause) {
            this.value = value;
            this.cause = cause;
        }
    }

    /** Netty's cancellation cause: no stack trace to fill, it says nothing a trace would. */
    private static final class Cancelled extends CancellationException {
        private static final long serialVersionUID = 1L;

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    private static Object taskOf(Object state) {
        return state instanceof Listened ? ((Listened) state).task : state;
    }

    private static Object[] listenersOf(Object state) {
        return state instanceof Listened ? ((Listened) state).listeners : null;
    }

    private static Object withTask(Object state, Object task) {
        return state instanceof Listened ? new Listened(task, ((Listened) state).listeners) : task;
    }

    // ------------------------------------------------------------ the loop's side

    /** The hand-over of a schedule or a cancel from another thread, now on the loop. */
    @Override
    public final void run() {
        loop.arrived(this);
    }

    /** Its timer is due: the wheel calls this on the loop. */
    @Override
    protected final void expire() {
        loop.due(this);
    }

    /** A reading of the loop's ticker, kept in the node; moved by the loop only, when a periodic task re-arms. */
    final long deadlineNanos() {
        return deadline();
    }

    /** Whether the loop has placed this task on its wheel before: only a periodic task is placed again. */
    boolean placedBefore() {
        return false;
    }

    /** The loop has placed this task on its wheel. */
    void placed() {}

    /** Runs the task as Netty's loop does a due one-shot task: uncancellable from its start. Loop only. */
    void fire() {
        Object current;
        do {
            current = state;
            if (current instanceof Outcome || taskOf(current) == RUNNING) {
                return;
            }
        } while (!STATE.compareAndSet(this, current, withTask(current, RUNNING)));
        Outcome outcome;
        try {
            Object value = call(taskOf(current));
            outcome = value == null ? SUCCESS : new Outcome(value, null);
        } catch (Throwable t) {
            outcome = new Outcome(null, t);
        }
        complete(outcome);
    }

    /** The task of a pending task, or null once it is done (or running, for a one-shot task). */
    final Object pendingTask() {
        Object task = taskOf(state);
        return task instanceof Outcome || task == RUNNING ? null : task;
    }

    static Object call(Object task) throws Exception {
        if (task instanceof Callable) {
            return ((Callable<?>) task).call();
        }
        ((Runnable) task).run();
        return null;
    }

    /** Ends the task with {@code outcome} unless it has ended; tells the waiters and listeners. */
    final boolean complete(Outcome outcome) {
        Object current;
        do {
            current = state;
            if (current instanceof Outcome) {
                return false;
            }
        } while (!STATE.compareAndSet(this, current, outcome));
        Object[] listeners = listenersOf(current);
        if (listeners != null) {
            notifyAll(listeners);
        }
        return true;
    }

    final boolean fail(Throwable cause) {
        return complete(new Outcome(null, cause));
    }

    // ------------------------------------------------------------ Netty's future

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        Object current;
        do {
            current = state;
            if (current instanceof Outcome || taskOf(current) == RUNNING) {
                return false;
            }
        } while (!STATE.compareAndSet(this, current, CANCELLED));
        Object[] listeners = listenersOf(current);
        if (listeners != null) {
            notifyAll(listeners);
        }
        loop.removeCancelled(this);
        return true;
    }

    @Override
    public boolean isCancelled() {
        Object current = state;
        return current == CANCELLED
                || current instanceof Outcome && ((Outcome) current).cause instanceof CancellationException;
    }

    @Override
    public boolean isDone() {
        return state instanceof Outcome;
    }

    @Override
    public boolean isSuccess() {
        Object current = state;
        return current instanceof Outcome && current != CANCELLED && ((Outcome) current).cause == null;
    }

    @Override
    public boolean isCancellable() {
        Object current = state;
        return !(current instanceof Outcome) && taskOf(current) != RUNNING;
    }

    @Override
    public Throwable cause() {
        Object current = state;
        if (current == CANCELLED) {
            Outcome cancelled = new Outcome(null, new Cancelled());
            return STATE.compareAndSet(this, CANCELLED, cancelled) ? cancelled.cause : ((Outcome) state).cause;
        }
        return current instanceof Outcome ? ((Outcome) current).cause : null;
    }

    @Override
    @SuppressWarnings("unchecked")
    public V getNow() {
        Object current = state;
        return current instanceof Outcome ? (V) ((Outcome) current).value : null;
    }

    @Override
    public ScheduledFuture<V> addListener(GenericFutureListener<? extends Future<? super V>> listener) {
        ObjectUtil.checkNotNull(listener, "listener");
        if (!add(listener)) {
            notifyLater(new Object[] {listener});
        }
        return this;
    }

    @Override
    @SafeVarargs
    public final ScheduledFuture<V> addListeners(GenericFutureListener<? extends Future<? super V>>... listeners) {
        ObjectUtil.checkNotNull(listeners, "listeners");
        for (GenericFutureListener<? extends Future<? super V>> listener : listeners) {
            if (listener == null) {
                break;
            }
            addListener(listener);
        }
        return this;
    }

    @Override
    public ScheduledFuture<V> removeListener(GenericFutureListener<? extends Future<? super V>> listener) {
        ObjectUtil.checkNotNull(listener, "listener");
        remove(listener);
        return this;
    }

    @Override
    @SafeVarargs
    public final ScheduledFuture<V> removeListeners(GenericFutureListener<? extends Future<? super V>>... listeners) {
        ObjectUtil.checkNotNull(listeners, "listeners");
        for (GenericFutureListener<? extends Future<? super V>> listener : listeners) {
            if (listener == null) {
                break;
            }
            remove(listener);
        }
        return this;
    }

    /** Adds {@code listener} (or {@link #WAITER}) while the task is pending; false once it is done. */
    private boolean add(Object listener) {
        Object current;
        do {
            current = state;
            if (current instanceof Outcome) {
                return false;
            }
            Object[] listeners = listenersOf(current);
            if (listener == WAITER && indexOf(listeners, WAITER) >= 0) {
                return true;
            }
            Object[] more = listeners == null ? new Object[1] : Arrays.copyOf(listeners, listeners.length + 1);
            more[more.length - 1] = listener;
            if (STATE.compareAndSet(this, current, new Listened(taskOf(current), more))) {
                return true;
            }
        } while (true);
    }

    private void remove(Object listener) {
        Object current;
        do {
            current = state;
            Object[] listeners = listenersOf(current);
            int at = indexOf(listeners, listener);
            if (at < 0) {
                return;
            }
            Object[] fewer = new Object[listeners.length - 1];
            System.arraycopy(listeners, 0, fewer, 0, at);
            System.arraycopy(listeners, at + 1, fewer, at, fewer.length - at);
            Object next = fewer.length == 0 ? taskOf(current) : new Listened(taskOf(current), fewer);
            if (STATE.compareAndSet(this, current, next)) {
                return;
            }
        } while (true);
    }

    /** Where {@code listener} itself is first in {@code listeners}, or -1. */
    private static int indexOf(Object[] listeners, Object listener) {
        if (listeners != null) {
            for (int i = 0; i < listeners.length; i++) {
                if (listeners[i] == listener) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** Wakes the waiters among {@code listeners} at once and tells the others on the loop. */
    private void notifyAll(Object[] listeners) {
        boolean others = false;
        for (Object listener : listeners) {
            if (listener == WAITER) {
                synchronized (this) {
                    notifyAll();
                }
            } else {
                others = true;
            }
        }
        if (others) {
            notifyLater(listeners);
        }
    }

    /** Tells {@code listeners} on the loop: at once if on it (at most 8 deep, as Netty), else through its queue. */
    private void notifyLater(Object[] listeners) {
        if (loop.inEventLoop()) {
            InternalThreadLocalMap threadLocals = InternalThreadLocalMap.get();
            int depth = threadLocals.futureListenerStackDepth();
            if (depth < MAX_LISTENER_STACK_DEPTH) {
                threadLocals.setFutureListenerStackDepth(depth + 1);
                try {
                    notifyNow(listeners);
                } finally {
                    threadLocals.setFutureListenerStackDepth(depth);
                }
                return;
            }
        }
        try {
            loop.execute(() -> notifyNow(listeners));
        } catch (RejectedExecutionException e) {
            log.error("Failed to submit a listener notification task. Event loop shut down?", e);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void notifyNow(Object[] listeners) {
        for (Object listener : listeners) {
            if (listener == WAITER) {
                continue;
            }
            try {
                ((GenericFutureListener) listener).operationComplete(this);
            } catch (Throwable t) {
                log.warn(
                        "An exception was thrown by {}.operationComplete()",
                        listener.getClass().getName(),
                        t);
            }
        }
    }

    @Override
    public ScheduledFuture<V> await() throws InterruptedException {
        await(Long.MAX_VALUE, true);
        return this;
    }

    @Override
    public ScheduledFuture<V> awaitUninterruptibly() {
        awaitNanosUninterruptibly(Long.MAX_VALUE);
        return this;
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        return await(unit.toNanos(timeout), true);
    }

    @Override
    public boolean await(long timeoutMillis) throws InterruptedException {
        return await(TimeUnit.MILLISECONDS.toNanos(timeoutMillis), true);
    }

    @Override
    public boolean awaitUninterruptibly(long timeout, TimeUnit unit) {
        return awaitNanosUninterruptibly(unit.toNanos(timeout));
    }

    @Override
    public boolean awaitUninterruptibly(long timeoutMillis) {
        return awaitNanosUninterruptibly(TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
    }

    private boolean awaitNanosUninterruptibly(long timeoutNanos) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            while (true) {
                try {
                    return await(timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime(), false);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code DefaultPromise.await0}: {@code Long.MAX_VALUE} waits for ever. */
    private boolean await(long timeoutNanos, boolean interruptible) throws InterruptedException {
        if (isDone()) {
            return true;
        }
        if (timeoutNanos <= 0) {
            return isDone();
        }
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException(toString());
        }
        if (loop.inEventLoop()) {
            throw new BlockingOperationException(toString());
        }
        if (!add(WAITER)) {
            return true;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        synchronized (this) {
            while (!isDone()) {
                if (timeoutNanos == Long.MAX_VALUE) {
                    wait();
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return isDone();
                    }
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            }
        }
        return true;
    }

    @Override
    public ScheduledFuture<V> sync() throws InterruptedException {
        await();
        rethrowIfFailed();
        return this;
    }

    @Override
    public ScheduledFuture<V> syncUninterruptibly() {
        awaitUninterruptibly();
        rethrowIfFailed();
        return this;
    }

    /** As {@code DefaultPromise}: the cause itself, marked once as rethrown. */
    private void rethrowIfFailed() {
        Throwable cause = cause();
        if (cause == null) {
            return;
        }
        if (!(cause instanceof CancellationException) && cause.getSuppressed().length == 0) {
            cause.addSuppressed(new CompletionException("Rethrowing promise failure cause", null));
        }
        PlatformDependent.throwException(cause);
    }

    @Override
    public V get() throws InterruptedException, ExecutionException {
        await();
        return outcome();
    }

    @Override
    public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
        if (!await(timeout, unit)) {
            throw new TimeoutException();
        }
        return outcome();
    }

    private V outcome() throws ExecutionException {
        Throwable cause = cause();
        if (cause == null) {
            return getNow();
        }
        if (cause instanceof CancellationException) {
            throw (CancellationException) cause;
        }
        throw new ExecutionException(cause);
    }

    @Override
    public long getDelay(TimeUnit unit) {
        return unit.convert(Math.max(0, deadline() - loop.ticker().nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * Netty's order: by deadline, then by the order the loop received the tasks. Another kind of
     * {@link Delayed} compares by {@link #getDelay}.
     */
    @Override
    public int compareTo(Delayed other) {
        if (this == other) {
            return 0;
        }
        if (!(other instanceof WheelScheduledTask)) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
        WheelScheduledTask<?> that = (WheelScheduledTask<?>) other;
        long difference = deadline() - that.deadline();
        if (difference != 0) {
            return difference < 0 ? -1 : 1;
        }
        return order() - that.order() < 0 ? -1 : 1;
    }

    @Override
    public String toString() {
        Object current = state;
        String status = current == CANCELLED
                ? "cancelled"
                : current instanceof Outcome
                        ? (((Outcome) current).cause != null
                                ? "failure: " + ((Outcome) current).cause
                                : "success: " + getNow())
                        : "incomplete";
        return getClass().getSimpleName() + '@' + Integer.toHexString(hashCode()) + '(' + status + ", deadline "
                + deadline() + ')';
    }

    /**
     * A periodic task: at a fixed rate ({@code periodNanos > 0}) or with a fixed delay
     * ({@code periodNanos < 0}), as Netty's; it stays cancellable while it runs.
     */
    static final class Periodic extends WheelScheduledTask<Void> {
        private final long periodNanos;
        private boolean placed;

        Periodic(WheelIoEventLoop loop, Runnable task, long deadlineNanos, long periodNanos) {
            super(loop, task, deadlineNanos);
            this.periodNanos = periodNanos;
        }

        @Override
        boolean placedBefore() {
            return placed;
        }

        @Override
        void placed() {
            placed = true;
        }

        @Override
        void fire() {
            Object task = pendingTask();
            if (task == null) {
                return;
            }
            try {
                call(task);
            } catch (Throwable t) {
                fail(t);
                return;
            }
            if (!loop.isShutdown()) {
                deadline(
                        periodNanos > 0
                                ? deadline() + periodNanos
                                : loop.ticker().nanoTime() - periodNanos);
                if (!isCancelled()) {
                    loop.placeOrDefer(this);
                }
            }
        }
    }
}
