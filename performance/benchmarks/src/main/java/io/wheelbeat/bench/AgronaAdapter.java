package io.wheelbeat.bench;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.agrona.DeadlineTimerWheel;

/**
 * Agrona's {@link DeadlineTimerWheel}: 2^20 ns ticks, 4096 ticks per wheel, default initial
 * allocation per tick. Single threaded, driven by the caller like ours.
 *
 * <p>Agrona names a timer by its place in the wheel (tick and index), and reuses that place, and
 * so that id, as soon as the timer fires or is cancelled. A caller who re-arms must therefore know
 * which of its timers fired, or it would cancel a stranger: this adapter keeps a mirror of the
 * wheel's layout (place to handle index), the cheapest such bookkeeping, updated with one store
 * per schedule. Re-arm is cancel plus schedule: Agrona has no move.
 */
final class AgronaAdapter extends OwnerThreadAdapter {

    private static final long NONE = -1L;

    private final LongSupplier clock;
    private final DeadlineTimerWheel wheel;
    private final long[] ids;
    /** Per tick of the wheel: the handle index of the timer at each place of that tick. */
    private final int[][] handleAt = new int[WHEEL_TICKS][16];

    private final DeadlineTimerWheel.TimerHandler onExpiry = this::expired;

    AgronaAdapter(int capacity, boolean virtualTime) {
        super(capacity);
        this.clock = clock(virtualTime);
        this.wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, clock.getAsLong(), TICK_NANOS, WHEEL_TICKS);
        this.ids = new long[capacity];
        Arrays.fill(ids, NONE);
    }

    @Override
    void schedule(int i, long delayNanos) {
        long id = wheel.scheduleTimer(clock.getAsLong() + delayNanos);
        ids[i] = id;
        int tick = (int) (id >>> 32);
        int place = (int) id;
        int[] row = handleAt[tick];
        if (place >= row.length) {
            row = Arrays.copyOf(row, Math.max(2 * row.length, place + 1));
            handleAt[tick] = row;
        }
        row[place] = i;
    }

    @Override
    void cancel(int i) {
        long id = ids[i];
        if (id != NONE) {
            wheel.cancelTimer(id);
            ids[i] = NONE;
        }
    }

    @Override
    int poll() {
        // Agrona's poll handles one tick per call: call it until the wheel has caught up with now.
        long now = clock.getAsLong();
        int fired = 0;
        do {
            fired += wheel.poll(now, onExpiry, Integer.MAX_VALUE);
        } while (now >= wheel.currentTickTime());
        return fired;
    }

    @Override
    void advanceTime(long nanos) {
        advance(clock, nanos);
    }

    @Override
    public void close() {
        wheel.clear();
    }

    private boolean expired(TimeUnit unit, long now, long timerId) {
        ids[handleAt[(int) (timerId >>> 32)][(int) timerId]] = NONE;
        onFired();
        return true;
    }
}
