package io.wheelbeat.bench;

import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.function.LongSupplier;

/**
 * Ours on the owner thread: {@link TimerWheel} with one {@link TimerNode} per timer index (made
 * once, as an owner holds its timer), each operation reading the clock once (as a driver's
 * {@code schedule(node, delay)} does); re-arm is {@code scheduleAt} of the pending node.
 */
final class OursAdapter extends OwnerThreadAdapter {

    private final LongSupplier clock;
    private final TimerWheel wheel;
    private final TimerNode[] nodes;

    OursAdapter(int capacity, boolean virtualTime) {
        super(capacity);
        this.clock = clock(virtualTime);
        // Default settings (2^20 ns tick, 4096 slots, arrays grown on demand): what a user gets.
        this.wheel = engine(new WheelSettings(), clock.getAsLong());
        this.nodes = new TimerNode[capacity];
        for (int i = 0; i < capacity; i++) {
            nodes[i] = new Fired();
        }
    }

    /** A timer whose expiry counts one. */
    private final class Fired extends TimerNode {
        @Override
        protected void expire() {
            onFired();
        }
    }

    /**
     * The engine with {@code settings}' tick and slots, starting at
     * {@code startNanos}: what a driver builds from them, without the driver.
     */
    static TimerWheel engine(WheelSettings settings, long startNanos) {
        return new TimerWheel(startNanos, settings.tick().toNanos(), settings.slots());
    }

    @Override
    void schedule(int i, long delayNanos) {
        wheel.scheduleAt(nodes[i], clock.getAsLong() + delayNanos);
    }

    @Override
    void cancel(int i) {
        wheel.cancel(nodes[i]);
    }

    @Override
    void rearm(int i, long delayNanos) {
        wheel.scheduleAt(nodes[i], clock.getAsLong() + delayNanos);
    }

    @Override
    int poll() {
        return wheel.poll(clock.getAsLong());
    }

    @Override
    long untilNextDeadline() {
        return wheel.pendingTimers() == 0 ? -1 : Math.max(0, wheel.nextDeadlineNanos() - clock.getAsLong());
    }

    @Override
    void advanceTime(long nanos) {
        advance(clock, nanos);
    }
}
