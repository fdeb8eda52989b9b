package io.wheelbeat.netty.internal;

import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock an event loop runs its scheduled tasks on, as a {@link LongSupplier}: the clock that the
 * loop's wheel and the handlers on it read, so that a task scheduled {@code d} nanoseconds ahead
 * runs when the ticker has moved {@code d} (under {@code EmbeddedChannel}, its virtual time, moved
 * by {@code advanceTimeBy}).
 *
 * <ul>
 *   <li>Netty 4.2: the loop's {@code ticker()}.
 *   <li>Netty 4.1 has no public clock per loop: {@link AbstractScheduledEventExecutor} keeps it in
 *       the protected {@code getCurrentTimeNanos()}. A loop that overrides it ({@code
 *       EmbeddedEventLoop}, for its virtual time) is read through it; every other loop, and any
 *       executor when the JVM refuses that access (Netty as a named module that does not open
 *       {@code io.netty.util.concurrent}), reads {@code System.nanoTime()}, as the
 *       {@code getCurrentTimeNanos()} of Netty's own loops does (up to a constant) and as Netty 4.1's
 *       {@code IdleStateHandler} does.
 * </ul>
 * Which of these applies is found once, when this class loads; {@link #of} makes a loop's ticker
 * once, and a reading is a plain call through a constant method handle, no reflection.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class LoopClocks {

    private static final Logger log = LoggerFactory.getLogger(LoopClocks.class);

    /** Netty 4.2: {@code (EventExecutor) -> Object}, the loop's {@code io.netty.util.concurrent.Ticker}; else null. */
    private static final MethodHandle LOOP_TICKER;
    /** Netty 4.2: {@code (Object) -> long}, that ticker's {@code nanoTime()}; else null. */
    private static final MethodHandle TICKER_NANO_TIME;
    /** Netty 4.1: {@code (AbstractScheduledEventExecutor) -> long}, its {@code getCurrentTimeNanos()}; else null. */
    private static final MethodHandle LOOP_CURRENT_TIME;
    /** Netty 4.2: the one adapter of {@code Ticker.systemTicker()}, the clock of every loop but EmbeddedChannel's. */
    private static final OfNettyTicker SYSTEM_TICKER;

    static {
        MethodHandle loopTicker = null;
        MethodHandle tickerNanoTime = null;
        MethodHandle loopCurrentTime = null;
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Class<?> nettyTicker = nettyTickerClass();
        if (nettyTicker != null) {
            try {
                loopTicker = lookup.findVirtual(EventExecutor.class, "ticker", MethodType.methodType(nettyTicker))
                        .asType(MethodType.methodType(Object.class, EventExecutor.class));
                tickerNanoTime = lookup.findVirtual(nettyTicker, "nanoTime", MethodType.methodType(long.class))
                        .asType(MethodType.methodType(long.class, Object.class));
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e); // io.netty.util.concurrent.Ticker without its methods
            }
        } else {
            try {
                loopCurrentTime = MethodHandles.privateLookupIn(AbstractScheduledEventExecutor.class, lookup)
                        .findVirtual(
                                AbstractScheduledEventExecutor.class,
                                "getCurrentTimeNanos",
                                MethodType.methodType(long.class));
            } catch (ReflectiveOperationException | RuntimeException e) {
                log.info(
                        "Netty 4.1 without access to AbstractScheduledEventExecutor.getCurrentTimeNanos() ({});"
                                + " the wheels read System.nanoTime(), which EmbeddedChannel's virtual time does not"
                                + " move",
                        e.toString());
            }
        }
        LOOP_TICKER = loopTicker;
        TICKER_NANO_TIME = tickerNanoTime;
        LOOP_CURRENT_TIME = loopCurrentTime;
        SYSTEM_TICKER = nettyTicker == null ? null : new OfNettyTicker(nettySystemTicker(nettyTicker));
    }

    private LoopClocks() {}

    /** Whether Netty is 4.2 or later, whose executors have {@code ticker()}. */
    public static boolean nettyHasTickers() {
        return LOOP_TICKER != null;
    }

    /**
     * The ticker of each loop, made once: every handler on a loop shares it. A ticker never holds
     * its loop strongly (see the two kinds below), so the weak keys can go.
     */
    private static final Map<EventExecutor, LongSupplier> TICKERS = new WeakHashMap<>();

    /** Netty 4.1: the clock of every loop that does not override {@code getCurrentTimeNanos()}. */
    private static final LongSupplier SYSTEM_NANO_TIME = System::nanoTime;

    /** Returns the clock of {@code loop}, made on the first call for that loop. */
    public static LongSupplier of(EventExecutor loop) {
        Objects.requireNonNull(loop, "loop");
        synchronized (TICKERS) {
            return TICKERS.computeIfAbsent(loop, LoopClocks::newTicker);
        }
    }

    private static LongSupplier newTicker(EventExecutor loop) {
        if (LOOP_TICKER != null) {
            try {
                Object ticker = LOOP_TICKER.invokeExact(loop);
                return ticker == SYSTEM_TICKER.ticker ? SYSTEM_TICKER : new OfNettyTicker(ticker);
            } catch (Throwable e) {
                throw new IllegalStateException("cannot read the ticker of " + loop, e);
            }
        }
        if (LOOP_CURRENT_TIME != null
                && loop instanceof AbstractScheduledEventExecutor scheduled
                && overridesCurrentTime(loop.getClass())) {
            return new OfLoopCurrentTime(scheduled);
        }
        return SYSTEM_NANO_TIME;
    }

    /**
     * Whether {@code a} and {@code b} run on one clock, so that a reading of one's is a reading of
     * the other's: Netty's loops but {@code EmbeddedChannel}'s do.
     */
    public static boolean sameClock(EventExecutor a, EventExecutor b) {
        if (LOOP_TICKER == null) {
            return of(a) == of(b);
        }
        try {
            return (Object) LOOP_TICKER.invokeExact(a) == (Object) LOOP_TICKER.invokeExact(b);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e); // the method declares no checked exception
        }
    }

    private static boolean overridesCurrentTime(Class<?> type) {
        for (Class<?> c = type; c != AbstractScheduledEventExecutor.class; c = c.getSuperclass()) {
            try {
                c.getDeclaredMethod("getCurrentTimeNanos");
                return true;
            } catch (NoSuchMethodException e) {
                // not here: look in the superclass
            }
        }
        return false;
    }

    /**
     * Reads the clock of {@code loop} as {@link #of} does, without looking it up; Netty 4.2 only
     * ({@link #nettyHasTickers()}): for the handlers, which read it on every read batch.
     */
    public static long nanoTime(EventExecutor loop) {
        try {
            return (long) TICKER_NANO_TIME.invokeExact((Object) LOOP_TICKER.invokeExact(loop));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e); // the methods declare no checked exception
        }
    }

    private static Object nettySystemTicker(Class<?> nettyTicker) {
        try {
            return MethodHandles.publicLookup()
                    .findStatic(nettyTicker, "systemTicker", MethodType.methodType(nettyTicker))
                    .invoke();
        } catch (Throwable e) {
            throw new ExceptionInInitializerError(e); // Netty 4.2's Ticker without systemTicker()
        }
    }

    private static Class<?> nettyTickerClass() {
        try {
            return Class.forName("io.netty.util.concurrent.Ticker", false, EventExecutor.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return null; // Netty 4.1
        }
    }

    /** Netty 4.2: the loop's own ticker (which does not refer to the loop). */
    private static final class OfNettyTicker implements LongSupplier {
        private final Object ticker;

        OfNettyTicker(Object ticker) {
            this.ticker = ticker;
        }

        @Override
        public long getAsLong() {
            try {
                return (long) TICKER_NANO_TIME.invokeExact(ticker);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e); // the method declares no checked exception
            }
        }
    }

    /**
     * Netty 4.1: the loop's {@code getCurrentTimeNanos()}. Holds the loop weakly, so that maps keyed
     * weakly by the loop (the wheels) can let it go; once it is gone nobody schedules on it, and
     * the reading falls back to {@code System.nanoTime()}.
     */
    private static final class OfLoopCurrentTime implements LongSupplier {
        private final WeakReference<AbstractScheduledEventExecutor> loop;

        OfLoopCurrentTime(AbstractScheduledEventExecutor loop) {
            this.loop = new WeakReference<>(loop);
        }

        @Override
        public long getAsLong() {
            AbstractScheduledEventExecutor executor = loop.get();
            if (executor == null) {
                return System.nanoTime();
            }
            try {
                return (long) LOOP_CURRENT_TIME.invokeExact(executor);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e); // the method declares no checked exception
            }
        }
    }
}
